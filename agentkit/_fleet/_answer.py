"""The fleet answer: the bottom line (``_bottom``: the verdict, one line per differing
compared fact, the hosts that did not answer), the compared facts and each task's facts as
sections (majority first, outliers named and cited with their own evidence), and a table of
what differs."""

from __future__ import annotations

from typing import Any

from .._citations import finalize
from .._fleet_model import MAX_GROUPS, Fleet, FleetFact, FleetGroup
from .._types import Answer, Cell, Claim, Evidence, Plan, Section, Table, TaskStatus, Usage
from ._bottom import bottom_line, merged


def fleet_answer(question: str, plan: Plan, fleet: Fleet, index: dict[str, Evidence],
                 notes: list[str], usage: Usage | None = None) -> Answer:
    """The answer for ``fleet``; ``index`` resolves the groups' evidence ids."""
    by_task: dict[str, list[FleetFact]] = {}
    for f in fleet.facts:
        by_task.setdefault(f.task, []).append(f)
    sections = [_compared_section(fleet)] if fleet.compared else []
    rows = [r for f in merged([f for f in fleet.compared if not f.uniform]) for r in _rows(f)]
    tasks: dict[str, TaskStatus] = {}
    unanswered = []
    for spec in plan.tasks:
        facts = by_task.get(spec.id, [])
        if not facts:
            unanswered.append(spec.id)
            tasks[spec.id] = "failed"
            continue
        tasks[spec.id] = _status(facts)
        rows += [r for f in facts if not f.uniform for r in _rows(f)]
        sections.append(_section(spec.id, facts))
    table = Table(title="Fleet: what differs", columns=["fact", "value", "nodes", "hosts"],
                  rows=rows) if rows else None
    answer = Answer(question=question, mode="catalog",
                    bottom_line=bottom_line(question, fleet, unanswered), sections=sections,
                    table=table, tasks=tasks,
                    failed_tasks=[t for t, s in tasks.items() if s == "failed"],
                    notes=[*notes, *plan.notes], usage=usage or Usage(), fleet=fleet)
    return finalize(answer, index)


def _compared_section(fleet: Fleet) -> Section:
    """Every compared fact, the same ones too: what a person would check host by host."""
    claims = []
    for f in merged(fleet.compared):
        if f.uniform and f.groups:
            g = f.groups[0]
            claims.append(Claim(text=f"{f.label}: {_short(g.text)} on all {_hosts(g.count)} "
                                     f"({g.nodes})", evidence=list(g.evidence)))
        else:
            claims += [Claim(text=f"{f.label}: {_short(g.text)} on {g.nodes} "
                                  f"({_hosts(g.count)})" + _at(g), evidence=list(g.evidence))
                       for g in f.groups[:MAX_GROUPS]]
    return Section(title="Fleet: compared facts", claims=claims, tasks=[])


def _at(g: FleetGroup) -> str:
    more = [f"{g.where_more} more"] if g.where_more else []
    return f", set at {', '.join([*g.where, *more])}" if g.where else ""


def _hosts(n: int) -> str:
    return f"{n} host" if n == 1 else f"{n} hosts"


def _short(text: str) -> str:
    return text if len(text) <= 80 else text[:77] + "…"


def _status(facts: list[FleetFact]) -> TaskStatus:
    status = next((f for f in facts if f.fact == "status"), None)
    if status is None or not status.majority or not status.groups:
        return "partial"
    value: Any = status.groups[0].value
    return value if value in ("ok", "partial", "failed", "timed-out") else "partial"


def _rows(f: FleetFact) -> list[list[Cell]]:
    label = (f.label or f"{f.task} · {f.fact}") + ("" if f.majority else " (no majority)")
    shown: list[FleetGroup] = f.groups[:MAX_GROUPS]
    rows = [[Cell(text=label), Cell(text=g.text + _at(g), evidence=list(g.evidence)),
             Cell(text=g.nodes), Cell(text=str(g.count))] for g in shown]
    if len(f.groups) > MAX_GROUPS:
        rest = f.groups[MAX_GROUPS:]
        rows.append([Cell(text=label), Cell(text=f"{len(rest)} more values"), Cell(text="…"),
                     Cell(text=str(sum(g.count for g in rest)))])
    return rows


def _section(task: str, facts: list[FleetFact]) -> Section:
    same = [f.fact for f in facts if f.uniform and f.fact not in ("status", "findings")]
    claims = [Claim(text=f"{f.fact}: {_short(g.text)} on {g.nodes} ({_hosts(g.count)})",
                    evidence=list(g.evidence))
              for f in facts if not f.uniform for g in f.groups[:MAX_GROUPS]]
    if same:
        claims.append(Claim(text=f"The same on every host that answered: {', '.join(same)}."))
    return Section(title=f"Fleet: {task}", claims=claims, tasks=[task])
