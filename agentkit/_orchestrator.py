"""The orchestrator: question → plan → tasks in parallel → results → answer, traced.

It only wires parts together. A :class:`Planner` expands the question, a :class:`TaskRunner`
runs each task in its own sandbox, a :class:`Synthesizer` merges the results. Each part is
replaceable; the catalog (no-LLM) and LLM modes are just different parts.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Protocol

import anyio

from ._host import Host
from ._sandbox._sandbox import BUILTIN_TOOLS, Sandbox, ToolCache
from ._tool import Tool
from ._trace import Trace
from ._types import Answer, Plan, TaskResult, TaskSpec, Usage


class Planner(Protocol):
    async def plan(self, question: str) -> Plan: ...


class TaskRunner(Protocol):
    async def run(self, spec: TaskSpec, box: Sandbox) -> TaskResult: ...


class Synthesizer(Protocol):
    async def synthesize(self, question: str, plan: Plan,
                         results: list[TaskResult]) -> Answer: ...


class Orchestrator:
    """Runs one investigation at a time over a :class:`Host`.

    >>> orch = Orchestrator.catalog(Host.at("examples/blackwell-kimi"))
    >>> answer = anyio.run(orch.investigate, "Is NCCL tuned for this topology?")  # doctest: +SKIP
    """

    def __init__(self, planner: Planner, runner: TaskRunner, synthesizer: Synthesizer,
                 host: Host, *, trace: Trace | None = None, concurrency: int = 64,
                 tools: dict[str, Tool] | None = None,
                 executor: Callable[..., Any] | None = None) -> None:
        self.planner = planner
        self.runner = runner
        self.synthesizer = synthesizer
        self.host = host
        self.trace = trace or Trace.disabled()
        self.concurrency = concurrency
        self.tools = tools if tools is not None else dict(BUILTIN_TOOLS)
        self.executor = executor
        self.cache = ToolCache()

    @classmethod
    def catalog(cls, host: Host, *, trace: Trace | None = None,
                task_dirs: list[str] | None = None) -> Orchestrator:
        """An orchestrator that needs no model: catalog planner, recipes, template answer."""
        from ._catalog._planner import CatalogPlanner
        from ._catalog._recipe import RecipeRunner
        from ._catalog._synth import TemplateSynthesizer
        from ._catalog._template import load_catalog

        cat = load_catalog(task_dirs)
        return cls(CatalogPlanner(cat), RecipeRunner(cat), TemplateSynthesizer(), host,
                   trace=trace)

    async def investigate(self, question: str) -> Answer:
        t0 = time.perf_counter()
        run = self.trace.start("run", data={"question": question, "root": self.host.root.path})
        try:
            plan = await self.planner.plan(question)
            self.trace.emit("plan", parent=run, data=plan.model_dump(mode="json"))
            results = await self.run_tasks(plan, run)
            span = self.trace.start("synthesize", parent=run)
            answer = await self.synthesizer.synthesize(question, plan, results)
            answer.usage = sum((r.usage for r in results), Usage()).add(answer.usage)
            answer.usage.wall_s = round(time.perf_counter() - t0, 6)
            self.trace.end(span, "synthesize", data={"answer": answer.model_dump(mode="json")})
        except BaseException as exc:
            status = "cancelled" if isinstance(exc, anyio.get_cancelled_exc_class() |
                                               KeyboardInterrupt) else "error"
            with anyio.CancelScope(shield=True):
                self.trace.end(run, "run", data={"status": status, "error": repr(exc)})
            raise
        self.trace.end(run, "run", data={"status": "ok", "cache_hits": self.cache.hits,
                                         "cache_misses": self.cache.misses})
        return answer

    async def run_tasks(self, plan: Plan, parent: str | None = None) -> list[TaskResult]:
        """Every task concurrently (bounded); a failure or timeout is a result, not a crash."""
        results: dict[str, TaskResult] = {}
        limiter = anyio.CapacityLimiter(self.concurrency)

        async def one(spec: TaskSpec) -> None:
            async with limiter:
                results[spec.id] = await self._run_one(spec, parent)

        async with anyio.create_task_group() as tg:
            for spec in plan.tasks:
                tg.start_soon(one, spec)
        return [results[s.id] for s in plan.tasks]

    async def _run_one(self, spec: TaskSpec, parent: str | None) -> TaskResult:
        span = self.trace.start("task", parent=parent, task=spec.id,
                                data={"title": spec.title, "template": spec.template})
        self.trace.task_spans[spec.id] = span
        box = Sandbox(self.host, task_id=spec.id, tools=self.tools, allowed=spec.tools or None,
                      cache=self.cache, trace=self.trace, parent_span=span,
                      executor=self.executor)
        t0 = time.perf_counter()
        try:
            with anyio.fail_after(spec.budget.deadline_s):
                result = await self.runner.run(spec, box)
        except TimeoutError:
            result = TaskResult(task_id=spec.id, status="timed-out",
                                summary=f"no result within {spec.budget.deadline_s:g}s",
                                evidence=list(box.evidence.values()),
                                errors=[f"deadline of {spec.budget.deadline_s:g}s passed"])
        except Exception as exc:  # isolation: one broken task never sinks the others
            result = TaskResult(task_id=spec.id, status="failed",
                                summary=f"{type(exc).__name__}: {exc}",
                                evidence=list(box.evidence.values()),
                                errors=[f"{type(exc).__name__}: {exc}"])
        result.usage.wall_s = round(time.perf_counter() - t0, 6)
        result.usage.tool_calls = box.calls
        self.trace.end(span, "task", task=spec.id, data={"result": result.model_dump(mode="json")})
        return result
