"""A run deadline gives a partial answer from the tasks that finished (marked as cut), not a
bare TimeoutError, and the trace closes every span."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import anyio

from agentkit import Host, Limits, Orchestrator, Trace

from .conftest import EXAMPLES


def test_a_deadline_cuts_the_slow_task_and_answers_from_the_rest(tmp_path: Path) -> None:
    async def slow_site(tool: Any, ctx: Any, args: dict[str, Any], task: str, step: int,
                        index: int) -> Any:
        if task == "software-stack" and "dist-info" in str(args):
            await anyio.sleep(30)  # a hung network filesystem under site-packages
        return await tool.run(ctx, args)

    trace = tmp_path / "t.jsonl"
    orch = Orchestrator.catalog(Host.at(EXAMPLES / "hopper-deepseek"), trace=Trace(str(trace)))
    orch.executor = slow_site
    t0 = time.monotonic()
    answer = anyio.run(lambda: orch.investigate(
        "Is NCCL tuned? What versions run?", tasks=["nccl-env", "software-stack"],
        limits=Limits(deadline_s=2.0)))
    orch.trace.close()
    assert time.monotonic() - t0 < 10
    assert answer.tasks["nccl-env"] == "ok" and answer.tasks["software-stack"] == "timed-out"
    assert any("run deadline of 2s cut 1 tasks short" in n for n in answer.notes)
    assert any("NCCL" in c.text for c in answer.bottom_line)
    evs = [json.loads(x) for x in trace.read_text().splitlines()]
    starts = {e["span"] for e in evs if e["phase"] == "start"}
    assert starts == {e["span"] for e in evs if e["phase"] == "end"}


def test_a_deadline_cut_llm_trace_replays(tmp_path: Path) -> None:
    from agentkit.cli import main
    from agentkit.testing import FakeLLMServer

    from .conftest import write_tree
    from .llm_script import llm_orchestrator, stalling_script
    from .test_llm_pipeline import HOST

    root = write_tree(tmp_path / "host", HOST)
    trace = tmp_path / "t.jsonl"
    with FakeLLMServer(stalling_script(["a", "b"], 2.5)) as server:
        t = Trace(str(trace))
        orch = llm_orchestrator(server, root, t)

        async def go() -> Any:
            async with orch:
                return await orch.investigate("What NCCL settings?",
                                              limits=Limits(deadline_s=1.0))

        answer = anyio.run(go)
        t.close()
    assert answer.tasks == {"a": "timed-out", "b": "timed-out"}  # no rescue past the deadline
    assert main(["replay", str(trace)]) == 0  # the cut calls stay unanswered in the replay


def test_a_cancelled_llm_trace_replays_without_waiting(tmp_path: Path) -> None:
    from agentkit.cli import main
    from agentkit.testing import FakeLLMServer

    from .conftest import write_tree
    from .llm_script import llm_orchestrator, stalling_script
    from .test_llm_pipeline import HOST

    root = write_tree(tmp_path / "host", HOST)
    trace = tmp_path / "t.jsonl"
    with FakeLLMServer(stalling_script(["a", "b"], 2.0)) as server:
        t = Trace(str(trace))
        orch = llm_orchestrator(server, root, t)

        async def go() -> None:
            async with orch:
                with anyio.move_on_after(0.5):  # the caller gives up: cancelled from outside
                    await orch.investigate("What NCCL settings?")

        anyio.run(go)
        t.close()
    t0 = time.monotonic()
    # says what the recorded run did not finish, and exits 8: the trace holds no answer
    # (issue 24: a script must not take a run that never answered for an answer)
    assert main(["replay", str(trace)]) == 8
    assert time.monotonic() - t0 < 10  # and never waits for calls that were never answered
