"""The scenario corpus: variant hosts whose expected facts were written before they ran.

Each variant is built from a bundled example by realistic changes (tests/scenarios/README.md)
and run through the real catalog pipeline; every stated expectation must hold.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .scenarios import runner

NAMES = runner.names()
KNOWN_WRONG_FILE = runner.HERE / "known_wrong.txt"


def known_wrong() -> dict[str, str]:
    """Variants agentkit answers wrongly today (known_wrong.txt: name, then what is wrong)."""
    listed: dict[str, str] = {}
    for line in KNOWN_WRONG_FILE.read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            name, _, why = line.strip().partition(" ")
            listed[name] = why.strip()
    return listed


KNOWN_WRONG = known_wrong()


@pytest.mark.parametrize("name", NAMES)
def test_variant(name: str, tmp_path: Path) -> None:
    problems = runner.check(runner.load(name), tmp_path)
    if name in KNOWN_WRONG:  # a ratchet: skipped while wrong, a failure once it passes
        assert problems, (f"{name} passes now: delete its line from "
                          f"tests/scenarios/known_wrong.txt")
        pytest.skip(f"known wrong: {KNOWN_WRONG[name]} ({'; '.join(problems)})")
    assert not problems, f"{name}:\n  " + "\n  ".join(problems)


def test_known_wrong_names_are_variants() -> None:
    assert set(KNOWN_WRONG) <= set(NAMES), sorted(set(KNOWN_WRONG) - set(NAMES))
    assert all(KNOWN_WRONG.values()), "every listed variant says what is wrong"


def test_corpus_size_and_authorship() -> None:
    specs = [runner.load(n).spec for n in NAMES]
    assert len(specs) >= 30
    authors = {s.get("author") for s in specs}
    assert {"helper", "dev"} <= authors, authors
    assert all(s.get("why") and s.get("expect") for s in specs)


def test_readme_lists_every_variant() -> None:
    text = (runner.HERE / "README.md").read_text()
    listed = set(re.findall(r"^- `([\w.-]+)`", text, flags=re.M))
    assert listed == set(NAMES), (sorted(set(NAMES) - listed), sorted(listed - set(NAMES)))
