"""Citations: every id an answer names must be evidence some task actually produced.

``finalize`` checks the answer's claims against the evidence index, removes (and notes)
unknown ids, and builds the reference list in order of first use.
"""

from __future__ import annotations

from collections.abc import Iterable

from ._types import Answer, Citation, Claim, Evidence, TaskResult


def evidence_index(results: Iterable[TaskResult]) -> dict[str, Evidence]:
    index: dict[str, Evidence] = {}
    for r in results:
        for ev in r.evidence:
            index.setdefault(ev.id, ev)
    return index


def unknown_ids(answer: Answer, index: dict[str, Evidence]) -> list[str]:
    return sorted(answer.cited_ids() - set(index))


def _claims(answer: Answer) -> Iterable[Claim]:
    yield from answer.bottom_line
    for s in answer.sections:
        yield from s.claims


def finalize(answer: Answer, index: dict[str, Evidence]) -> Answer:
    """Drop unknown ids (with a note), then list citations in order of first use."""
    bad = unknown_ids(answer, index)
    if bad:
        answer.notes.append(f"removed citations of evidence that does not exist: {', '.join(bad)}")
    order: list[str] = []
    seen: set[str] = set()

    def use(ids: list[str]) -> list[str]:
        kept = [i for i in ids if i in index]
        for i in kept:
            if i not in seen:
                seen.add(i)
                order.append(i)
        return kept

    for claim in _claims(answer):
        claim.evidence = use(claim.evidence)
    if answer.table:
        for row in answer.table.rows:
            for cell in row:
                cell.evidence = use(cell.evidence)
    answer.citations = [Citation(id=i, kind=index[i].kind, locator=index[i].locator,
                                 excerpt=index[i].excerpt, host=index[i].host) for i in order]
    return answer
