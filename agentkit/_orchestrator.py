"""The orchestrator: question → plan → tasks in parallel → results → answer, traced.

It only wires parts together. A :class:`Planner` expands the question, a :class:`TaskRunner`
runs each task in its own sandbox, a :class:`Synthesizer` merges the results. Each part is
replaceable; the catalog (no-LLM) and LLM modes are just different parts.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import anyio
from pydantic import BaseModel, ConfigDict, Field

from ._degrade import synthesize_in_time
from ._errors import RunAborted
from ._gc import relaxed_gc
from ._sandbox._host import Host
from ._sandbox._kernel import in_force
from ._sandbox._sandbox import BUILTIN_TOOLS, Sandbox, ToolCache
from ._sandbox._tool import Tool
from ._sandbox._withheld import run_notes
from ._trace import Trace
from ._types import Answer, Plan, SubQuestion, TaskResult, TaskSpec

if TYPE_CHECKING:
    from ._catalog._template import TaskTemplate
    from ._llm._messages import Model
    from ._stream import RunStream


_CUT = "cut by the run deadline"

# The library logs through the standard library (an embedder routes "agentkit" like any
# other logger); it configures no handler: that is the application's choice.
_log = logging.getLogger("agentkit")

class Limits(BaseModel):
    """Per-call limits on an investigation; ``None`` keeps the configured value.

    >>> Limits(max_tasks=4, deadline_s=120).max_steps is None
    True
    """

    model_config = ConfigDict(extra="forbid")
    max_tasks: int | None = Field(None, ge=1)
    max_steps: int | None = Field(None, ge=1)
    max_tokens: int | None = Field(None, ge=256)
    deadline_s: float | None = Field(None, gt=0)


class UnknownTask(ValueError):
    """A requested task name is not in the catalog."""


class Planner(Protocol):
    async def plan(self, question: str) -> Plan: ...


class TaskRunner(Protocol):
    async def run(self, spec: TaskSpec, box: Sandbox) -> TaskResult: ...


class Synthesizer(Protocol):
    async def synthesize(self, question: str, plan: Plan,
                         results: list[TaskResult]) -> Answer: ...


class Orchestrator:
    """Runs one investigation at a time over a :class:`Host`, with the parts it is given.

    Choosing the parts (catalog or LLM mode, from settings) is the facade's: the public
    ``agentkit.Orchestrator`` is this class with its factories (``catalog``, ``from_env``,
    ``fleet``), defined in ``agentkit._api``, so nothing here knows settings or fleets.

    >>> from agentkit import Orchestrator
    >>> orch = Orchestrator.catalog(Host.at("/"))
    >>> answer = anyio.run(orch.investigate, "Is NCCL tuned for this topology?")  # doctest: +SKIP
    """

    def __init__(self, planner: Planner, runner: TaskRunner, synthesizer: Synthesizer,
                 host: Host, *, trace: Trace | None = None, concurrency: int = 64,
                 tools: dict[str, Tool] | None = None,
                 executor: Callable[..., Any] | None = None,
                 catalog: dict[str, TaskTemplate] | None = None,
                 model: Model | None = None, mode: str = "catalog") -> None:
        self.planner = planner
        self.runner = runner
        self.synthesizer = synthesizer
        self.host = host
        self.trace = trace or Trace.disabled()
        self.concurrency = concurrency
        self.tools = tools if tools is not None else dict(BUILTIN_TOOLS)
        self.executor = executor
        self.templates = catalog
        if catalog:  # a template naming a tool this orchestrator does not offer fails now
            from ._catalog._load import check_tools

            check_tools(catalog, list(self.tools))
        self.model = model
        self.mode = mode
        self.config: dict[str, Any] = {}  # recorded in the trace so a replay can rebuild us
        # Off by default: the library leaves process-wide state (the GC thresholds) alone; the
        # CLI, which owns its process, and an embedder who wants the ~15 % fan-out gain turn it
        # on (see _gc.py).
        self.tune_gc = False
        self.cache = ToolCache()
        # Off in an exact replay: every call must be answered from its own task's recording
        # (a cache hit from another task would finish a task the recorded run never did).
        self.cache_tools = True
        self.shared: dict[str, Any] = {}
        self._live: set[anyio.Event] = set()  # runs of streams, until they have ended

    async def __aenter__(self) -> Orchestrator:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the model's HTTP client (if agentkit opened it) and the trace file, once the
        runs of streams left early have ended; shielded, so a cancelled caller closes too."""
        try:
            with anyio.CancelScope(shield=True):
                with anyio.move_on_after(30):
                    for done in list(self._live):
                        await done.wait()
                closer = getattr(self.model, "aclose", None)
                if closer is not None:
                    await closer()
        finally:
            self.trace.close()

    def stream(self, question: str, *, tasks: Sequence[str] | None = None,
               limits: Limits | None = None) -> RunStream:
        """Investigate while yielding progress events; the last one carries the answer.
        Leaving early (``break``, an exception, a cancellation) is safe under asyncio and trio:
        the run, in a task of its own, is cancelled and its spans end as cancelled.

        >>> async with orch.stream("Would FP8 KV help?") as events:  # doctest: +SKIP
        ...     async for event in events:
        ...         print(event.kind)
        """
        # imported here: the event models load only for a caller that streams (`agentkit
        # ask` investigates)
        from ._stream import RunStream

        return RunStream(self, question, tasks, limits)

    async def investigate(self, question: str, *, tasks: Sequence[str] | None = None,
                          limits: Limits | None = None) -> Answer:
        """Plan, run every task in parallel, and merge the results into a cited answer.

        ``tasks`` names catalog templates to run instead of planning; ``limits`` caps this
        call (tasks, steps, tokens, deadline).
        """
        limits = limits or Limits()
        # A run deadline cuts planning and the tasks; what finished is still merged into an
        # answer (marked as cut), so a deadline gives a partial answer, not a bare error.
        return await self._investigate(question, tasks, limits)

    def plan_from_catalog(self, question: str, names: Sequence[str]) -> Plan:
        """A plan of exactly these catalog tasks (no planner)."""
        catalog = self.templates or {}
        unknown = [n for n in names if n not in catalog]
        if unknown:
            raise UnknownTask(f"unknown task(s) {', '.join(unknown)}; known: "
                              f"{', '.join(sorted(catalog))}")
        specs = [TaskSpec(id=n, title=catalog[n].title, objective=catalog[n].description,
                          tools=catalog[n].tools, template=n, reason="requested by the caller",
                          inputs={"question": question})
                 for n in dict.fromkeys(names)]
        return Plan(question=question, mode="catalog" if self.mode == "catalog" else "llm",
                    tasks=specs, subquestions=[SubQuestion(text=question,
                                                           tasks=[s.id for s in specs])])

    def _limit(self, plan: Plan, limits: Limits) -> Plan:
        if limits.max_tasks is not None and len(plan.tasks) > limits.max_tasks:
            plan.notes.append(f"plan cut from {len(plan.tasks)} to {limits.max_tasks} tasks by "
                              "the caller's limit")
            plan.tasks = plan.tasks[: limits.max_tasks]
        update = {k: v for k, v in (("max_steps", limits.max_steps),
                                     ("max_tokens", limits.max_tokens),
                                     ("deadline_s", limits.deadline_s)) if v is not None}
        for t in plan.tasks:
            if update:
                t.budget = t.budget.model_copy(update={
                    k: min(v, getattr(t.budget, k)) for k, v in update.items()})
        return plan

    async def _investigate(self, question: str, tasks: Sequence[str] | None,
                           limits: Limits) -> Answer:
        t0 = time.perf_counter()
        _log.info("investigating %r under %s (%s mode)", question, self.host.root.path,
                  self.mode)
        self.cache = ToolCache()  # shared by this run's subagents only: the host moves on
        self.shared = {}  # what a run's tasks build once (the host model)
        run = self.trace.start("run", data={
            "question": question, "root": self.host.root.path, "mode": self.mode,
            "sandbox": in_force(self.host.sandbox),
            **({"manifest_dirs": list(self.host.manifest_dirs)}
               if self.host.manifest_dirs else {}),
            "tasks": list(tasks) if tasks else None, "limits": limits.model_dump(),
            "config": self.config})
        try:
            deadline = (anyio.current_time() + limits.deadline_s
                        if limits.deadline_s is not None else math.inf)
            plan = self._limit(await self._plan(question, tasks, limits, deadline), limits)
            self.trace.emit("plan", parent=run, data=plan.model_dump(mode="json"))
            plan, results = await self._run_plan(question, plan, run, limits, deadline)
            span = self.trace.start("synthesize", parent=run)
            # bounded by the run deadline; a failed or late synthesis degrades to the findings
            answer = await synthesize_in_time(self.synthesizer, question, plan, results,
                                              deadline)
            answer.usage = sum((r.usage for r in results), plan.usage).add(answer.usage)
            # the sandbox's limits in force for this run, from what its tools returned
            answer.notes.extend(n for n in run_notes(self.shared) if n not in answer.notes)
            answer.usage.wall_s = round(time.perf_counter() - t0, 6)
            self.trace.end(span, "synthesize", data={"answer": answer.model_dump(mode="json")})
        except BaseException as exc:
            status = "cancelled" if isinstance(exc, anyio.get_cancelled_exc_class() |
                                               KeyboardInterrupt) else "error"
            with anyio.CancelScope(shield=True):
                self.trace.end(run, "run", data={"status": status, "error": repr(exc)})
            _log.info("investigation %s", status)  # the caller says why, once, in its words
            raise
        self.trace.end(run, "run", data={"status": "ok", "cache_hits": self.cache.hits,
                                         "cache_misses": self.cache.misses})
        _log.info("answered in %.3f s: %d claims in the bottom line, %d citations",
                  time.perf_counter() - t0, len(answer.bottom_line), len(answer.citations))
        return answer

    async def _plan(self, question: str, tasks: Sequence[str] | None, limits: Limits,
                    deadline: float) -> Plan:
        if tasks:
            return self.plan_from_catalog(question, tasks)
        try:
            with anyio.fail_after(max(0.0, deadline - anyio.current_time())
                                  if deadline < math.inf else None):
                return await self.planner.plan(question)
        except TimeoutError:
            raise TimeoutError(f"the run deadline of {limits.deadline_s:g}s passed while "
                               "planning; no task had started") from None

    async def _run_plan(self, question: str, plan: Plan, run: str, limits: Limits,
                        deadline: float) -> tuple[Plan, list[TaskResult]]:
        """The plan's tasks, then (when the model's tasks found nothing citable and time is
        left) the catalog's rescue tasks; the plan returned names every task that ran."""
        results = await self.run_tasks(plan, run, deadline=deadline)
        if any(r.summary == _CUT for r in results):
            plan.notes.append(f"the run deadline of {limits.deadline_s:g}s cut "
                              f"{sum(r.summary == _CUT for r in results)} tasks short; "
                              "this answer is from the tasks that finished")
        rescue = getattr(self.planner, "rescue", None)
        more = (await rescue(question, plan, results)
                if rescue is not None and anyio.current_time() < deadline else None)
        if more is not None:  # the model's tasks found nothing citable: the catalog's too
            self.trace.emit("plan", parent=run, data=more.model_dump(mode="json"))
            results += await self.run_tasks(more, run, deadline=deadline)
            plan = plan.model_copy(update={"tasks": [*plan.tasks, *more.tasks],
                                           "notes": [*plan.notes, *more.notes]})
        return plan, results

    async def run_tasks(self, plan: Plan, parent: str | None = None, *,
                        deadline: float = math.inf) -> list[TaskResult]:
        """Every task concurrently (bounded); a failure or timeout is a result, not a crash.
        At ``deadline`` (anyio's clock) the tasks still running are cut: each is a timed-out
        result."""
        results: dict[str, TaskResult] = {}
        limiter = anyio.CapacityLimiter(self.concurrency)

        async def one(spec: TaskSpec) -> None:
            async with limiter:
                results[spec.id] = await self._run_one(spec, parent)

        try:
            with relaxed_gc(self.tune_gc), anyio.move_on_after(
                    deadline - anyio.current_time() if deadline < math.inf else None):
                async with anyio.create_task_group() as tg:
                    for spec in plan.tasks:
                        tg.start_soon(one, spec)
        except* RunAborted as group:  # one task aborted the run: say why, not "group"
            raise group.exceptions[0] from None
        return [results.get(s.id) or TaskResult(
            task_id=s.id, status="timed-out", summary=_CUT,
            errors=["the run deadline passed before this task finished"])
            for s in plan.tasks]

    async def _run_one(self, spec: TaskSpec, parent: str | None) -> TaskResult:
        span = self.trace.start("task", parent=parent, task=spec.id,
                                data={"title": spec.title, "template": spec.template})
        self.trace.task_spans[spec.id] = span
        box = Sandbox(self.host, task_id=spec.id, tools=self.tools, allowed=spec.tools or None,
                      cache=self.cache if self.cache_tools else None, trace=self.trace,
                      parent_span=span,
                      executor=self.executor, shared=self.shared)
        t0 = time.perf_counter()
        try:
            with anyio.fail_after(spec.budget.deadline_s):
                result = await self.runner.run(spec, box)
        except RunAborted:
            with anyio.CancelScope(shield=True):
                self.trace.end(span, "task", task=spec.id, data={"aborted": True})
            raise
        except TimeoutError:
            result = TaskResult(task_id=spec.id, status="timed-out",
                                summary=f"no result within {spec.budget.deadline_s:g}s",
                                evidence=box.evidence_list(),
                                errors=[f"deadline of {spec.budget.deadline_s:g}s passed"])
        except Exception as exc:  # isolation: one broken task never sinks the others
            result = TaskResult(task_id=spec.id, status="failed",
                                summary=f"{type(exc).__name__}: {exc}",
                                evidence=box.evidence_list(),
                                errors=[f"{type(exc).__name__}: {exc}"])
        except BaseException:  # cancelled from outside: close the span, then stop
            with anyio.CancelScope(shield=True):
                self.trace.end(span, "task", task=spec.id, data={"cancelled": True})
            raise
        result.usage.wall_s = round(time.perf_counter() - t0, 6)
        result.usage.tool_calls = box.calls
        self.trace.end(span, "task", task=spec.id, data={"result": result.model_dump(mode="json")})
        if _log.isEnabledFor(logging.DEBUG):
            _log.log(logging.DEBUG if result.status in ("ok", "partial") else logging.WARNING,
                     "task %s %s in %.3f s: %s", spec.id, result.status, result.usage.wall_s,
                     result.summary[:200])
        return result
