"""The template synthesizer: merges catalog task results into an answer without a model.

Per sub-question: the headline findings of the tasks it matched form its bottom line, and all
their findings its section. A ``table`` fact (model-diff) becomes the comparison table.
"""

from __future__ import annotations

from .._citations import evidence_index, finalize
from .._types import Answer, Cell, Claim, Plan, Section, Table, TaskResult, Usage, failure_note


class TemplateSynthesizer:
    async def synthesize(self, question: str, plan: Plan, results: list[TaskResult]) -> Answer:
        by_id = {r.task_id: r for r in results}
        bottom: list[Claim] = []
        sections: list[Section] = []
        used: set[str] = set()
        for n, sub in enumerate(plan.subquestions, 1):
            claims: list[Claim] = []
            before = len(bottom)
            for tid in sub.tasks:
                r = by_id.get(tid)
                if r is None:
                    continue
                for f in r.findings:
                    if f.headline and tid not in used:
                        bottom.append(Claim(text=f.claim,
                                            evidence=list(f.evidence)))
                    if tid not in used or f.headline:
                        claims.append(Claim(text=f.claim, evidence=list(f.evidence)))
                used.add(tid)
            if len(bottom) == before and sub.tasks:
                bottom.append(_not_established(sub.text, [by_id[t] for t in sub.tasks
                                                          if t in by_id]))
            title = f"Question {n}: {sub.text}" if len(plan.subquestions) > 1 else sub.text
            sections.append(Section(title=title, claims=_dedupe(claims), tasks=sub.tasks))
        support = [Claim(text=f.claim, evidence=list(f.evidence))
                   for r in results if r.task_id not in used for f in r.findings]
        if support:
            sections.append(Section(title="Supporting facts", claims=support,
                                    tasks=[r.task_id for r in results if r.task_id not in used]))
        failed = [r for r in results if r.status in ("failed", "timed-out")]
        notes = ["Catalog mode (no LLM configured): tasks chosen from the task catalog and run "
                 "as recipes, in parallel."]
        notes += [f"{t.id}: {t.reason}" for t in plan.tasks]
        notes += plan.notes
        notes += [failure_note(r) for r in failed]
        notes += [f"{r.task_id} partial: {'; '.join(r.errors)}" for r in results
                  if r.status == "partial" and r.errors]
        answer = Answer(
            question=question, mode="catalog", bottom_line=_dedupe(bottom), sections=sections,
            table=_table(results), tasks={r.task_id: r.status for r in results},
            failed_tasks=[r.task_id for r in failed], notes=notes,
            usage=sum((r.usage for r in results), Usage()))
        return finalize(answer, evidence_index(results))


def _not_established(question: str, results: list[TaskResult]) -> Claim:
    reasons = sorted({r.errors[0].split(": ", 1)[-1] for r in results if r.errors})
    why = "; ".join(reasons[:2]) or "the tasks found nothing to state"
    return Claim(text=f"Not established for {question!r}: {why}.")


def _dedupe(claims: list[Claim]) -> list[Claim]:
    seen: set[str] = set()
    out = []
    for c in claims:
        if c.text not in seen:
            seen.add(c.text)
            out.append(c)
    return out


def _table(results: list[TaskResult]) -> Table | None:
    for r in results:
        fact = r.facts.get("table")
        if fact and isinstance(fact.value, dict):
            v = fact.value
            rows = [[Cell(text=c["text"], evidence=c["evidence"]) for c in row]
                    for row in v["rows"]]
            return Table(title=v["title"], columns=v["columns"], rows=rows)
    return None
