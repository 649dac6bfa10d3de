"""The fleet's bottom line, readable in ten seconds: the verdict ("No: 4 of 198 hosts
differ"), one line per differing compared fact in plain words (``NCCL_PROTO: LL on 194 hosts
(gpu[001-016,…]); Simple on gpu[017,042,163] (serve.service:15); unset on gpu099``), the
hosts that did not answer with their reason; at most :data:`MAX_BULLETS` bullets. Facts that
follow from a listed difference (the environment dictionary, the command line, the claims
built from them) are not listed again: the table below has every one."""

from __future__ import annotations

import os
import re

from .._fleet_model import ANSWERED, MAX_GROUPS, Fleet, FleetFact, FleetGroup
from .._types import Claim

MAX_BULLETS = 8
MAX_PROBLEMS = 3  # reasons spelled out when facts differ too (the rest are counted)
MAX_NODES = 40  # characters of a node range in the bottom line (the table has it whole)
MAX_REASON = 200
# A question about sameness is answered "Yes"/"No" (one about difference the other way
# round); any other question ("Is NCCL tuned?") gets "the same"/"not the same", since a
# uniform fleet is not a "yes" to it: the verdicts that hold everywhere say that.
_SAME = re.compile(r"\b(same|identical|consistent|uniform|match(es)?|alike)\b", re.I)
_DIFFER = re.compile(r"\b(differ(s|ent|ence|ences)?|drift(ed)?|mismatch(es|ed)?)\b", re.I)
VERDICT = "verdict: "  # how templates label a compared verdict


def bottom_line(question: str, fleet: Fleet, unanswered: list[str]) -> list[Claim]:
    """The bullets, verdict first."""
    differing = merged([f for f in fleet.compared if not f.uniform])
    facts = [_fact_line(f) for f in differing]
    extra = [c for c in (_also(fleet, differing),) if c is not None]
    if unanswered and _answered(fleet):
        extra.append(Claim(text=f"No host answered: {', '.join(unanswered)}."))
    problems = [Claim(text=f"{p.bucket} on {_short_nodes(p.nodes)} ({_hosts(p.count)}): "
                           f"{_cut(p.error, MAX_REASON)}") for p in fleet.problems]
    room = MAX_BULLETS - 1 - len(extra)
    n_prob = min(len(problems), MAX_PROBLEMS if facts else room)
    n_fact = min(len(facts), room - n_prob)
    n_prob = min(len(problems), room - n_fact)
    labels = [f.label for f in differing]
    return [_verdict(question, fleet, [f for f in merged(fleet.compared) if f.uniform]),
            *_fit(facts, n_fact, lambda rest: _more_facts(labels[len(labels) - rest:])),
            *extra, *_fit(problems, n_prob, lambda rest: _more_problems(fleet, rest))]


def merged(facts: list[FleetFact]) -> list[FleetFact]:
    """One fact per label where the tasks that declare it agree host for host (``engine``
    from two tasks is one line); where they do not, each is kept, named with its task."""
    by_label: dict[str, list[FleetFact]] = {}
    for f in facts:
        by_label.setdefault(f.label or f.fact, []).append(f)
    out: list[FleetFact] = []
    for label, same in by_label.items():
        shapes = {tuple((g.text, g.nodes) for g in f.groups) for f in same}
        if len(shapes) == 1:
            out.append(same[0].model_copy(update={"label": label}))
        else:
            out += [f.model_copy(update={"label": f"{f.task}: {label}"}) for f in same]
    return out


def _answered(fleet: Fleet) -> int:
    return sum(fleet.counts.get(b, 0) for b in ANSWERED)


def _verdict(question: str, fleet: Fleet, uniform: list[FleetFact]) -> Claim:
    answered, odd = _answered(fleet), fleet.counts.get("differs", 0)
    same, differ = bool(_SAME.search(question)), bool(_DIFFER.search(question))
    silent = fleet.hosts - answered
    rest = f"; {_hosts(silent)} did not answer with anything to compare" if silent else ""
    if answered == 0:
        return Claim(text=f"Not established: no host answered with anything to compare "
                          f"({fleet.recap}).")
    if odd == 0:
        lead = "Yes: t" if same else "No: t" if differ else "T"
        every = "the one host" if answered == 1 else f"all {_hosts(answered)}"
        text = (f"{lead}he same on {every} that answered "
                f"({_short_nodes(fleet.buckets.get('ok', ''))}){rest}")
    else:
        lead = "No" if same else "Yes" if differ else "Not the same"
        text = (f"{lead}: {odd} of {_hosts(answered)} differ "
                f"({_short_nodes(fleet.buckets.get('differs', ''))}){rest}")
    verdicts = [f for f in uniform if f.label.startswith(VERDICT) and f.groups]
    held = "; ".join(f"{f.label[len(VERDICT):]}: {_value(f.groups[0])}" for f in verdicts)
    if held:
        text += f". Everywhere that answered, {held}"
    return Claim(text=f"{text}. Recap: {fleet.recap}.",
                 evidence=list(dict.fromkeys(i for f in verdicts for i in f.groups[0].evidence)))


def _fact_line(f: FleetFact) -> Claim:
    head, *others = f.groups
    shown = others[:4] if f.majority else f.groups[:4]
    parts = [f"{_value(g)} on {_where(g)}" for g in shown]
    more = (others if f.majority else f.groups)[len(shown):]
    if more:
        values = "1 more value" if len(more) == 1 else f"{len(more)} more values"
        parts.append(f"{values} on {_hosts(sum(g.count for g in more))}")
    ids = [i for g in shown for i in g.evidence]
    if f.majority:
        lead = f"{_value(head)} on {_hosts(head.count)} ({_short_nodes(head.nodes)}); "
        text = f"{f.label}: {lead}{'; '.join(parts)}."
        ids += head.evidence
    else:
        text = f"{f.label}: split with no majority: {'; '.join(parts)}."
    return Claim(text=text, evidence=list(dict.fromkeys(ids)))


def _value(g: FleetGroup) -> str:
    return _cut(g.text, 80)


def _where(g: FleetGroup) -> str:
    nodes = _short_nodes(g.nodes)
    if nodes != g.nodes:
        nodes += f" ({_hosts(g.count)})"
    if g.where:
        places = [_place(w) for w in g.where] + ([f"{g.where_more} more"] if g.where_more
                                                  else [])
        nodes += f" ({', '.join(places)})"
    return nodes


def _place(where: str) -> str:
    """``/etc/systemd/system/serve.service:15`` as ``serve.service:15``: the file's
    name and line (the table and the evidence carry the whole path)."""
    return ", ".join(os.path.basename(w.strip()) or w.strip() for w in where.split(","))


def _also(fleet: Fleet, listed: list[FleetFact]) -> Claim | None:
    """Hosts that differ on something no compared fact shows (a fact of a task that
    declares none, or one the declarations leave out): named once, facts counted."""
    covered = {h for f in listed for g in _outliers(f) for h in _names(g.nodes)}
    odd: dict[str, None] = {}
    hosts: set[str] = set()
    for f in fleet.facts:
        for g in _outliers(f):
            new = set(_names(g.nodes)) - covered
            if new:
                hosts |= new
                odd[f"{f.task} · {f.fact}"] = None
    if not hosts:
        return None
    from ._names import fold

    names = list(odd)
    listed_names = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4
                                           else "")
    return Claim(text=f"Also differs on {_short_nodes(fold(sorted(hosts)))} "
                      f"({_hosts(len(hosts))}): {listed_names} (see the table).")


def _outliers(f: FleetFact) -> list[FleetGroup]:
    if f.uniform:
        return []
    return f.groups[1:] if f.majority else f.groups


def _names(nodes: str) -> list[str]:
    from ._names import expand

    return expand(nodes)


def _fit(lines: list[Claim], n: int, more: object) -> list[Claim]:
    if len(lines) <= n:
        return lines
    if n <= 0:
        return []
    return [*lines[:n - 1], more(len(lines) - n + 1)]  # type: ignore[operator]


def _more_facts(labels: list[str]) -> Claim:
    named = ", ".join(labels[:5]) + (", …" if len(labels) > 5 else "")
    more = ("1 more compared fact differs" if len(labels) == 1 else
            f"{len(labels)} more compared facts differ")
    return Claim(text=f"{more}: {named} (see the table).")


def _more_problems(fleet: Fleet, rest: int) -> Claim:
    left = fleet.problems[len(fleet.problems) - rest:]
    n = sum(p.count for p in left)
    return Claim(text=f"{n} more {'host' if n == 1 else 'hosts'} did not answer, for "
                      f"{'1 other reason' if rest == 1 else f'{rest} other reasons'} "
                      f"({', '.join(sorted({p.bucket for p in left}))}; "
                      "see the buckets below).")


def _short_nodes(nodes: str) -> str:
    """A node range cut to about :data:`MAX_NODES` characters at a comma, brackets closed:
    ``gpu[001-016,018-041,…]``."""
    if len(nodes) <= MAX_NODES:
        return nodes
    cut = nodes.rfind(",", 0, MAX_NODES)
    if cut <= 0:
        return nodes
    head = nodes[:cut]
    return head + ",…" + ("]" if head.count("[") > head.count("]") else "")


def _cut(text: str, n: int) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= n else text[:n - 1] + "…"


def _hosts(n: int) -> str:
    return f"{n} host" if n == 1 else f"{n} hosts"


__all__ = ["MAX_BULLETS", "MAX_GROUPS", "bottom_line", "merged"]
