"""A fleet investigation: plan once, run the batch on every host through a transport, fold
the outcomes as they arrive, answer. Traced like a one-host run: the run span, the plan, one
``host`` event per host as it lands, the answer; an interrupted run keeps what it wrote.

:class:`FleetOrchestrator` composes a one-host orchestrator (it plans, with its catalog and
its trace) with a transport (each host runs the batch with its own agentkit): the fleet sits
above the orchestrator, which knows nothing of it."""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from contextlib import aclosing

import anyio

from .._orchestrator import Limits, Orchestrator
from .._stream import RunStream
from .._trace import Trace
from .._types import Answer, Plan, Usage
from ._answer import fleet_answer
from ._fold import Fold
from ._meaning import compare_specs
from ._names import InventoryError, unique
from ._names import fold as fold_names
from ._outcome import Batch, HostOutcome, Transport
from ._record import Recorder


class FleetOrchestrator:
    """Asks every host ``transport`` reaches (or ``hosts``) and folds their answers; plans
    with ``orchestrator`` (its catalog, planner and trace; its host is not read). The same
    calls as an :class:`~agentkit.Orchestrator`: ``investigate``, ``stream``, ``aclose``.

    >>> from agentkit import Orchestrator, SSHTransport
    >>> fleet = Orchestrator.fleet(SSHTransport(concurrency=32), hosts=["gpu01", "gpu02"])
    >>> anyio.run(fleet.investigate, "Which vLLM version?").fleet.recap  # doctest: +SKIP
    'ok=2 differs=0'
    """

    def __init__(self, orchestrator: Orchestrator, transport: Transport,
                 hosts: Sequence[str] | None = None) -> None:
        self.orchestrator = orchestrator
        self.transport = transport
        self.hosts = list(hosts) if hosts is not None else None

    @property
    def trace(self) -> Trace:
        return self.orchestrator.trace

    @property
    def mode(self) -> str:
        return self.orchestrator.mode

    async def __aenter__(self) -> FleetOrchestrator:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self.orchestrator.aclose()

    async def investigate(self, question: str, *, tasks: Sequence[str] | None = None,
                          limits: Limits | None = None) -> Answer:
        return await investigate_fleet(self.orchestrator, self.transport, question, tasks,
                                       limits or Limits(), self.hosts)

    def stream(self, question: str, *, tasks: Sequence[str] | None = None,
               limits: Limits | None = None) -> RunStream:
        """As :meth:`Orchestrator.stream <agentkit.Orchestrator.stream>`; the events include
        one ``host_finished`` per host."""
        return RunStream(self, question, tasks, limits)

    @property
    def _live(self) -> set[anyio.Event]:
        # the runs of streams left early: the orchestrator's aclose() waits for them
        return self.orchestrator._live


async def investigate_fleet(orch: Orchestrator, transport: Transport, question: str,
                            tasks: Sequence[str] | None, limits: Limits,
                            hosts: Sequence[str] | None = None) -> Answer:
    """``question`` on every host ``transport`` reaches (or on ``hosts``)."""
    t0 = time.perf_counter()
    # an empty list is no hosts, not "every host the transport can find"
    names = unique(hosts) if hosts is not None else await transport.discover()
    if not names:
        raise InventoryError("no hosts to ask: name at least one (a list, a range such as "
                             "gpu[01-04], or a fleet directory with host subdirectories)")
    trace = orch.trace
    run = trace.start("run", data={
        "question": question, "root": f"fleet:{transport.name}", "mode": orch.mode,
        "tasks": list(tasks) if tasks else None, "limits": limits.model_dump(),
        "config": orch.config,
        "fleet": {"transport": transport.name, "hosts": fold_names(names),
                  "count": len(names)}})
    try:
        deadline = (anyio.current_time() + limits.deadline_s
                    if limits.deadline_s is not None else math.inf)
        plan = await _plan(orch, question, tasks, limits, deadline)
        trace.emit("plan", parent=run, data=plan.model_dump(mode="json"))
        fold = Fold(transport.name, names, [t.id for t in plan.tasks], compare_specs(plan))
        await _gather(transport, names, _batch(plan, transport, limits), fold,
                      Recorder(trace, run), deadline)
        span = trace.start("synthesize", parent=run)
        fleet = fold.fleet()
        notes = [f"Fleet run over {transport.name}: each host ran the batch with its own "
                 "agentkit; values are compared as canonical JSON."]
        notes += getattr(transport, "notes", list)()  # what the transport's system says
        if fold.duplicates:
            notes.append(f"the transport reported {len(fold.duplicates)} hosts twice; the "
                         "first outcome of each counts")
        answer = fleet_answer(question, plan, fleet, fold.evidence(), notes,
                              Usage(wall_s=round(time.perf_counter() - t0, 6)))
        trace.end(span, "synthesize", data={"answer": answer.model_dump(mode="json")})
    except BaseException as exc:
        status = "cancelled" if isinstance(exc, anyio.get_cancelled_exc_class() |
                                           KeyboardInterrupt) else "error"
        with anyio.CancelScope(shield=True):
            trace.end(run, "run", data={"status": status, "error": repr(exc)})
        raise
    trace.end(run, "run", data={"status": "ok"})
    return answer


async def _plan(orch: Orchestrator, question: str, tasks: Sequence[str] | None,
                limits: Limits, deadline: float) -> Plan:
    if tasks:
        plan = orch.plan_from_catalog(question, tasks)
    else:
        with anyio.fail_after(deadline - anyio.current_time() if deadline < math.inf
                              else None):
            plan = await orch.planner.plan(question)
    plan = orch._limit(plan, limits)
    free = [t.id for t in plan.tasks if t.template is None]
    if free:  # a free-form task needs a model on every host: not what a fleet host runs
        plan.tasks = [t for t in plan.tasks if t.template is not None]
        plan.notes.append(f"not run on the fleet (free-form, they need a model on each "
                          f"host): {', '.join(free)}")
    return plan


def _batch(plan: Plan, transport: Transport, limits: Limits) -> Batch:
    longest = max((t.budget.deadline_s for t in plan.tasks), default=120.0)
    return Batch(question=plan.question, tasks=plan.tasks,
                 root=getattr(transport, "root", "/"),
                 deadline_s=min(longest, limits.deadline_s or math.inf))


async def _gather(transport: Transport, names: list[str], batch: Batch, fold: Fold,
                  record: Recorder, deadline: float) -> None:
    expected = set(names)
    broke = ""
    with anyio.move_on_after(deadline - anyio.current_time() if deadline < math.inf
                             else None) as scope:
        try:
            async with aclosing(transport.run(names, batch)) as outcomes:  # type: ignore[type-var]
                async for o in outcomes:
                    if o.host in expected:
                        record(o)
                        fold.add(o)
        except InventoryError:  # the inventory itself is wrong (no known_hosts, no job)
            raise
        except Exception as exc:  # a transport's bug: the hosts heard from still count
            broke = f"the transport failed before this host's outcome: {type(exc).__name__}: {exc}"
    cut = scope.cancelled_caught
    for host in fold.missing():
        o = HostOutcome(host=host, status="timed-out" if cut else "failed",
                        error="the run deadline passed first" if cut
                        else broke or "the transport reported nothing for this host")
        record(o)
        fold.add(o)
