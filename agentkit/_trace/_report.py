"""The HTML report: one self-contained file (no network fetches) with the answer, clickable
citations that reveal their evidence, and a timeline of orchestrator and subagents."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2

from .._fleet_model import MAX_GROUPS
from .._types import Answer, Citation
from ._read import TraceFile
from ._timeline import build

LABEL_W, WIDTH, ROW_H = 170, 900, 22


@lru_cache(maxsize=1)
def _template() -> jinja2.Template:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(Path(__file__).parent.parent / "_templates")),
        autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    return env.get_template("report.html.j2")


def _ticks(duration: float) -> list[dict[str, Any]]:
    # at most 11 ticks whatever the duration: a step of whole 10 minutes past an hour and a
    # half (a fixed step made a trace spanning years allocate millions of them)
    step = next((s for s in (0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300)
                 if duration / s <= 10), 600 * math.ceil(duration / 6000))
    n = int(duration / step) + 1
    return [{"x": WIDTH * i * step / max(duration, 1e-9),
             "label": f"{i * step * 1000:g} ms" if step < 1 else f"{i * step:g} s"}
            for i in range(n)]


@dataclass
class GroupView:
    """One value of a fact across the fleet, as the report shows it."""

    # "majority", "outlier", "tied" (no value has more hosts than the others), or "more" (the
    # values past MAX_GROUPS, counted)
    role: str
    text: str
    nodes: str
    count: int
    cites: list[tuple[int, Citation]]  # (reference number, what it cites, with its host)


@dataclass
class FactView:
    task: str
    fact: str
    groups: list[GroupView]


def fleet_facts(answer: Answer, num: dict[str, int]) -> tuple[list[FactView], list[FactView]]:
    """The fleet's facts that differ (each value group: majority first, then the outliers,
    with the evidence the answer cites for it), and those the same on every host.

    >>> from agentkit._fleet_model import Fleet, FleetFact, FleetGroup
    >>> fleet = Fleet(transport="t", hosts=3, facts=[FleetFact(task="t", fact="k", groups=[
    ...     FleetGroup(text="1", nodes="n[1-2]", count=2), FleetGroup(text="2", nodes="n3",
    ...                                                              count=1)])])
    >>> a = Answer(question="q", mode="catalog", bottom_line=[], fleet=fleet)
    >>> [g.role for g in fleet_facts(a, {})[0][0].groups]
    ['majority', 'outlier']
    """
    cited = {c.id: c for c in answer.citations}
    differ: list[FactView] = []
    same: list[FactView] = []
    # the compared facts first (templates' ``compare:``: NCCL_PROTO, engine, …), then the
    # task's facts whole
    facts = [*answer.fleet.compared, *answer.fleet.facts] if answer.fleet else []
    for f in facts:
        groups = [GroupView(role=_role(f.majority, n), text=_where(g.text, g.where), nodes=g.nodes,
                            count=g.count,
                            cites=[(num[i], cited[i]) for i in g.evidence if i in num])
                  for n, g in enumerate(f.groups[:MAX_GROUPS])]
        rest = f.groups[MAX_GROUPS:]  # a value per host (a serial number) is not a table
        if rest:
            groups.append(GroupView(role="more", text=f"{len(rest)} more values", nodes="…",
                                    count=sum(g.count for g in rest), cites=[]))
        (same if f.uniform else differ).append(FactView(f.task, f.label or f.fact, groups))
    return differ, same


def _where(text: str, where: list[str]) -> str:
    return f"{text} (set at {', '.join(where)})" if where else text


def _role(majority: bool, position: int) -> str:
    if not majority:
        return "tied"
    return "majority" if position == 0 else "outlier"


def render_report(tf: TraceFile) -> str:
    t = build(tf)
    answer = Answer.model_validate(t.answer) if t.answer else None
    num = {c.id: n for n, c in enumerate(answer.citations, 1)} if answer else {}
    differ, same = fleet_facts(answer, num) if answer else ([], [])
    scale = WIDTH / max(t.duration, 1e-9)
    return _template().render(t=t, a=answer, num=num, label_w=LABEL_W, width=WIDTH,
                              row_h=ROW_H, x=lambda s: round(max(s, 0.0) * scale, 2),
                              ticks=_ticks(t.duration), differ=differ, same=same)
