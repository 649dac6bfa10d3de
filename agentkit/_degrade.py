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

from ._agents._findings import findings_answer
from ._llm._messages import ModelError
from ._types import Answer, Plan, TaskResult

_log = logging.getLogger("agentkit")

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
