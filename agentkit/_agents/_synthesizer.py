"""The LLM synthesizer: the model merges all structured results into one cited answer.

Citations must name evidence some task produced: unknown ids are sent back with the list of
valid ones a bounded number of times; what remains unknown is removed and noted.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from .._citations import evidence_index, finalize, unknown_ids
from .._llm._messages import Message, Model, ToolSpec
from .._llm._schemas import drop_nulls, restrict_everywhere, strict
from .._types import Answer, Claim, Plan, Section, Table, TaskResult, Usage, failure_note
from ._prompts import render
from ._submission import ask_for_submission


class _AnswerSubmission(BaseModel):
    model_config = ConfigDict(extra="forbid")
    bottom_line: list[Claim] = Field(min_length=1)
    sections: list[Section] = Field(default_factory=list)
    table: Table | None = None


class LLMSynthesizer:
    def __init__(self, model: Model, *, max_repairs: int = 2) -> None:
        self.model = model
        self.max_repairs = max_repairs

    async def synthesize(self, question: str, plan: Plan, results: list[TaskResult]) -> Answer:
        index = evidence_index(results)
        schema = _AnswerSubmission.model_json_schema()
        restrict_everywhere(schema, "evidence", sorted(index))  # cite only what tasks saw
        spec = ToolSpec("submit_answer", "Submit the merged, cited answer.", strict(schema),
                        strict=True)
        messages = [Message.system(render("synth_system.j2")),
                    Message.user(render("synth_user.j2", question=question, results=results))]
        usage = Usage()

        def judge(raw: dict[str, Any]) -> tuple[Answer | None, str]:
            answer = self._answer(question, raw, results, plan.notes)
            bad = unknown_ids(answer, index)
            if bad:
                return answer, (f"these evidence ids do not exist: {', '.join(bad)}. Valid "
                                f"ids: {', '.join(sorted(index))}; cite only those")
            bare = [c.text[:60] for c in answer.bottom_line if not c.evidence]
            if bare and index:
                return answer, (f"every bottom-line claim must cite the evidence it rests on; "
                                f"these cite none: {'; '.join(bare)}")
            return answer, ""

        best, _ = await ask_for_submission(
            self.model, messages, spec, task="synthesize", purpose="synthesize",
            tries=self.max_repairs + 1, judge=judge, usage=usage)
        if best is None or (index and not any(c.evidence for c in best.bottom_line)):
            # no answer, or one that cites nothing: the tasks' own findings, which do
            from ._findings import findings_answer

            why = ("it gave no valid answer" if best is None else "its answer cited nothing")
            best = await findings_answer(question, plan, results,
                                         f"{why} after {self.max_repairs + 1} tries")
            best.usage = usage
            return best
        best.usage = usage
        return finalize(best, index)

    def _answer(self, question: str, raw: dict[str, Any], results: list[TaskResult],
                plan_notes: list[str] | None = None) -> Answer:
        sub = _AnswerSubmission.model_validate(drop_nulls(raw))
        failed = [r.task_id for r in results if r.status in ("failed", "timed-out")]
        notes = [*(plan_notes or []),
                 *[failure_note(r) for r in results if r.status in ("failed", "timed-out")]]
        return Answer(question=question, mode="llm", bottom_line=sub.bottom_line,
                      sections=sub.sections, table=sub.table,
                      tasks={r.task_id: r.status for r in results}, failed_tasks=failed,
                      notes=notes)
