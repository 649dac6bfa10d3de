"""Orchestrator.stream() stopped at any point: under contextlib.aclosing, by aclose(), or by
cancelling the consuming task. No error reaches the caller, and the trace has every span
closed (the run ended "cancelled")."""

from __future__ import annotations

import json
from contextlib import aclosing
from pathlib import Path
from typing import Any

import anyio
import pytest

from agentkit import Host, Orchestrator, Trace

from .conftest import EXAMPLES

QUESTION = "Is NCCL tuned? Would an FP8 KV cache help?"


def _orch(trace: Path) -> Orchestrator:
    return Orchestrator.catalog(Host.at(EXAMPLES / "hopper-deepseek"), trace=Trace(str(trace)))


def _spans_closed(trace: Path) -> None:
    evs = [json.loads(x) for x in trace.read_text().splitlines()]
    starts = {e["span"] for e in evs if e["phase"] == "start"}
    ends = {e["span"] for e in evs if e["phase"] == "end"}
    assert starts == ends, starts - ends
    assert evs[-1]["kind"] == "run" and evs[-1]["phase"] == "end"


def _count(tmp_path: Path) -> int:
    async def go() -> int:
        n = 0
        async for _ in _orch(tmp_path / "all.jsonl").stream(QUESTION):
            n += 1
        return n
    return anyio.run(go)


def test_stopping_at_every_event_index_is_clean(tmp_path: Path) -> None:
    total = _count(tmp_path)
    assert total > 5
    for stop in range(total):
        trace = tmp_path / f"t{stop}.jsonl"
        orch = _orch(trace)

        async def go(orch: Orchestrator = orch, stop: int = stop) -> None:
            async with aclosing(orch.stream(QUESTION)) as events:
                i = 0
                async for _ in events:
                    if i == stop:
                        break
                    i += 1

        anyio.run(go)
        orch.trace.close()
        _spans_closed(trace)


@pytest.mark.parametrize("how", ["aclose", "cancel"])
def test_aclose_and_cancel_are_clean(tmp_path: Path, how: str) -> None:
    trace = tmp_path / "t.jsonl"
    orch = _orch(trace)

    async def go() -> None:
        if how == "aclose":
            agen: Any = orch.stream(QUESTION)
            await agen.__anext__()
            await agen.aclose()
            return
        with anyio.CancelScope() as scope:
            async with aclosing(orch.stream(QUESTION)) as events:
                async for _ in events:
                    scope.cancel()

    anyio.run(go)
    orch.trace.close()
    _spans_closed(trace)
