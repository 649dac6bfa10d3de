"""Degrade, never discard: when the model cannot write the answer, the tasks' own findings
still make one.

A synthesis call that fails (HTTP error, a context limit, a stall past the run deadline) or
never validates must not throw away what the tasks established with evidence: the catalog's
template synthesizer, which needs no model, merges the findings instead, and the answer's
notes say that the model did not write it. The same applies when the run deadline has passed
before synthesis starts: the answer is made from the findings at once.
"""

from __future__ import annotations

import logging
import math
from typing import Protocol

import anyio

from ._llm._messages import ModelError
from ._types import Answer, Plan, SubQuestion, TaskResult

_log = logging.getLogger("agentkit")

# The template synthesizer's first note says catalog mode ran because no LLM is configured;
# in a degraded LLM run that is untrue, so it is replaced by the reason the model did not write.
_CATALOG_NOTE = "Catalog mode (no LLM configured)"


class _Synthesizer(Protocol):
    async def synthesize(self, question: str, plan: Plan,
                         results: list[TaskResult]) -> Answer: ...


async def synthesize_in_time(synthesizer: _Synthesizer, question: str, plan: Plan,
                             results: list[TaskResult], deadline: float) -> Answer:
    """``synthesizer.synthesize`` bounded by ``deadline`` (anyio's clock); past it, or when the
    model call fails, the answer is merged from the findings without a model. Either way no
    claim may contradict a verdict a catalog recipe established (``_catalog._guard``)."""
    from ._catalog._guard import uphold
    from ._catalog._synth import TemplateSynthesizer

    synth = synthesizer.synthesize
    if isinstance(synthesizer, TemplateSynthesizer):  # no model call to bound
        return await synth(question, plan, results)
    left = deadline - anyio.current_time()
    if left <= 0:
        why = "the run deadline had passed before synthesis began"
    else:
        try:
            with anyio.fail_after(left if deadline < math.inf else None):
                answer = await synth(question, plan, results)
            # a model's merge may not overturn what the catalog's recipes decided
            return uphold(answer, plan, results)
        except TimeoutError:
            why = "the run deadline passed during the synthesis call"
        except ModelError as exc:
            why = f"the synthesis call failed ({exc})"
    _log.warning("synthesizing from the tasks' findings: %s", why)
    return uphold(await findings_answer(question, plan, results, why), plan, results)


async def findings_answer(question: str, plan: Plan, results: list[TaskResult],
                          why: str) -> Answer:
    """The tasks' findings merged by the template synthesizer; ``why`` the model did not
    write the answer goes first in its notes."""
    from ._catalog._synth import TemplateSynthesizer

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
    from ._catalog._planner import split_question

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
