"""OpenAI-compatible Chat Completions over httpx: vLLM, SGLang, Ollama, llama.cpp, OpenAI."""

from __future__ import annotations

import json
from typing import Any

import httpx

from ._limiter import RequestLimiter
from ._messages import Message, ModelError, ModelRequest, ModelResponse, TokenUsage, ToolCallRequest
from ._retry import RetryPolicy, error_for_status


def _message(m: Message) -> dict[str, Any]:
    if m.role == "tool":
        return {"role": "tool", "tool_call_id": m.tool_call_id, "content": m.content}
    out: dict[str, Any] = {"role": m.role, "content": m.content}
    if m.tool_calls:
        out["tool_calls"] = [
            {"id": c.id, "type": "function",
             "function": {"name": c.name, "arguments": c.arguments}}
            for c in m.tool_calls]
    return out


class OpenAIChatModel:
    """A model behind ``POST {base_url}/chat/completions``.

    >>> model = OpenAIChatModel("http://127.0.0.1:8000/v1", "qwen3")
    """

    def __init__(self, base_url: str, model: str, *, api_key: str | None = None,
                 client: httpx.AsyncClient | None = None, timeout_s: float = 120.0,
                 retry: RetryPolicy | None = None, limiter: RequestLimiter | None = None,
                 temperature: float = 0.0) -> None:
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.temperature = temperature
        self.retry = retry or RetryPolicy()
        self.limiter = limiter or RequestLimiter()
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._own_client = client is None
        self.client = client or httpx.AsyncClient(
            timeout=httpx.Timeout(timeout_s, connect=10.0),
            limits=httpx.Limits(max_connections=256, max_keepalive_connections=256))

    def body(self, request: ModelRequest) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [_message(m) for m in request.messages],
            "temperature": self.temperature,
        }
        if request.tools:
            body["tools"] = [{"type": "function", "function": {
                "name": t.name, "description": t.description, "parameters": t.parameters}}
                for t in request.tools]
            body["tool_choice"] = request.tool_choice
        if request.max_tokens:
            body["max_tokens"] = request.max_tokens
        return body

    async def complete(self, request: ModelRequest) -> ModelResponse:
        body = self.body(request)
        return await self.retry.call(lambda: self._once(body))

    async def _once(self, body: dict[str, Any]) -> ModelResponse:
        try:
            async with self.limiter.slot():
                resp = await self.client.post(self.url, json=body, headers=self._headers)
        except httpx.TransportError as exc:
            raise ModelError(f"cannot reach the model server at {self.url}: "
                             f"{type(exc).__name__}: {exc}", retryable=True) from None
        if resp.status_code >= 400:
            raise error_for_status(resp)
        try:
            payload = resp.json()
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ModelError(f"model server sent a body that is not JSON: {exc}",
                             retryable=True) from None
        return parse_response(payload)

    async def aclose(self) -> None:
        if self._own_client:
            await self.client.aclose()


def parse_response(payload: Any) -> ModelResponse:
    if not isinstance(payload, dict) or not payload.get("choices"):
        raise ModelError("model server sent a response with no choices", retryable=True)
    choice = payload["choices"][0]
    msg = choice.get("message") or {}
    calls = []
    for i, c in enumerate(msg.get("tool_calls") or []):
        fn = c.get("function") or {}
        args = fn.get("arguments")
        calls.append(ToolCallRequest(
            id=c.get("id") or f"call_{i}", name=fn.get("name", ""),
            arguments=args if isinstance(args, str) else json.dumps(args or {})))
    usage = payload.get("usage") or {}
    return ModelResponse(
        text=msg.get("content") or "",
        tool_calls=calls,
        usage=TokenUsage(usage.get("prompt_tokens") or 0, usage.get("completion_tokens") or 0),
        finish_reason=choice.get("finish_reason") or "",
        model=payload.get("model", ""),
    )
