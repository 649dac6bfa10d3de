"""Work a model chooses is bounded: its regular expressions run in linear time.

Expected from the engines' semantics: Python's ``re`` backtracks, so ``(a+)+$`` against
``a…ab`` takes time exponential in the run of a's (about 2^n steps; 30 a's is minutes);
RE2 compiles to an automaton and answers in time linear in the text.
"""

from __future__ import annotations

import time
from pathlib import Path

import anyio

from agentkit import Host, Sandbox
from agentkit._sandbox._paths import Root


def test_a_catastrophic_pattern_answers_at_once(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("a" * 5000 + "b\n" + ("a" * 40 + "!\n") * 2000)
    box = Sandbox(Host(root=Root("/", allow=(str(tmp_path),))), task_id="t")
    start = time.monotonic()
    for pattern in ("(a+)+$", "(a|aa)+$", "(a*)*b$", "(.*a){20}"):
        r = anyio.run(box.call, "grep", {"pattern": pattern, "path": str(tmp_path)})
        assert r.ok, r.error
    assert time.monotonic() - start < 5  # backtracking would take longer than the universe


def test_constructs_re2_lacks_are_a_one_line_refusal(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("abab\n")
    box = Sandbox(Host(root=Root("/", allow=(str(tmp_path),))), task_id="t")
    for pattern in (r"(ab)\1", r"a(?=b)", r"(?<!x)a"):
        r = anyio.run(box.call, "grep", {"pattern": pattern, "path": str(tmp_path)})
        assert not r.ok and "RE2" in r.error and "\n" not in r.error


def test_case_folding_and_plain_patterns_still_match(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("NCCL_P2P_LEVEL=NVL\nother\n")
    box = Sandbox(Host(root=Root("/", allow=(str(tmp_path),))), task_id="t")
    r = anyio.run(box.call, "grep", {"pattern": "nccl_\\w+=nvl", "path": str(tmp_path),
                                     "ignore_case": True})
    assert r.ok and [m["line"] for m in r.data["matches"]] == [1]


def test_redaction_is_not_cubic_in_blank_lines() -> None:
    # red team round 2: (?m)^\s* ran across blank lines, each of n line starts trying n
    # lines; 1,024 blank lines after a key took 34-40 s, and redaction holds the GIL (every
    # subagent froze). 20,000 would have taken days; linear, it is milliseconds.
    from agentkit._sandbox._redact import redact

    for text in ("password: x\n" + "\n" * 20_000 + "y", "key\n" + "\n" * 20_000,
                 "machine h\n" + "\n" * 20_000 + "password p\n"):
        t0 = time.process_time()
        out = redact(text)
        assert time.process_time() - t0 < 10, text[:12]
        assert out.count("\n") == text.count("\n")
