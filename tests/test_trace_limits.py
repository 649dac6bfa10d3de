"""Crafted traces (docs/trace-format.md, "Limits"): each one is exit 2 from `replay`,
`trace show` and `report`, with one line naming the file and the line, within seconds; never
a traceback, a hang or unbounded memory. And host text in a trace never drives the terminal."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from agentkit._trace._read import MAX_LINE_BYTES, TraceError, read_trace
from agentkit._trace._show import render_show
from agentkit.cli import main

from .conftest import EXAMPLES

TRACE = EXAMPLES / "traces" / "hopper-deepseek.jsonl"
LINES = TRACE.read_text().splitlines()
EVENTS = [json.loads(x) for x in LINES]


def _at(kind: str, phase: str) -> int:
    return next(i for i, e in enumerate(EVENTS) if e["kind"] == kind and e["phase"] == phase)


def _edit(where: int, fn: Callable[[dict[str, Any]], Any]) -> list[str]:
    event = json.loads(LINES[where])
    fn(event)
    return [*LINES[:where], json.dumps(event), *LINES[where + 1:]]


def _replace(where: int, text: str) -> list[str]:
    return [*LINES[:where], text, *LINES[where + 1:]]


RUN, TOOL_END, TASK_END = _at("run", "start"), _at("tool", "end"), _at("task", "end")
SYNTH, LLM = _at("synthesize", "end"), _at("task", "start")

# name: (lines of the crafted trace, the line the error names, words of the message)
CRAFTED: dict[str, tuple[list[str], int, str]] = {
    "200k-deep JSON": (_replace(1, "[" * 200_000), 2, "nested deeper than 128 levels"),
    "129-deep JSON": (_replace(1, "[" * 129 + "]" * 129), 2, "nested deeper than 128"),
    "NaN timestamp": (_replace(1, LINES[1].replace('"ts":', '"ts":NaN,"x":', 1)), 2,
                      "NaN is not a JSON number"),
    "Infinity": (_edit(TOOL_END, lambda e: e["data"].update(x=float("inf"))), TOOL_END + 1,
                 "Infinity is not a JSON number"),
    "1e400": (_replace(TOOL_END, LINES[TOOL_END].replace('"index":', '"x":1e400,"index":')),
              TOOL_END + 1, "number inf is out of range"),
    "timestamp 1e15": (_edit(len(LINES) - 1, lambda e: e.update(ts=1e15)), len(LINES),
                       "ts: Input should be less than or equal to"),
    "negative timestamp": (_edit(RUN, lambda e: e.update(ts=-1)), RUN + 1, "ts: "),
    "5000-digit integer": (_replace(1, LINES[1].replace('"seq":1', '"seq":' + "9" * 5000)),
                           2, "is out of range"),
    "integer past 2^63": (_edit(TOOL_END, lambda e: e["data"].update(n=2**63)), TOOL_END + 1,
                          "is out of range"),
    "line over the limit": (_replace(2, '{"v": 2, "pad": "' + "a" * MAX_LINE_BYTES + '"}'), 3,
                            "line is longer than 16 MiB"),
    "index a string": (_edit(TOOL_END, lambda e: e["data"].update(index="1")), TOOL_END + 1,
                       "tool end event: data.index: Input should be a valid integer"),
    "ok a string": (_edit(TOOL_END, lambda e: e["data"].update(ok="yes")), TOOL_END + 1,
                    "data.ok"),
    "evidence not a list": (_edit(TOOL_END, lambda e: e["data"].update(evidence={})),
                            TOOL_END + 1, "data.evidence"),
    "result a string": (_edit(TASK_END, lambda e: e["data"].update(result="ok")), TASK_END + 1,
                        "task end event: data.result"),
    "answer without claims": (_edit(SYNTH, lambda e: e["data"]["answer"].pop("bottom_line")),
                              SYNTH + 1, "data.answer.bottom_line: Field required"),
    "question a number": (_edit(RUN, lambda e: e["data"].update(question=7)), RUN + 1,
                          "data.question"),
    "title a list": (_edit(LLM, lambda e: e["data"].update(title=[])), LLM + 1, "data.title"),
}


def _write(tmp: Path, lines: list[str]) -> Path:
    path = tmp / "crafted.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("name", sorted(CRAFTED))
@pytest.mark.parametrize("command", ["replay", "show", "report"])
def test_a_crafted_trace_is_exit_2_naming_its_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, command: str) -> None:
    lines, line, words = CRAFTED[name]
    path = str(_write(tmp_path, lines))
    argv = {"replay": ["replay", path], "show": ["trace", "show", path],
            "report": ["report", path, "-o", str(tmp_path / "r.html")]}[command]
    started = time.monotonic()
    assert main(argv) == 2
    assert time.monotonic() - started < 10
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"agentkit: {path}: line {line}: ") and words in err, err
    assert len(err.splitlines()) == 1


def test_the_untouched_example_reads() -> None:
    # the crafted traces above differ from a trace that reads only in what they name
    assert read_trace(TRACE).complete


def test_deep_nesting_in_a_fresh_interpreter(tmp_path: Path) -> None:
    # a RecursionError depends on the stack the process has left; the CLI from scratch
    lines, line, words = CRAFTED["200k-deep JSON"]
    path = _write(tmp_path, lines)
    for argv in (["replay", str(path)], ["trace", "show", str(path)]):
        out = subprocess.run([sys.executable, "-m", "agentkit", *argv], capture_output=True,
                             text=True, timeout=60)
        assert out.returncode == 2 and "Traceback" not in out.stderr
        assert out.stderr.strip() == f"agentkit: {path}: line {line}: {words}"


def test_a_two_year_timeline_makes_a_small_report(tmp_path: Path) -> None:
    lines = _edit(len(LINES) - 1, lambda e: e.update(ts=e["ts"] + 2 * 365 * 86400))
    out = tmp_path / "r.html"
    assert main(["report", str(_write(tmp_path, lines)), "-o", str(out)]) == 0
    assert out.stat().st_size < 2 * TRACE.stat().st_size


def test_trace_show_escapes_markup_and_control_characters(tmp_path: Path) -> None:
    evil = "[link=file:///etc/shadow]click[/link] \x1b]8;;http://x\x07 \x1b[2J \u202e"
    lines = _edit(RUN, lambda e: e["data"].update(question=evil, root=evil))
    buf = io.StringIO()
    render_show(read_trace(_write(tmp_path, lines)),
                Console(file=buf, width=200, force_terminal=True, color_system="standard",
                        highlight=False))
    shown = buf.getvalue()
    assert "[link=file:///etc/shadow]click[/link]" in shown  # as text, not a hyperlink
    assert "\x1b]8" not in shown and "\x1b[2J" not in shown and "\u202e" not in shown
    assert "\\x1b]8;;http://x\\x07" in shown and "\\x1b[2J" in shown and "\\u202e" in shown


def test_trace_show_cuts_a_long_text(tmp_path: Path) -> None:
    lines = _edit(RUN, lambda e: e["data"].update(question="q" * 1_000_000))
    buf = io.StringIO()
    started = time.monotonic()
    render_show(read_trace(_write(tmp_path, lines)), Console(file=buf, width=120))
    assert time.monotonic() - started < 10
    assert "(998000 more characters)" in buf.getvalue()


def test_markdown_answers_show_control_characters_as_escapes() -> None:
    # `ask` and `replay` print the answer's Markdown on the terminal: host text in it must not
    # clear the screen or make links, in code spans either
    from agentkit._render import md_escape

    assert md_escape("x\x1b[2J `y\x1b]8;;u\x07` \u202e") == \
        "x\\\\x1b\\[2J `y\\x1b]8;;u\\x07` \\\\u202e"


def test_an_error_quoting_a_crafted_key_stays_one_inert_line(tmp_path: Path) -> None:
    # found by the fuzzer: a key "\n" in a task result put a newline in the error
    lines = _edit(TASK_END, lambda e: e["data"]["result"].update(facts={"\n\x1b[2J": 1}))
    path = _write(tmp_path, lines)
    with pytest.raises(TraceError) as exc:
        read_trace(path)
    assert str(exc.value) == (f"{path}: line {TASK_END + 1}: task end event: data.result.facts."
                              "\\n\\x1b[2J: Input should be a valid dictionary or instance "
                              "of Fact")
