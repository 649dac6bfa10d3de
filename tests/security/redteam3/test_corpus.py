"""The third red team's corpus as a ratchet over ``known_open.txt``: an attempt that is not
listed there must pass (no leak, no over-redaction); a listed one that passes is reported,
to be taken off the list. Run ``python -m tests.security.redteam3.test_corpus`` to print the
table by category."""

from __future__ import annotations

import collections
from pathlib import Path
from typing import Any

from . import cases, cases2, cases_over  # noqa: F401  (they fill harness.CASES)
from .harness import evaluate

KNOWN = Path(__file__).with_name("known_open.txt")


def _key(r: dict[str, Any]) -> str:
    return f"{r['cat']} | {r['kind']} | {r['label']}"


def known_open() -> set[str]:
    return {line.strip() for line in KNOWN.read_text().splitlines()
            if line.strip() and not line.startswith("#")}


def test_no_attempt_fails_that_is_not_known_open() -> None:
    results = evaluate()
    failing = {_key(r) for r in results if r["bad"]}
    known = known_open()
    new = sorted(failing - known)
    fixed = sorted(known - failing)
    if fixed:
        print("fixed (take off known_open.txt):\n  " + "\n  ".join(fixed))
    assert not new, "new failures:\n" + "\n".join(
        f"{k}\n    in : {r['inp']!r}\n    out: {r['out']!r}"
        for k in new for r in results if _key(r) == k)
    assert len(results) >= 700  # the corpus is all there


def table() -> str:
    by: dict[tuple[str, str], list[int]] = collections.defaultdict(lambda: [0, 0])
    for r in evaluate():
        by[(r["cat"], r["kind"])][0] += 1
        by[(r["cat"], r["kind"])][1] += bool(r["bad"])
    rows = [f"| {c} | {k} | {n} | {b} |" for (c, k), (n, b) in sorted(by.items())]
    total = [sum(v[0] for v in by.values()), sum(v[1] for v in by.values())]
    return "\n".join(["| category | kind | tried | failed |", "|---|---|---:|---:|", *rows,
                      f"| **total** | | **{total[0]}** | **{total[1]}** |"])


if __name__ == "__main__":
    print(table())
