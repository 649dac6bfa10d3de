"""OpenAI-compatible Chat Completions over httpx: vLLM, SGLang, Ollama, llama.cpp, OpenAI."""

from __future__ import annotations

import json
from typing import Any

import httpx
import orjson

from .._trace._withhold import remember
from ._http import make_poster, post_json
from ._limiter import RequestLimiter
from ._messages import (
    Message,
    ModelError,
    ModelRequest,
    ModelResponse,
    TokenUsage,
    ToolCallRequest,
    ToolSpec,
)
from ._retry import RetryPolicy
from ._sse import STREAM_FIELDS, post_stream, wants_stream


def _encode_message(m: Message) -> bytes:
    return orjson.dumps(_message(m))


def _encode_tool(t: ToolSpec) -> bytes:
    fn: dict[str, Any] = {"name": t.name, "description": t.description,
                          "parameters": t.parameters}
    if t.strict:
        fn["strict"] = True
    return orjson.dumps({"type": "function", "function": fn})


def _message(m: Message) -> dict[str, Any]:
    if m.role == "tool":
        return {"role": "tool", "tool_call_id": m.tool_call_id, "content": m.content}
    out: dict[str, Any] = {"role": m.role, "content": m.content}
    if m.tool_calls:
        out["tool_calls"] = [
            {"id": c.id, "type": "function",
             "function": {"name": c.name, "arguments": _history_arguments(c)}}
            for c in m.tool_calls]
    return out


def _history_arguments(c: ToolCallRequest) -> str:
    """A call's arguments as the history carries them: servers that parse them (vLLM) refuse
    a whole request over one that is not JSON, so such text travels inside a JSON object
    (as the Anthropic wire sends it); the model was told at the time that it did not parse."""
    from ._truncation import parses

    return c.arguments if parses(c) else json.dumps({"_unparsed": c.arguments})


class OpenAIChatModel:
    """A model behind ``POST {base_url}/chat/completions``.

    >>> model = OpenAIChatModel("http://127.0.0.1:8000/v1", "my-model")
    """

    def __init__(self, base_url: str, model: str, *, api_key: str | None = None,
                 client: httpx.AsyncClient | None = None, timeout_s: float = 120.0,
                 retry: RetryPolicy | None = None, limiter: RequestLimiter | None = None,
                 temperature: float = 0.0, stream: bool = False) -> None:
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.stream = stream  # SSE; switched on by a server that refuses anything else
        self.model = model
        self.temperature = temperature
        self.retry = retry or RetryPolicy()
        self.limiter = limiter or RequestLimiter()
        self._headers = {"content-type": "application/json"}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
            remember(api_key)  # withheld, in any spelling, from all agentkit writes
        self._model_json = json.dumps(model).encode()
        self._temperature_json = json.dumps(temperature).encode()
        self.poster = make_poster(client, timeout_s)

    def body(self, request: ModelRequest) -> dict[str, Any]:
        """The request body as a dict (for inspection; :meth:`encode` is what is sent)."""
        return dict(json.loads(self.encode(request)))

    def encode(self, request: ModelRequest) -> bytes:
        """The JSON body, assembled from each message's and tool's cached encoding, so the
        cost of a call does not grow with the length of the conversation's history."""
        parts = [b'{"model":', self._model_json, b',"messages":[',
                 b",".join(m.encoded("openai", _encode_message) for m in request.messages),
                 b'],"temperature":', self._temperature_json]
        if request.tools:
            parts += [b',"tools":[', b",".join(t.encoded("openai", _encode_tool)
                                               for t in request.tools),
                      b'],"tool_choice":', json.dumps(request.tool_choice).encode()]
        if request.max_tokens:
            parts += [b',"max_tokens":', str(int(request.max_tokens)).encode()]
        if self.stream:
            parts.append(STREAM_FIELDS)
        parts.append(b"}")
        return b"".join(parts)

    async def complete(self, request: ModelRequest) -> ModelResponse:
        body = self.encode(request)
        try:
            return await self.retry.call(lambda: self._once(body))
        except ModelError as exc:
            if self.stream or not wants_stream(exc.status or 0, str(exc)):
                raise
        self.stream = True  # the server answers streamed requests only: from now on, stream
        body = self.encode(request)
        return await self.retry.call(lambda: self._once(body))

    async def _once(self, body: bytes) -> ModelResponse:
        if self.stream:
            return await post_stream(self.poster, self.limiter, self.url, body, self._headers)
        payload = await post_json(self.poster, self.limiter, self.url, body, self._headers)
        if isinstance(payload, ModelResponse):  # the server streamed anyway
            return payload
        return parse_response(payload)

    async def aclose(self) -> None:
        await self.poster.aclose()


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
