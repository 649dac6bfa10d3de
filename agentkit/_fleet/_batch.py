"""Running one batch of catalog tasks on one host, locally: the worker's and the snapshot
fleet's common path (the same recipe runner and sandbox as ``agentkit ask``)."""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import anyio

from .._catalog._load import load_catalog
from .._catalog._recipe import RecipeRunner
from .._catalog._template import TaskTemplate
from .._orchestrator import Orchestrator
from .._sandbox._host import Host
from .._types import Answer, Plan, TaskResult
from ._outcome import Batch


class _Unused:
    """The planner and synthesizer slots: a batch is planned already and merged elsewhere."""

    async def plan(self, question: str) -> Plan:
        raise AssertionError("a batch is planned by the caller")

    async def synthesize(self, *args: Any) -> Answer:
        raise AssertionError("a batch's results are folded by the caller")


@lru_cache(maxsize=1)
def bundled_catalog() -> dict[str, TaskTemplate]:
    # the bundled templates only: a fleet host runs what its own agentkit ships, so the
    # controller's --tasks-dir cannot change what a host executes
    return load_catalog()


async def run_batch(host: Host, batch: Batch,
                    catalog: dict[str, TaskTemplate] | None = None) -> list[TaskResult]:
    """Every task of ``batch`` on ``host``; a task the catalog lacks is a failed result.

    >>> import anyio
    >>> from agentkit._types import TaskSpec
    >>> batch = Batch(question="q", tasks=[TaskSpec(id="x", title="x", objective="",
    ...                                             template="no-such-task")])
    >>> [r.status for r in anyio.run(run_batch, Host.at("/"), batch)]
    ['failed']
    """
    cat = catalog if catalog is not None else bundled_catalog()
    known = [t for t in batch.tasks if t.template in cat]
    orch = Orchestrator(_Unused(), RecipeRunner(cat), _Unused(), host)
    plan = Plan(question=batch.question, mode="catalog", tasks=known)
    deadline = anyio.current_time() + batch.deadline_s if batch.deadline_s else math.inf
    done = {r.task_id: r for r in await orch.run_tasks(plan, deadline=deadline)}
    return [done.get(t.id) or TaskResult(
        task_id=t.id, status="failed", summary=f"task {t.template!r} is not in this host's "
        "catalog", errors=[f"unknown task {t.template!r}: this host runs another agentkit "
                           "version"]) for t in batch.tasks]
