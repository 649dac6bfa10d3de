"""The answer merged from the tasks' own findings by the template synthesizer, for an LLM run
whose model could not write it (``_degrade`` bounds synthesis by the run deadline; the
synthesizer here falls back to it when the model's answers never validate). It lives in the
modes layer, beside the synthesizer that uses it, because it needs only the catalog.
"""

from __future__ import annotations

from .._types import Answer, Plan, SubQuestion, TaskResult

# The template synthesizer's first note says catalog mode ran because no LLM is configured;
# in a degraded LLM run that is untrue, so it is replaced by the reason the model did not write.
_CATALOG_NOTE = "Catalog mode (no LLM configured)"


async def findings_answer(question: str, plan: Plan, results: list[TaskResult],
                          why: str) -> Answer:
    """The tasks' findings merged by the template synthesizer; ``why`` the model did not
    write the answer goes first in its notes."""
    from .._catalog._synth import TemplateSynthesizer

    template = {t.id: t.template for t in plan.tasks}
    # A model subagent's findings are all it has to say (no headline marks): each may lead.
    shown = [r if template.get(r.task_id) else r.model_copy(update={"findings": [
        f.model_copy(update={"headline": True}) for f in r.findings]}) for r in results]
    answer = await TemplateSynthesizer().synthesize(question, _grouped(plan), shown)
    notes = [n for n in answer.notes if not n.startswith(_CATALOG_NOTE)]
    answer.notes = [f"The model did not write this answer: {why}. It is merged from the "
                    "tasks' own findings, without a model.", *notes]
    answer.mode = plan.mode if plan.mode != "catalog" else "llm"
    return answer


def _grouped(plan: Plan) -> Plan:
    """The plan with every task under some sub-question: the template synthesizer builds the
    bottom line per sub-question, and a model's plan may group none (or only some)."""
    from .._catalog._planner import split_question

    ids = [t.id for t in plan.tasks]
    covered = {t for sq in plan.subquestions for t in sq.tasks}
    rest = [i for i in ids if i not in covered]
    if not rest:
        return plan
    if plan.subquestions:
        subs = [*plan.subquestions, SubQuestion(text=plan.question, tasks=rest)]
    else:  # each part of the question frames its own verdict from the tasks it may concern
        subs = [SubQuestion(text=part, tasks=rest)
                for part in split_question(plan.question) or [plan.question]]
    return plan.model_copy(update={"subquestions": subs})
