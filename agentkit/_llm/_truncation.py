"""Truncated replies: a reply cut by its token budget is asked for again with a larger one, and
arguments it cut short never reach the conversation's history.

OpenAI-compatible servers say ``finish_reason: "length"`` and the Anthropic Messages API
``stop_reason: "max_tokens"`` when the completion budget ran out. A tool call cut there has
arguments that are not JSON; sent back in the history, some servers (vLLM versions that parse
the history's arguments) refuse the whole request, so one cut reply would sink the task. The
call is retried with twice the budget (bounded); if the reply is still cut, its broken calls
are dropped, and the caller sees a reply without them (a subagent is then nudged to go on).
"""

from __future__ import annotations

import json
from dataclasses import replace

from ._messages import Model, ModelRequest, ModelResponse, ToolCallRequest

TRUNCATED = frozenset({"length", "max_tokens"})  # OpenAI finish_reason, Anthropic stop_reason
_FIRST_BUDGET = 2048


def parses(call: ToolCallRequest) -> bool:
    """Whether the call's arguments are a JSON object."""
    try:
        return isinstance(json.loads(call.arguments or "{}"), dict)
    except ValueError:
        return False


def _cut(resp: ModelResponse) -> bool:
    return resp.finish_reason in TRUNCATED and (
        not resp.tool_calls or not all(parses(c) for c in resp.tool_calls))


class CompletingModel:
    """Wraps a model: see the module docstring."""

    def __init__(self, inner: Model, *, tries: int = 2, ceiling: int = 32_768) -> None:
        self.inner = inner
        self.tries = tries
        self.ceiling = ceiling

    async def complete(self, request: ModelRequest) -> ModelResponse:
        resp = await self.inner.complete(request)
        budget = request.max_tokens
        for _ in range(self.tries):
            if not _cut(resp):
                return resp
            bigger = min(self.ceiling, max(_FIRST_BUDGET, 2 * (budget or resp.usage.output_tokens)))
            if budget is not None and bigger <= budget:
                break  # at the ceiling already
            budget = bigger
            resp = await self.inner.complete(replace(request, max_tokens=budget))
        if resp.finish_reason in TRUNCATED:
            kept = [c for c in resp.tool_calls if parses(c)]
            if len(kept) != len(resp.tool_calls):
                resp = replace(resp, tool_calls=kept)
        return resp

    async def aclose(self) -> None:
        closer = getattr(self.inner, "aclose", None)
        if closer is not None:
            await closer()
