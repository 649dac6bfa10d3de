"""The fleet answer: a recap line like Ansible's, per task either "the same on all" or the
facts that differ (majority first, outliers named and cited with their own evidence), a table
of what differs, and the hosts that could not answer, grouped by reason."""

from __future__ import annotations

from typing import Any

from .._citations import finalize
from .._fleet_model import MAX_GROUPS, Fleet, FleetFact, FleetGroup
from .._types import Answer, Cell, Claim, Evidence, Plan, Section, Table, TaskStatus, Usage

MAX_CLAIMS_PER_TASK = 6  # differing facts spelled out in the bottom line; the table has all


def fleet_answer(question: str, plan: Plan, fleet: Fleet, index: dict[str, Evidence],
                 notes: list[str], usage: Usage | None = None) -> Answer:
    """The answer for ``fleet``; ``index`` resolves the groups' evidence ids."""
    by_task: dict[str, list[FleetFact]] = {}
    for f in fleet.facts:
        by_task.setdefault(f.task, []).append(f)
    bottom = [Claim(text=f"{fleet.hosts} hosts ({fleet.transport}): {fleet.recap}.")]
    sections, rows = [], []
    tasks: dict[str, TaskStatus] = {}
    for spec in plan.tasks:
        facts = by_task.get(spec.id, [])
        if not facts:
            bottom.append(Claim(text=f"{spec.id}: no host answered it."))
            tasks[spec.id] = "failed"
            continue
        tasks[spec.id] = _status(facts)
        split = [f for f in facts if not f.uniform]
        bottom += _task_claims(spec.id, facts, split)
        rows += [r for f in split for r in _rows(f)]
        sections.append(_section(spec.id, facts))
    bottom += [Claim(text=f"{p.bucket} on {p.nodes} ({_hosts(p.count)}): {p.error}")
               for p in fleet.problems]
    table = Table(title="Fleet: what differs", columns=["task · fact", "value", "nodes",
                                                        "hosts"], rows=rows) if rows else None
    answer = Answer(question=question, mode="catalog", bottom_line=bottom, sections=sections,
                    table=table, tasks=tasks,
                    failed_tasks=[t for t, s in tasks.items() if s == "failed"],
                    notes=[*notes, *plan.notes], usage=usage or Usage(), fleet=fleet)
    return finalize(answer, index)


def _hosts(n: int) -> str:
    return f"{n} host" if n == 1 else f"{n} hosts"


def _status(facts: list[FleetFact]) -> TaskStatus:
    status = next((f for f in facts if f.fact == "status"), None)
    if status is None or not status.majority or not status.groups:
        return "partial"
    value: Any = status.groups[0].value
    return value if value in ("ok", "partial", "failed", "timed-out") else "partial"


def _task_claims(task: str, facts: list[FleetFact], split: list[FleetFact]) -> list[Claim]:
    findings = next((f for f in facts if f.fact == "findings"), None)
    answered = max(sum(g.count for g in f.groups) for f in facts)
    out: list[Claim] = []
    if not split:
        nodes = facts[0].groups[0].nodes
        every = "the one host" if answered == 1 else f"all {answered} hosts"
        out.append(Claim(text=f"{task}: the same on {every} that answered ({nodes})."))
    if findings is not None and findings.majority and findings.groups:
        lead = findings.groups[0]
        where = f"On {lead.nodes} ({lead.count} of {answered})"
        out += [Claim(text=f"{where}: {c}", evidence=list(lead.evidence))
                for c in lead.value or ()]
    for f in split[:MAX_CLAIMS_PER_TASK]:
        out.append(_differs(task, f))
    if len(split) > MAX_CLAIMS_PER_TASK:
        more = len(split) - MAX_CLAIMS_PER_TASK
        differ = "1 more fact differs" if more == 1 else f"{more} more facts differ"
        out.append(Claim(text=f"{task}: {differ} (see the table)."))
    return out


def _differs(task: str, f: FleetFact) -> Claim:
    """"task: fact is V1 on <outliers>; V0 on <majority>", outliers first, each cited."""
    head = f.groups[0]
    others = f.groups[1:] if f.majority else f.groups
    short = _shorts([g.text for g in [head, *others[:MAX_GROUPS]]])
    parts = [f"{short[g.text]} on {g.nodes} ({_hosts(g.count)})" for g in others[:MAX_GROUPS]]
    if len(others) > MAX_GROUPS:
        rest = others[MAX_GROUPS:]
        values = "1 more value" if len(rest) == 1 else f"{len(rest)} more values"
        parts.append(f"{values} on {_hosts(sum(g.count for g in rest))}")
    ids = [i for g in others[:MAX_GROUPS] for i in g.evidence]
    if f.majority:
        text = (f"{task}: {f.fact} differs: {'; '.join(parts)}, where the other "
                f"{_hosts(head.count)} ({head.nodes}) have {short[head.text]}.")
        ids += head.evidence
    else:
        text = f"{task}: {f.fact} is split with no majority: {'; '.join(parts)}."
    return Claim(text=text, evidence=ids)


def _short(text: str) -> str:
    return text if len(text) <= 80 else text[:77] + "…"


def _shorts(texts: list[str]) -> dict[str, str]:
    """Each text shortened to about 80 characters around where the texts start to differ,
    so values that differ late (a driver version at the end of a long line) still read
    differently; when that cannot tell them apart, they are shown whole (up to 400)."""
    if all(len(t) <= 80 for t in texts):
        return {t: t for t in texts}
    start = max(0, _common(texts) - 30)
    out = {t: ("…" if start else "") + _short(t[start:]) for t in texts}
    if len(set(out.values())) < len(set(texts)):
        out = {t: t if len(t) <= 400 else t[:399] + "…" for t in texts}
    return out


def _common(texts: list[str]) -> int:
    """The length of the texts' common prefix, in characters."""
    first, n = min(texts), 0
    last = max(texts)  # the min and max share the prefix of them all
    while n < len(first) and first[n] == last[n]:
        n += 1
    return n


def _rows(f: FleetFact) -> list[list[Cell]]:
    label = f"{f.task} · {f.fact}" + ("" if f.majority else " (no majority)")
    shown: list[FleetGroup] = f.groups[:MAX_GROUPS]
    rows = [[Cell(text=label), Cell(text=g.text, evidence=list(g.evidence)),
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
