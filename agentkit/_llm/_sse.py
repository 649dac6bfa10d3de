"""Streamed chat completions (``"stream": true``, server-sent events), for servers and gateways
that only answer that way.

The OpenAI streaming format: ``data: {chat.completion.chunk}`` lines, each with
``choices[0].delta`` carrying a piece of the text or of a tool call (keyed by ``index``; the
``id`` and ``name`` come once, ``arguments`` in fragments), a ``finish_reason`` on the last,
``usage`` on a final chunk when ``stream_options.include_usage`` asked for it, then
``data: [DONE]``. The whole stream is read, then assembled into one response: agentkit uses a
reply only once it is complete.
"""

from __future__ import annotations

import json
from typing import Any

from ._messages import ModelError, ModelResponse, TokenUsage, ToolCallRequest

STREAM_FIELDS = b',"stream":true,"stream_options":{"include_usage":true}'


def wants_stream(status: int, text: str) -> bool:
    """A refusal that says the server streams only (a 400 naming the ``stream`` field)."""
    low = text.lower()
    return status in (400, 422) and "stream" in low and ("true" in low or "only" in low
                                                         or "required" in low)


def parse_stream(body: bytes) -> ModelResponse:
    """One response from a whole ``text/event-stream`` body."""
    text: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    finish, model = "", ""
    usage = TokenUsage()
    for chunk in _events(body):
        if "error" in chunk:
            raise ModelError(f"model server sent an error in its stream: {chunk['error']}",
                             retryable=True)
        model = chunk.get("model") or model
        if isinstance(chunk.get("usage"), dict):
            u = chunk["usage"]
            usage = TokenUsage(u.get("prompt_tokens") or 0, u.get("completion_tokens") or 0)
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or {}
            if delta.get("content"):
                text.append(delta["content"])
            for c in delta.get("tool_calls") or []:
                slot = calls.setdefault(int(c.get("index", len(calls))),
                                        {"id": "", "name": "", "arguments": []})
                fn = c.get("function") or {}
                slot["id"] = c.get("id") or slot["id"]
                slot["name"] = fn.get("name") or slot["name"]
                if fn.get("arguments"):
                    slot["arguments"].append(fn["arguments"])
            finish = choice.get("finish_reason") or finish
    return ModelResponse(
        text="".join(text),
        tool_calls=[ToolCallRequest(c["id"] or f"call_{i}", c["name"], "".join(c["arguments"]))
                    for i, c in sorted(calls.items())],
        usage=usage, finish_reason=finish, model=model)


def _events(body: bytes) -> list[dict[str, Any]]:
    out = []
    for raw in body.decode("utf-8", errors="replace").splitlines():
        line = raw.strip()
        if not line.startswith("data:"):
            continue  # comments (":"), event names, blank separators
        data = line[5:].strip()
        if data == "[DONE]":
            break
        try:
            event = json.loads(data)
        except ValueError:
            raise ModelError(f"model server sent a stream event that is not JSON: {data[:200]}",
                             retryable=True) from None
        if isinstance(event, dict):
            out.append(event)
    if not out:
        raise ModelError("model server sent an empty stream", retryable=True)
    return out


def is_stream(body: bytes) -> bool:
    """An event-stream body (some gateways stream whatever was asked)."""
    head = body[:64].lstrip()
    return head.startswith((b"data:", b": ", b"event:"))


async def post_stream(poster: Any, limiter: Any, url: str, body: bytes,
                      headers: dict[str, str]) -> ModelResponse:
    """One streamed attempt: POST, read the whole event stream, assemble the response."""
    from ._retry import error_for_status

    async with limiter.slot():
        resp = await poster.post(url, body, headers)
    if resp.status >= 400:
        raise error_for_status(resp.status, resp.headers, resp.text)
    return parse_stream(resp.body)
