"""The fleet run itself (``_fleet/_run.py``), in process over fake transports: what its trace
says (docs/trace-format.md: the run span's documented fields plus the ``fleet`` block a replay
expands back into the hosts asked, the plan under the run, one ``host`` event per host, the
answer), the batch every host is sent, the plan's free-form tasks left out, the notes, and the
hosts a transport never answered for (docs/fleet.md's buckets). Expected values come from
those promises, written before running."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Sequence
from typing import Any

import anyio
import pytest

from agentkit import Limits, Orchestrator
from agentkit._fleet._names import InventoryError, expand
from agentkit._fleet._outcome import Batch, HostOutcome
from agentkit._fleet._run import FleetOrchestrator
from agentkit._trace import Trace
from agentkit._types import Answer, Fact, Plan, TaskResult, TaskSpec

TASK = "gpu-inventory"


class _Fake:
    """Answers each host ``ok`` (or as ``script`` says), records the batch and hosts."""

    def __init__(self, found: Sequence[str] = ("h1", "h2", "h3"), *,
                 script: Sequence[HostOutcome] | None = None, fail: BaseException | None = None,
                 hang: bool = False) -> None:
        self.name = "fake"
        self.found = list(found)
        self.script, self.fail, self.hang = script, fail, hang
        self.batches: list[Batch] = []
        self.asked: list[list[str]] = []
        self.discovered = 0

    async def discover(self) -> list[str]:
        self.discovered += 1
        return self.found

    async def run(self, hosts: Sequence[str], batch: Batch) -> AsyncIterator[HostOutcome]:
        self.batches.append(batch)
        self.asked.append(list(hosts))
        outcomes = self.script if self.script is not None else [
            HostOutcome(host=h, status="unreachable", error="down") for h in hosts]
        for o in outcomes:
            await anyio.sleep(0)  # a real transport waits on I/O: a checkpoint per host
            yield o
        if self.hang:
            await anyio.sleep(3600)
        if self.fail is not None:
            raise self.fail


def _run(transport: Any, *, hosts: Sequence[str] | None = None,
         tasks: Sequence[str] | None = (TASK,), limits: Limits | None = None,
         planner: Any = None) -> tuple[Answer, list[dict[str, Any]], FleetOrchestrator]:
    seen: list[dict[str, Any]] = []
    fleet = Orchestrator.fleet(transport, hosts=hosts, trace=Trace(listener=seen.append))
    if planner is not None:
        fleet.orchestrator.planner = planner
    answer = anyio.run(lambda: fleet.investigate("Which driver?", tasks=tasks, limits=limits))
    return answer, seen, fleet


def _one(events: list[dict[str, Any]], kind: str, phase: str) -> dict[str, Any]:
    found = [e for e in events if e["kind"] == kind and e["phase"] == phase]
    assert len(found) == 1, (kind, phase, found)
    return found[0]


def test_the_run_span_says_what_was_asked_of_which_hosts_and_ends_ok() -> None:
    limits = Limits(max_steps=5)
    answer, ev, fleet = _run(_Fake(), limits=limits)
    start = _one(ev, "run", "start")
    assert start["data"] == {
        "question": "Which driver?", "root": "fleet:fake", "mode": "catalog",
        "tasks": [TASK], "limits": limits.model_dump(), "config": fleet.orchestrator.config,
        "fleet": {"transport": "fake", "hosts": "h[1-3]", "count": 3}}
    assert expand(start["data"]["fleet"]["hosts"]) == ["h1", "h2", "h3"]  # what replay reads
    assert _one(ev, "run", "end")["data"] == {"status": "ok"}
    assert _one(ev, "run", "end")["span"] == start["span"]
    assert ev[-1]["kind"] == "run"  # the run ends last, after the answer
    plan = _one(ev, "plan", "event")
    assert plan["parent"] == start["span"]
    assert [t["id"] for t in plan["data"]["tasks"]] == [TASK]
    assert Plan.model_validate(plan["data"]).question == "Which driver?"
    hosts = [e for e in ev if e["kind"] == "host"]
    assert [e["data"]["host"] for e in hosts] == ["h1", "h2", "h3"]
    assert {e["parent"] for e in hosts} == {start["span"]}
    syn = _one(ev, "synthesize", "end")
    assert _one(ev, "synthesize", "start")["parent"] == start["span"]
    assert Answer.model_validate(syn["data"]["answer"]) == answer
    assert syn["span"] == _one(ev, "synthesize", "start")["span"]
    assert fleet.trace is fleet.orchestrator.trace and fleet.mode == "catalog"


def test_no_tasks_named_is_null_in_the_trace_and_the_planner_plans() -> None:
    _, ev, _ = _run(_Fake(), tasks=None, limits=Limits(deadline_s=60))
    assert _one(ev, "run", "start")["data"]["tasks"] is None
    assert _one(ev, "plan", "event")["data"]["tasks"]  # the catalog planner chose some


def test_hosts_named_are_asked_once_each_without_discovery() -> None:
    fake = _Fake()
    answer, ev, _ = _run(fake, hosts=["b2", "b1", "b2"])
    assert fake.discovered == 0 and fake.asked == [["b2", "b1"]]
    assert _one(ev, "run", "start")["data"]["fleet"]["count"] == 2
    assert answer.fleet is not None and sum(answer.fleet.counts.values()) == 2


def test_an_empty_host_list_is_no_hosts_not_every_host() -> None:
    fake = _Fake()
    with pytest.raises(InventoryError) as err:
        _run(fake, hosts=[])
    assert str(err.value) == ("no hosts to ask: name at least one (a list, a range such as "
                              "gpu[01-04], or a fleet directory with host subdirectories)")
    assert fake.discovered == 0 and fake.asked == []
    with pytest.raises(InventoryError, match="no hosts to ask"):
        _run(_Fake(found=[]))


def test_the_batch_is_the_plans_tasks_under_the_tightest_deadline() -> None:
    fake = _Fake()
    _run(fake)
    (batch,) = fake.batches
    assert batch.question == "Which driver?" and [t.id for t in batch.tasks] == [TASK]
    assert batch.root == "/"  # a transport without a root of its own: each host's /
    assert batch.deadline_s == max(t.budget.deadline_s for t in batch.tasks)
    fake = _Fake()
    fake.root = "/srv/snap"  # type: ignore[attr-defined]
    answer, _, _ = _run(fake, limits=Limits(deadline_s=7.5))
    assert answer.fleet is not None and answer.fleet.buckets == {"unreachable": "h[1-3]"}
    assert fake.batches[0].root == "/srv/snap" and fake.batches[0].deadline_s == 7.5


class _FreeForm:
    """A planner whose plan has two free-form tasks among the catalog's."""

    async def plan(self, question: str) -> Plan:
        free = [TaskSpec(id=i, title=i, objective="look") for i in ("look-a", "look-b")]
        return Plan(question=question, mode="llm", tasks=[
            free[0], TaskSpec(id=TASK, title="t", objective="", template=TASK), free[1]])


def test_free_form_tasks_are_named_as_not_run_on_the_fleet() -> None:
    fake = _Fake()
    answer, ev, _ = _run(fake, tasks=None, planner=_FreeForm())
    assert [t.id for t in fake.batches[0].tasks] == [TASK]
    note = ("not run on the fleet (free-form, they need a model on each host): "
            "look-a, look-b")
    assert note in _one(ev, "plan", "event")["data"]["notes"] and note in answer.notes
    assert list(answer.tasks) == [TASK]


def test_a_plan_without_tasks_sends_the_default_deadline() -> None:
    class Nothing:
        async def plan(self, question: str) -> Plan:
            return Plan(question=question, mode="llm", tasks=[])

    fake = _Fake()
    _run(fake, tasks=None, planner=Nothing())
    assert fake.batches[0].tasks == [] and fake.batches[0].deadline_s == 120.0


def test_the_callers_task_limit_cuts_the_plan_sent() -> None:
    fake = _Fake()
    answer, _, _ = _run(fake, tasks=[TASK, "nccl-env"], limits=Limits(max_tasks=1))
    assert [t.id for t in fake.batches[0].tasks] == [TASK]
    assert "plan cut from 2 to 1 tasks by the caller's limit" in answer.notes


def test_the_notes_say_how_it_ran_what_the_transport_said_and_doubles() -> None:
    fake = _Fake(script=[HostOutcome(host=h, status="unreachable", error="down")
                         for h in ("h1", "h1", "h2", "h3")])
    fake.notes = lambda: ["node h2 is drained"]  # type: ignore[attr-defined]
    answer, _, _ = _run(fake)
    assert answer.notes[:3] == [
        "Fleet run over fake: each host ran the batch with its own agentkit; values are "
        "compared as canonical JSON.",
        "node h2 is drained",
        "the transport reported 1 hosts twice; the first outcome of each counts"]
    plain, _, _ = _run(_Fake())
    assert not any("twice" in n for n in plain.notes)
    assert plain.notes[0].startswith("Fleet run over fake:")


def test_a_transport_that_breaks_fails_the_hosts_not_heard_from_saying_why() -> None:
    fake = _Fake(script=[HostOutcome(host="h1", status="unreachable", error="down")],
                 fail=RuntimeError("socket gone"))
    answer, ev, _ = _run(fake)
    assert answer.fleet is not None
    assert answer.fleet.buckets == {"unreachable": "h1", "failed": "h[2-3]"}
    errors = {e["data"]["host"]: (e["data"]["status"], e["data"]["error"])
              for e in ev if e["kind"] == "host"}
    why = "the transport failed before this host's outcome: RuntimeError: socket gone"
    assert errors == {"h1": ("unreachable", "down"), "h2": ("failed", why),
                      "h3": ("failed", why)}


def test_a_host_the_transport_never_mentions_is_failed_saying_so() -> None:
    _, ev, _ = _run(_Fake(script=[]))
    assert [(e["data"]["host"], e["data"]["status"], e["data"]["error"])
            for e in ev if e["kind"] == "host"] == [
        (h, "failed", "the transport reported nothing for this host") for h in ("h1", "h2", "h3")]


def test_an_inventory_error_from_the_transport_stops_the_run_as_an_error() -> None:
    seen: list[dict[str, Any]] = []
    fake = _Fake(script=[], fail=InventoryError("no such job"))
    fleet = Orchestrator.fleet(fake, trace=Trace(listener=seen.append))
    with pytest.raises(InventoryError, match="no such job"):
        anyio.run(lambda: fleet.investigate("q", tasks=[TASK]))
    end = _one(seen, "run", "end")["data"]
    assert end == {"status": "error", "error": repr(InventoryError("no such job"))}
    assert _one(seen, "run", "end")["span"] == _one(seen, "run", "start")["span"]
    assert not [e for e in seen if e["kind"] == "host"]


def test_the_fleet_deadline_times_out_the_hosts_still_running_and_says_so() -> None:
    fake = _Fake(script=[HostOutcome(host="h1", status="unreachable", error="down")], hang=True)
    answer, ev, _ = _run(fake, limits=Limits(deadline_s=0.3))
    assert answer.fleet is not None
    assert answer.fleet.buckets == {"unreachable": "h1", "timed-out": "h[2-3]"}
    late = [(e["data"]["host"], e["data"]["error"]) for e in ev
            if e["kind"] == "host" and e["data"]["status"] == "timed-out"]
    assert late == [(h, "the run deadline passed first") for h in ("h2", "h3")]


def test_a_planner_past_the_deadline_stops_the_run_before_any_host() -> None:
    class Slow:
        async def plan(self, question: str) -> Plan:
            await anyio.sleep(3600)
            raise AssertionError("not reached")

    fake = _Fake()
    with pytest.raises(TimeoutError):
        _run(fake, tasks=None, planner=Slow(), limits=Limits(deadline_s=0.2))
    assert fake.asked == []


def test_the_answers_wall_time_is_the_runs_own_to_the_microsecond() -> None:
    t0 = time.perf_counter()
    answer, _, _ = _run(_Fake())
    # a run takes some time, none of it outside the call; agentkit writes every wall_s
    # to the microsecond (the tasks', the hosts', a one-host answer's)
    assert 0 < answer.usage.wall_s <= time.perf_counter() - t0
    assert answer.usage.wall_s == round(answer.usage.wall_s, 6)


class _Tuples:
    """A planner handing over a tuple in a task's inputs, as Python code may."""

    async def plan(self, question: str) -> Plan:
        return Plan(question=question, mode="llm", tasks=[TaskSpec(
            id=TASK, title="t", objective="", template=TASK,
            inputs={"question": question, "paths": ("/etc", "/opt")})])


def test_what_the_trace_hands_on_is_json_as_the_file_holds_it() -> None:
    # listeners (a stream, MCP) get the data the file gets: JSON values, no tuples
    ok = [HostOutcome(host=h, status="ok", results=[TaskResult(
        task_id=TASK, status="ok", summary="", facts={"pair": Fact(value=(1, 2))})])
        for h in ("h1", "h2", "h3")]
    _, ev, _ = _run(_Fake(script=ok), tasks=None, planner=_Tuples())
    for kind, phase in (("plan", "event"), ("synthesize", "end")):
        data = _one(ev, kind, phase)["data"]
        assert json.loads(json.dumps(data)) == data, kind


def test_an_interrupt_ends_the_run_as_cancelled() -> None:
    seen: list[dict[str, Any]] = []
    fake = _Fake(script=[], fail=KeyboardInterrupt())
    fleet = Orchestrator.fleet(fake, trace=Trace(listener=seen.append))
    with pytest.raises(KeyboardInterrupt):
        anyio.run(lambda: fleet.investigate("q", tasks=[TASK]))
    assert _one(seen, "run", "end")["data"]["status"] == "cancelled"


def test_a_stream_gives_one_host_event_per_host_then_the_answer() -> None:
    async def go() -> list[Any]:
        async with Orchestrator.fleet(_Fake()) as fleet:
            return [e async for e in fleet.stream("Which driver?", tasks=["nccl-env", TASK],
                                                  limits=Limits(max_tasks=1))]

    events = anyio.run(go)
    hosts = [e for e in events if e.kind == "host_finished"]
    assert [(e.host, e.status, e.done, e.total) for e in hosts] == [
        ("h1", "unreachable", 1, 3), ("h2", "unreachable", 2, 3), ("h3", "unreachable", 3, 3)]
    assert events[-1].kind == "answer" and events[-1].answer.question == "Which driver?"
    assert [t.id for t in next(e for e in events if e.kind == "plan").plan.tasks] == [
        "nccl-env"]


def test_leaving_the_fleet_closes_its_orchestrator() -> None:
    closed: list[bool] = []
    fleet = Orchestrator.fleet(_Fake())

    async def aclose() -> None:
        closed.append(True)

    fleet.orchestrator.aclose = aclose  # type: ignore[method-assign]

    async def go() -> None:
        async with fleet as f:
            assert f is fleet

    anyio.run(go)
    assert closed == [True] and fleet._live is fleet.orchestrator._live
