"""An in-process model driven by a function of the request."""

from __future__ import annotations

import itertools
import json
from collections.abc import Awaitable, Callable
from typing import Any

from .._llm._messages import ModelRequest, ModelResponse, TokenUsage, ToolCallRequest

_ids = itertools.count(1)


def tool_call(name: str, args: dict[str, Any] | str, call_id: str | None = None
              ) -> ToolCallRequest:
    """A tool call as a model would send it (``args`` may be raw text, to test bad JSON)."""
    raw = args if isinstance(args, str) else json.dumps(args)
    return ToolCallRequest(call_id or f"call_{next(_ids)}", name, raw)


def reply(text: str = "", calls: list[ToolCallRequest] | None = None, input_tokens: int = 10,
          output_tokens: int = 5) -> ModelResponse:
    return ModelResponse(text=text, tool_calls=calls or [],
                         usage=TokenUsage(input_tokens, output_tokens),
                         finish_reason="tool_calls" if calls else "stop", model="scripted")


Script = Callable[[ModelRequest], ModelResponse | Awaitable[ModelResponse]]


class ScriptedModel:
    """A :class:`~agentkit.Model` whose every answer comes from ``script(request)``."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.requests: list[ModelRequest] = []

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        out = self.script(request)
        if not isinstance(out, ModelResponse):
            out = await out
        return out
