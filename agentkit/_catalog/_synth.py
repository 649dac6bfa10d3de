"""The template synthesizer: merges catalog task results into an answer without a model.

Per sub-question: the headline findings of the tasks it matched form its bottom line, and all
their findings its section. A ``table`` fact (model-diff) becomes the comparison table.
"""

from __future__ import annotations

from .._citations import evidence_index, finalize
from .._types import Answer, Cell, Claim, Plan, Section, Table, TaskResult, Usage, failure_note
from ._framing import frame, is_question


class TemplateSynthesizer:
    async def synthesize(self, question: str, plan: Plan, results: list[TaskResult]) -> Answer:
        by_id = {r.task_id: r for r in results}
        bottom: list[Claim] = []
        sections: list[Section] = []
        used: set[str] = set()
        for n, sub in enumerate(plan.subquestions, 1):
            claims: list[Claim] = []
            before = len(bottom)
            matched = [by_id[t] for t in sub.tasks if t in by_id]
            framed = frame(sub.text, matched)
            lead = framed.claim.text.split(": ", 1)[-1] if framed else None
            alerts = [Claim(text=f.claim, evidence=list(f.evidence)) for r in matched
                      for f in r.findings[: _alert_count(r)]]
            bottom += [a for a in alerts if a.text not in {b.text for b in bottom}]
            if framed:
                bottom.append(framed.claim)
            for r in matched:
                tid = r.task_id
                for f in r.findings[_alert_count(r):]:
                    if f.headline and tid not in used and not _same(f.claim, lead):
                        bottom.append(Claim(text=f.claim, evidence=list(f.evidence)))
                    if tid not in used or f.headline:
                        claims.append(Claim(text=f.claim, evidence=list(f.evidence)))
                used.add(tid)
            if not sub.tasks and is_question(sub.text):
                bottom.append(Claim(text=f"Not answered: {sub.text!r} matches no task in the "
                                         "catalog, so catalog mode cannot answer it (an LLM "
                                         "endpoint can)."))
            elif len(bottom) == before:
                bottom.append(_not_established(sub.text, matched))
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


def _alert_count(r: TaskResult) -> int:
    """Alerts lead a task's findings (see RecipeContext.alert); the result records them as
    the leading findings that are not the template's own."""
    alerts = r.facts.get("alerts")
    return int(alerts.value) if alerts is not None and isinstance(alerts.value, int) else 0


def _same(claim: str, lead: str | None) -> bool:
    if lead is None:
        return False
    return claim == lead or claim[:1].lower() + claim[1:] == lead


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
