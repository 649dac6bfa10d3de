"""Embedding that cannot hurt the caller (issue 24, item 8): leaving ``orch.stream(q)`` at any
event, by ``break``, an exception or a cancellation, under asyncio and trio, in either spelling
(``async with orch.stream(q) as events`` or a plain ``async for``), cancels nothing of the
caller's; the run's spans all end (those cut as cancelled), the trace file and the HTTP session
are closed with the orchestrator; ``agentkit replay`` of a trace without an answer exits non-zero;
and the README's embedding snippet runs as written."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from agentkit import Host, Orchestrator, Trace
from agentkit.testing import FakeLLMServer

from .conftest import EXAMPLES, REPO
from .llm_script import llm_orchestrator, stalling_script

QUESTION = "Is NCCL tuned? Would an FP8 KV cache help?"
BACKENDS = ["asyncio", "trio"]


def events_of(trace: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in trace.read_text().splitlines()]


def all_spans_ended(trace: Path) -> list[dict[str, Any]]:
    evs = events_of(trace)
    starts = {e["span"] for e in evs if e["phase"] == "start"}
    ends = {e["span"] for e in evs if e["phase"] == "end"}
    assert starts == ends, starts - ends
    assert evs[-1]["kind"] == "run" and evs[-1]["phase"] == "end"
    return evs


def catalog(trace: Path) -> Orchestrator:
    return Orchestrator.catalog(Host.at(EXAMPLES / "hopper-deepseek"), trace=Trace(str(trace)))


def total_events(tmp_path: Path) -> int:
    async def go() -> int:
        async with catalog(tmp_path / "all.jsonl") as orch:
            async with orch.stream(QUESTION) as events:
                return len([e async for e in events])

    return anyio.run(go)


async def leave_at(orch: Orchestrator, stop: int, spelling: str) -> str:
    """Break out at event ``stop``; the caller's own work after it must still run."""
    if spelling == "with":
        async with orch.stream(QUESTION) as events:
            i = 0
            async for _ in events:
                if i == stop:
                    break
                i += 1
    else:
        i = 0
        async for _ in orch.stream(QUESTION):
            if i == stop:
                break
            i += 1
    await anyio.sleep(0.01)  # a cancellation aimed at the caller would land here
    return "caller went on"


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("spelling", ["with", "plain"])
def test_break_at_every_event_index(tmp_path: Path, backend: str, spelling: str) -> None:
    total = total_events(tmp_path)
    assert total > 5
    for stop in range(total):
        trace = tmp_path / f"{spelling}-{stop}.jsonl"

        async def go(stop: int = stop, trace: Path = trace) -> tuple[str, Orchestrator]:
            async with catalog(trace) as orch:
                went_on = await leave_at(orch, stop, spelling)
            return went_on, orch

        went_on, orch = anyio.run(go, backend=backend)
        assert went_on == "caller went on"
        assert orch.trace._file is not None and orch.trace._file.closed
        all_spans_ended(trace)


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_exception_in_the_loop_is_the_caller_s_own(tmp_path: Path, backend: str) -> None:
    trace = tmp_path / "t.jsonl"

    async def go() -> None:
        async with catalog(trace) as orch, orch.stream(QUESTION) as events:
            async for event in events:
                if event.kind == "task_started":
                    raise LookupError("mine")

    with pytest.raises(LookupError, match="mine"):
        anyio.run(go, backend=backend)
    assert all_spans_ended(trace)[-1]["data"]["status"] == "cancelled"


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("spelling", ["with", "plain"])
def test_cancelling_the_consumer_cancels_only_what_it_scoped(tmp_path: Path, backend: str,
                                                             spelling: str) -> None:
    trace = tmp_path / "t.jsonl"

    async def go() -> str:
        async with catalog(trace) as orch:
            with anyio.CancelScope() as scope:
                if spelling == "with":
                    async with orch.stream(QUESTION) as events:
                        async for _ in events:
                            scope.cancel()
                else:
                    async for _ in orch.stream(QUESTION):
                        scope.cancel()
            await anyio.sleep(0.01)
            return "caller went on"

    assert anyio.run(go, backend=backend) == "caller went on"
    all_spans_ended(trace)


@pytest.mark.parametrize("backend", BACKENDS)
def test_leaving_an_llm_run_ends_its_model_calls_as_cancelled(tmp_path: Path,
                                                              backend: str) -> None:
    root = EXAMPLES / "blackwell-kimi"
    trace = tmp_path / "t.jsonl"
    with FakeLLMServer(stalling_script(["a", "b", "c"], 30)) as server:

        async def go() -> Any:
            orch = llm_orchestrator(server, root, Trace(str(trace)))
            async with orch:
                async with orch.stream("What is set?") as events:
                    async for event in events:
                        if event.kind == "plan":
                            while server.in_flight < 3:  # the subagents' calls are in flight
                                await anyio.sleep(0.02)
                            break
            return orch

        orch = anyio.run(go, backend=backend)
    evs = all_spans_ended(trace)
    llm_ends = [e for e in evs if e["kind"] == "llm" and e["phase"] == "end"]
    assert sum(bool(e["data"].get("cancelled")) for e in llm_ends) == 3
    assert orch.trace._file is not None and orch.trace._file.closed
    poster = orch.model.poster  # the HTTP session agentkit opened is closed
    assert getattr(poster._inner, "_session", None) is None and poster._owned is None
    shown = cli("trace", "show", str(trace))
    assert shown.returncode == 0, shown.stderr
    assert len(re.findall(r"llm\s+subagent\s+cancelled", shown.stdout)) == 3, shown.stdout


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agentkit", *args], capture_output=True,
                          text=True, timeout=120, cwd=REPO,
                          env={**os.environ, "AGENTKIT_CONFIG": "/dev/null", "COLUMNS": "200"})


def test_a_run_cancelled_from_outside_closes_its_trace_and_replay_says_no_answer(
        tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    with FakeLLMServer(stalling_script(["a", "b"], 30)) as server:

        async def go() -> Any:
            orch = llm_orchestrator(server, EXAMPLES / "blackwell-kimi", Trace(str(trace)))
            with anyio.CancelScope() as scope:
                async with orch:
                    async with anyio.create_task_group() as tg:
                        tg.start_soon(orch.investigate, "What is set?")
                        while server.in_flight < 2:
                            await anyio.sleep(0.02)
                        scope.cancel()
            return orch

        orch = anyio.run(go)
    assert orch.trace._file is not None and orch.trace._file.closed
    evs = all_spans_ended(trace)
    assert evs[-1]["data"]["status"] == "cancelled"
    done = cli("replay", str(trace))
    assert done.returncode == 8, (done.returncode, done.stderr)
    assert "holds no answer" in done.stderr


def test_the_readme_embedding_snippet_runs_as_written(tmp_path: Path) -> None:
    readme = (REPO / "README.md").read_text()
    section = readme[readme.index("## Embedding"):]
    snippet = re.search(r"```python\n(.*?)```", section, re.S)
    assert snippet is not None
    code = snippet.group(1)
    assert "async with orch.stream(" in code  # the spelling that is safe to leave early
    compile(code, "README.md", "exec")  # it parses: no top-level await
    script = tmp_path / "snippet.py"
    script.write_text(code)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=120, cwd=REPO,
                          env={**os.environ, "AGENTKIT_CONFIG": "/dev/null",
                               "AGENTKIT_TRACE_DIR": str(tmp_path / "traces")})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()  # the answer's first claim
