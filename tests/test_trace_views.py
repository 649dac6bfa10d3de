"""What `trace show`, the HTML report and the live view say about a run: a run that finished
without establishing anything says so (it said "ok"), a summary uses the screen's width (it
was cut at 80 characters on any screen), and the live view shows planning before the plan."""

from __future__ import annotations

import io
from pathlib import Path

import anyio
from rich.console import Console

from agentkit import Host, Orchestrator, Trace
from agentkit._trace._read import read_trace
from agentkit._trace._report import render_report
from agentkit._trace._show import render_show
from agentkit.cli._live import LiveProgress

from .conftest import EXAMPLES


def _run(root: Path, question: str, trace: Path) -> None:
    t = Trace(str(trace))
    orch = Orchestrator.catalog(Host.at(root), trace=t)
    anyio.run(orch.investigate, question)
    t.close()


def _show(trace: Path, width: int) -> str:
    buf = io.StringIO()
    render_show(read_trace(str(trace)), Console(file=buf, width=width, color_system=None))
    return buf.getvalue()


def test_a_run_that_established_nothing_does_not_say_ok(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    _run(empty, "Is NCCL tuned?", tmp_path / "t.jsonl")
    shown = _show(tmp_path / "t.jsonl", 150)
    head = shown.splitlines()[1]
    assert "finished, nothing established" in head and " ok " not in head
    assert "finished, nothing established" in render_report(read_trace(str(tmp_path / "t.jsonl")))
    _run(EXAMPLES / "hopper-deepseek", "Is NCCL tuned?", tmp_path / "ok.jsonl")
    assert "finished, answered" in _show(tmp_path / "ok.jsonl", 150).splitlines()[1]


def test_a_summary_uses_the_screen_s_width(tmp_path: Path) -> None:
    _run(EXAMPLES / "hopper-deepseek", "Is NCCL tuned?", tmp_path / "t.jsonl")
    tf = read_trace(str(tmp_path / "t.jsonl"))
    from agentkit._trace._timeline import build

    longest = max((r.summary for r in build(tf).rows), key=len)
    assert len(longest) > 100
    wide = " ".join(_show(tmp_path / "t.jsonl", 250).split())
    assert longest[:200] in wide  # not cut at 80 characters


def test_at_80_columns_the_summary_column_keeps_room(tmp_path: Path) -> None:
    # issue 25 item 8: with six fixed columns the summary was squeezed to nothing at 80
    _run(EXAMPLES / "blackwell-kimi", "Is NCCL tuned?", tmp_path / "t.jsonl")
    shown = _show(tmp_path / "t.jsonl", 80)
    table = shown.split("Tasks", 1)[1].split("start, took: seconds", 1)[0]
    header = next(line for line in table.splitlines() if line.strip().startswith("task"))
    assert header.rstrip().endswith("summary"), header
    at = header.index("summary")
    assert 80 - at >= 20, header  # room for words, not one character per line
    assert all(len(line) <= 80 for line in table.splitlines())
    words = " ".join(line[at:].strip() for line in table.splitlines())
    assert "NCCL" in words


def test_the_live_view_says_planning_before_the_plan() -> None:
    buf = io.StringIO()
    console = Console(file=buf, width=100, color_system=None)
    live = LiveProgress(console)
    console.print(live)
    assert "planning" in buf.getvalue()
    live({"kind": "plan", "phase": "end", "task": None,
          "data": {"mode": "catalog", "tasks": [{"id": "a", "title": "A"}]}})
    console.print(live)
    assert "catalog mode · 0/1 tasks done" in buf.getvalue()
