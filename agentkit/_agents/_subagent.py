"""The LLM subagent: a bounded tool-calling loop that ends in a validated ``TaskResult``.

Each turn the model may call several tools (run concurrently) and, once, ``submit_result``.
A submission that does not validate, or cites evidence the subagent never saw, is sent back
with the reason a bounded number of times; after that the task is recorded as failed.
"""

from __future__ import annotations

import time
from functools import lru_cache
from typing import Any, Literal

import anyio
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .._llm._messages import Message, Model, ModelRequest, ToolCallRequest, ToolSpec
from .._llm._schemas import drop_nulls, strict
from .._sandbox._sandbox import Sandbox
from .._types import Fact, Finding, TaskResult, TaskSpec, Usage
from ._prompts import render, untrusted

SUBMIT = "submit_result"


class Submission(BaseModel):
    """What a subagent hands in through ``submit_result``."""

    # LLM mode only: its validator is built on the first submission, not at import
    model_config = ConfigDict(extra="forbid", defer_build=True)
    status: Literal["ok", "partial"]
    summary: str = Field(min_length=1)
    findings: list[Finding] = Field(default_factory=list)
    facts: dict[str, Fact] = Field(default_factory=dict)


def submit_spec(seen: list[str] | None = None) -> ToolSpec:
    """submit_result's arguments; with ``seen`` (the evidence ids this subagent's tools
    returned so far) a finding may cite only those, and without any the status can only be
    partial (ok needs cited findings). Facts (any JSON value) are accepted but not offered:
    a strict schema cannot say "any value". Built per step, so cheap: the strict base is
    made once and only the path to the evidence enum is copied."""
    if seen is None:
        return _plain_spec()
    return _strict_spec(tuple(seen))


@lru_cache(maxsize=1)
def _plain_spec() -> ToolSpec:
    return ToolSpec(SUBMIT, _SUBMIT_TEXT, Submission.model_json_schema())


@lru_cache(maxsize=1)
def _strict_base() -> dict[str, Any]:
    schema = Submission.model_json_schema()
    schema["properties"].pop("facts", None)
    schema["$defs"].pop("Fact", None)
    return strict(schema)


@lru_cache(maxsize=2048)
def _strict_spec(seen: tuple[str, ...]) -> ToolSpec:
    base = _strict_base()
    finding = dict(base["$defs"]["Finding"])
    props = dict(finding["properties"])
    if seen:
        props["evidence"] = {"anyOf": [{"type": "array", "items": {"type": "string",
                                                                    "enum": list(seen)}},
                                       {"type": "null"}]}
        status = base["properties"]["status"]
    else:  # nothing to cite yet: no evidence to name, and ok (which needs it) not offered
        props.pop("evidence", None)
        status = {**base["properties"]["status"], "enum": ["partial"]}
    finding["properties"] = props
    finding["required"] = list(props)
    schema = {**base, "$defs": {**base["$defs"], "Finding": finding},
              "properties": {**base["properties"], "status": status}}
    return ToolSpec(SUBMIT, _SUBMIT_TEXT, schema, strict=True)


_SUBMIT_TEXT = "Hand in the task's result. Call once, when done."


@lru_cache(maxsize=1)
def _system_prompt() -> Message:
    return Message.system(render("subagent_system.j2"))


class Subagent:
    """Runs one :class:`TaskSpec` with a model and a sandbox."""

    def __init__(self, model: Model, sandbox: Sandbox, spec: TaskSpec, *,
                 max_repairs: int = 2) -> None:
        self.model = model
        self.box = sandbox
        self.spec = spec
        self.max_repairs = max_repairs
        self.usage = Usage()

    async def run(self) -> TaskResult:
        t0 = time.perf_counter()
        try:
            return await self._loop()
        finally:
            self.usage.wall_s = round(time.perf_counter() - t0, 6)
            self.usage.tool_calls = self.box.calls

    def _result(self, status: Any, summary: str, errors: list[str] | None = None,
                sub: Submission | None = None) -> TaskResult:
        return TaskResult(
            task_id=self.spec.id, status=status, summary=summary,
            findings=sub.findings if sub else [], facts=sub.facts if sub else {},
            evidence=self.box.evidence_list(), errors=errors or [], usage=self.usage)

    async def _loop(self) -> TaskResult:
        spec = self.spec
        messages = [_system_prompt(), Message.user(render("subagent_task.j2", task=spec))]
        tools = [t.spec() for t in self.box.schemas()]
        tools.append(submit_spec([]))
        repairs = 0
        for step in range(1, spec.budget.max_steps + 1):
            tools[-1] = submit_spec(sorted(self.box.evidence))  # what it may cite, now
            if self.usage.input_tokens + self.usage.output_tokens > spec.budget.max_tokens:
                return self._result("failed", f"token budget of {spec.budget.max_tokens} spent",
                                    [f"token budget exhausted after {step - 1} steps"])
            resp = await self.model.complete(ModelRequest(
                messages=list(messages), tools=tools, task=spec.id, step=step,
                purpose="subagent"))
            self.usage.llm_calls += 1
            self.usage.input_tokens += resp.usage.input_tokens
            self.usage.output_tokens += resp.usage.output_tokens
            messages.append(Message("assistant", resp.text, tuple(resp.tool_calls)))
            if not resp.tool_calls:
                repairs += 1
                if repairs > self.max_repairs:
                    return self._result("failed", "the model stopped without submitting a result",
                                        ["no submit_result call"])
                messages.append(Message.user(render("nudge.j2", left=self.max_repairs - repairs)))
                continue
            replies, submitted, problem = await self._turn(resp.tool_calls, step)
            messages.extend(replies)
            if submitted is not None:
                return self._result(submitted.status, submitted.summary, sub=submitted)
            if problem:
                repairs += 1
                if repairs > self.max_repairs:
                    return self._result("failed", "the result never validated", [problem])
                messages.append(Message.user(render("repair.j2", problem=problem,
                                                    left=self.max_repairs - repairs + 1)))
        return self._result("failed", f"no result within {spec.budget.max_steps} steps",
                            [f"step limit {spec.budget.max_steps} reached"])

    async def _turn(self, calls: list[ToolCallRequest], step: int
                    ) -> tuple[list[Message], Submission | None, str]:
        replies: list[Message | None] = [None] * len(calls)
        submission: Submission | None = None
        problem = ""

        async def one(i: int, call: ToolCallRequest) -> None:
            try:
                args = call.parsed()
            except ValueError as exc:
                replies[i] = Message.tool(call, untrusted(f'{{"error": "{exc}"}}', call.name))
                return
            result = await self.box.call(call.name, args, step=step, index=i)
            replies[i] = Message.tool(call, untrusted(result.for_model(), call.name))

        work = [(i, c) for i, c in enumerate(calls) if c.name != SUBMIT]
        if len(work) == 1:  # the common case needs no task group
            await one(*work[0])
        elif work:
            async with anyio.create_task_group() as tg:
                for i, call in work:
                    tg.start_soon(one, i, call)
        for i, call in enumerate(calls):
            if call.name != SUBMIT:
                continue
            if submission is not None:
                replies[i] = Message.tool(call, "ignored: submit_result was already called")
                continue
            sub, err = self._validate(call)
            if sub is not None:
                submission = sub
                replies[i] = Message.tool(call, "accepted")
            else:
                problem = err
                replies[i] = Message.tool(call, f"rejected: {err}")
        return [r for r in replies if r is not None], submission, problem

    def _validate(self, call: ToolCallRequest) -> tuple[Submission | None, str]:
        try:
            sub = Submission.model_validate(drop_nulls(call.parsed()))
        except ValueError as exc:
            if isinstance(exc, ValidationError):
                detail = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}"
                                   for e in exc.errors())
                return None, f"the result does not match the schema: {detail}"
            return None, str(exc)
        cited = {e for f in sub.findings for e in f.evidence}
        cited |= {e for fact in sub.facts.values() for e in fact.evidence}
        unknown = sorted(cited - set(self.box.evidence))
        if unknown:
            return None, (f"it cites evidence ids that no tool returned: {', '.join(unknown)}. "
                          "Cite only evidence_id values from tool results")
        if sub.status == "ok" and not sub.findings:
            return None, "status ok needs at least one finding with evidence"
        return sub, ""
