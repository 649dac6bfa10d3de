"""Asking a model for one structured submission (a plan, an answer) through a single tool,
with the reason sent back until it validates or the tries run out."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import ValidationError

from .._llm._messages import Message, Model, ModelRequest, Purpose, ToolSpec
from .._types import Usage

T = TypeVar("T")

# judge(arguments) -> (value, problem): no value = rejected; a value with a problem = kept as
# the best so far but asked again; a value without a problem = accepted.
Judge = Callable[[dict[str, Any]], tuple[T | None, str]]


async def ask_for_submission(model: Model, messages: list[Message], spec: ToolSpec, *,
                             task: str, purpose: Purpose, tries: int, judge: Judge[T],
                             usage: Usage | None = None) -> tuple[T | None, str]:
    """(accepted value, or the best rejected one, or None; the last problem, "" if none)."""
    best: T | None = None
    problem = f"no {spec.name} call"
    for step in range(1, tries + 1):
        resp = await model.complete(ModelRequest(
            messages=list(messages), tools=[spec], task=task, step=step, purpose=purpose,
            tool_choice="required"))
        if usage is not None:
            usage.llm_calls += 1
            usage.input_tokens += resp.usage.input_tokens
            usage.output_tokens += resp.usage.output_tokens
        messages.append(Message("assistant", resp.text, tuple(resp.tool_calls)))
        call = next((c for c in resp.tool_calls if c.name == spec.name), None)
        for other in resp.tool_calls:
            if other is not call:
                messages.append(Message.tool(other, f"error: only {spec.name} is available"))
        if call is None:
            messages.append(Message.user(f"Call {spec.name}."))
            continue
        try:
            value, problem = judge(call.parsed())
        except (ValueError, ValidationError) as exc:
            value, problem = None, str(exc)
        if value is not None:
            best = value
            if not problem:
                messages.append(Message.tool(call, "accepted"))
                return value, ""
        messages.append(Message.tool(call, f"rejected: {problem}. Fix it and call {spec.name} "
                                           "again."))
    return best, problem
