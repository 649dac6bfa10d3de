"""Replaying a fleet trace offline: the recorded outcomes folded again, no host contacted.
The answer is rebuilt from what each host reported, so it equals the recorded one unless the
fold itself changed."""

from __future__ import annotations

from typing import Any

from .._fleet._answer import fleet_answer
from .._fleet._fold import Fold
from .._fleet._meaning import compare_specs
from .._fleet._names import InventoryError, expand
from .._fleet._outcome import HostOutcome
from .._fleet._record import read_outcomes
from .._trace._read import TraceError, TraceFile
from .._types import Answer, Plan
from ._result import ReplayResult


def is_fleet(tf: TraceFile) -> bool:
    """Whether ``tf`` records a fleet run."""
    run = tf.first("run", "start")
    return run is not None and isinstance(run.data.get("fleet"), dict)


def replay_fleet(tf: TraceFile) -> ReplayResult:
    """The fleet answer rebuilt from the trace's host events."""
    run = tf.first("run", "start")
    plan_ev = tf.first("plan")
    assert run is not None
    info: dict[str, Any] = run.data["fleet"]
    try:
        hosts = expand(str(info.get("hosts") or "")) if info.get("count") else []
        outcomes = read_outcomes(tf.events)
    except (InventoryError, ValueError) as exc:
        raise TraceError(tf.path, 0, f"fleet record: {exc}") from None
    notes = list(tf.notes)
    if plan_ev is None:
        notes.append("no answer: the recorded run stopped before it planned")
        return ReplayResult(answer=None, recorded=None, identical=False, notes=notes,
                            tasks={}, incomplete=[])
    plan = Plan.model_validate(plan_ev.data)
    fold = Fold(str(info.get("transport") or "?"), hosts, [t.id for t in plan.tasks],
                compare_specs(plan))
    asked = set(hosts)
    for o in outcomes:
        if o.host not in asked:  # as the live run does: an outcome for a host never asked
            notes.append(f"the trace has an outcome for {o.host!r}, which the run did not "
                         "ask; not counted")
            continue
        fold.add(o)
    lost = fold.missing()
    if lost:
        notes.append(f"{len(lost)} hosts have no recorded outcome (the run stopped first); "
                     "they are failed here")
    for h in lost:
        fold.add(HostOutcome(host=h, status="failed", error="no outcome recorded: the run "
                             "stopped before this host finished"))
    recorded = _recorded(tf)
    answer = fleet_answer(plan.question, plan, fold.fleet(), fold.evidence(),
                          _run_notes(recorded, str(info.get("transport") or "?")))
    identical = False
    if recorded is not None:
        answer.usage = recorded.usage
        identical = answer.model_dump_json() == recorded.model_dump_json()
    return ReplayResult(answer=answer, recorded=recorded, identical=identical, notes=notes,
                        tasks=dict(answer.tasks), incomplete=[])


def _recorded(tf: TraceFile) -> Answer | None:
    end = tf.first("synthesize", "end")
    return Answer.model_validate(end.data["answer"]) if end is not None else None


def _run_notes(recorded: Answer | None, transport: str) -> list[str]:
    """The notes the recorded run wrote ahead of the plan's own (fleet_answer adds those)."""
    if recorded is None:
        return [f"Fleet run over {transport}, replayed from its trace."]
    return [n for n in recorded.notes if n.startswith(("Fleet run over", "the transport "))]
