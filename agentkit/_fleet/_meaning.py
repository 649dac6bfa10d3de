"""The facts a person compares across a fleet, read out of one host's task result as each
template's ``compare:`` declares them: the NCCL variables one by one (value and where it is
set), engine, version, model, TP size, each verdict. The fold groups hosts by these, so a
changed line reads as ``NCCL_PROTO: Simple on gpu[017,042,163]`` rather than as a changed
environment dictionary and twenty facts built from it."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from .._catalog._template import Compare
from .._types import Plan, TaskResult

UNSET = "unset"  # an ``each`` setting the host's list does not have: NCCL uses its default


@dataclass(frozen=True)
class Meaning:
    """One compared value of one host: its label, value, where it was set, its evidence."""

    label: str
    value: Any
    where: str
    cites: tuple[str, ...]
    each: str = ""  # the list fact it is a setting of (``each: true``), else ""


def compare_specs(plan: Plan) -> dict[str, list[Compare]]:
    """Each planned task's ``compare:`` declaration, by task id (bundled templates: the ones
    a fleet host runs)."""
    from ._batch import bundled_catalog

    cat = bundled_catalog()
    return {t.id: list(cat[t.template].compare) for t in plan.tasks
            if t.template is not None and t.template in cat and cat[t.template].compare}


def meanings(result: TaskResult, specs: Sequence[Compare]) -> Iterator[Meaning]:
    """The compared values ``result`` establishes; a fact it lacks yields nothing (the fold
    says "(not established)" for it)."""
    for spec in specs:
        fact = result.facts.get(spec.fact)
        if fact is None:
            continue
        value: Any = fact.value
        if spec.each:
            yield from _each(spec, value, tuple(fact.evidence))
            continue
        if spec.path is not None:
            if not isinstance(value, dict) or spec.path not in value:
                continue
            value = value[spec.path]
        yield Meaning(spec.label or spec.fact, value, "", tuple(fact.evidence))


def _each(spec: Compare, value: Any, cites: tuple[str, ...]) -> Iterator[Meaning]:
    """One meaning per named setting; a name listed twice with different values is said as
    both (which one wins is not this list's to say), never the first of them."""
    if not isinstance(value, list):
        return
    by_name: dict[str, list[dict[str, Any]]] = {}
    for item in value:
        if isinstance(item, dict) and isinstance(item.get("name"), str):
            by_name.setdefault(item["name"], []).append(item)
    for name, items in by_name.items():
        values = list(dict.fromkeys(str(i.get("value")) for i in items))
        where = ", ".join(dict.fromkeys(str(i.get("where") or "") for i in items if
                                        i.get("where")))
        own = tuple(str(i["evidence_id"]) for i in items if i.get("evidence_id")) or cites
        shown: Any = values[0] if len(values) == 1 else " | ".join(values)
        yield Meaning(name, shown, where, own, spec.fact)


def each_facts(specs: Sequence[Compare]) -> list[str]:
    """The facts of ``specs`` compared setting by setting."""
    return [s.fact for s in specs if s.each]
