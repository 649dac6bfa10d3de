"""Anthropic Messages API over httpx: tool use (several per turn), usage, the same retry
policy as the OpenAI-compatible backend. The orchestrator does not know which one runs."""

from __future__ import annotations

import json
from typing import Any

import httpx

from .._trace._withhold import remember
from ._http import make_poster, post_json
from ._limiter import RequestLimiter
from ._messages import Message, ModelError, ModelRequest, ModelResponse, TokenUsage, ToolCallRequest
from ._retry import RetryPolicy

API_VERSION = "2023-06-01"


def _blocks(messages: list[Message]) -> tuple[str, list[dict[str, Any]]]:
    """(system text, Anthropic messages): tool results ride in user turns, consecutive
    turns of one role are merged, as the API requires alternation, and an empty assistant
    turn is never sent."""
    system = "\n\n".join(m.content for m in messages if m.role == "system")
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "system":
            continue
        if m.role == "tool":
            role, content = "user", [{"type": "tool_result", "tool_use_id": m.tool_call_id,
                                      "content": m.content}]
        elif m.role == "assistant":
            role = "assistant"
            # the API refuses an empty text block: whitespace is no text
            content = [{"type": "text", "text": m.content}] if m.content.strip() else []
            for c in m.tool_calls:
                try:
                    args = json.loads(c.arguments or "{}")
                except json.JSONDecodeError:
                    args = {"_unparsed": c.arguments}
                content.append({"type": "tool_use", "id": c.id, "name": c.name, "input": args})
        else:
            role, content = "user", [{"type": "text", "text": m.content}]
        if not content:
            # an empty reply (no text, no tool use): the API refuses an empty assistant turn,
            # so it is left out; the caller's nudge after it joins the previous user turn
            continue
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(content)
        else:
            out.append({"role": role, "content": content})
    return system, out


class AnthropicModel:
    """A model behind ``POST {base_url}/messages``.

    >>> model = AnthropicModel("http://127.0.0.1:9000/v1", "claude-sonnet-4-5")
    """

    def __init__(self, base_url: str, model: str, *, api_key: str | None = None,
                 client: httpx.AsyncClient | None = None, timeout_s: float = 120.0,
                 retry: RetryPolicy | None = None, limiter: RequestLimiter | None = None,
                 max_tokens: int = 4096, temperature: float = 0.0) -> None:
        self.url = base_url.rstrip("/") + "/messages"
        self.model = model
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.retry = retry or RetryPolicy()
        self.limiter = limiter or RequestLimiter()
        self._headers = {"anthropic-version": API_VERSION, "content-type": "application/json"}
        if api_key:
            self._headers["x-api-key"] = api_key
            remember(api_key)  # withheld, in any spelling, from all agentkit writes
        self.poster = make_poster(client, timeout_s)

    def body(self, request: ModelRequest) -> dict[str, Any]:
        system, messages = _blocks(request.messages)
        body: dict[str, Any] = {"model": self.model, "messages": messages,
                                "max_tokens": request.max_tokens or self.max_tokens,
                                "temperature": self.temperature}
        if system:
            body["system"] = system
        if request.tools:
            body["tools"] = [{"name": t.name, "description": t.description,
                              "input_schema": t.parameters} for t in request.tools]
            body["tool_choice"] = {"type": "any" if request.tool_choice == "required"
                                   else "auto"}
        return body

    async def complete(self, request: ModelRequest) -> ModelResponse:
        body = json.dumps(self.body(request)).encode()
        return await self.retry.call(lambda: self._once(body))

    async def _once(self, body: bytes) -> ModelResponse:
        payload = await post_json(self.poster, self.limiter, self.url, body, self._headers)
        return parse_message(payload)

    async def aclose(self) -> None:
        await self.poster.aclose()


def parse_message(payload: Any) -> ModelResponse:
    if not isinstance(payload, dict) or not isinstance(payload.get("content"), list):
        raise ModelError("model server sent a message with no content list", retryable=True)
    text = "".join(b.get("text", "") for b in payload["content"] if b.get("type") == "text")
    calls = [ToolCallRequest(b.get("id") or f"toolu_{i}", b.get("name", ""),
                             json.dumps(b.get("input") or {}))
             for i, b in enumerate(payload["content"]) if b.get("type") == "tool_use"]
    usage = payload.get("usage") or {}
    return ModelResponse(text=text, tool_calls=calls,
                         usage=TokenUsage(usage.get("input_tokens") or 0,
                                          usage.get("output_tokens") or 0),
                         finish_reason=payload.get("stop_reason") or "",
                         model=payload.get("model", ""))
