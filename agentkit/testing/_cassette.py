"""Cassettes: record an investigation once, replay it in CI.

>>> answer = cassette("tests/cassettes/nccl.jsonl", "Is NCCL tuned?",
...                   root="snapshots/gpu-node-07")  # doctest: +SKIP

The first call (or any call with ``AGENTKIT_RECORD=1``) runs the investigation for real,
against whatever model and root are configured, and writes the trace. Every later call
replays the trace exactly: no model call, no tool run, the same answer, and a
:class:`~agentkit._replay.ReplayDiverged` error if your code now asks something new.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio

from .._replay import replay_trace
from .._types import Answer


def cassette(path: str | os.PathLike[str], question: str, **from_env: Any) -> Answer:
    """Record (first time, or ``AGENTKIT_RECORD=1``) or replay an investigation."""
    file = Path(path)
    if os.environ.get("AGENTKIT_RECORD") == "1" or not file.exists():
        from .._api import Orchestrator

        file.parent.mkdir(parents=True, exist_ok=True)

        async def record() -> Answer:
            async with Orchestrator.from_env(trace=file, **from_env) as orch:
                return await orch.investigate(question)

        return anyio.run(record)
    result = anyio.run(lambda: replay_trace(file))
    if result.answer is None:
        raise RuntimeError(f"{file} holds no answer: {'; '.join(result.notes)}")
    if result.answer.question != question:
        raise ValueError(f"{file} recorded {result.answer.question!r}, not {question!r}; "
                         "record it again with AGENTKIT_RECORD=1")
    return result.answer
