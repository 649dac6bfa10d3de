"""A model wrapper that records every call in the trace, keyed by task and step.

Requests are recorded as the messages added since the task's previous call (plus a hash of
the whole request), so a trace grows linearly with the conversation, not quadratically.
"""

from __future__ import annotations

import hashlib

import anyio
import orjson

from .._trace import Trace
from ._messages import Message, Model, ModelRequest, ModelResponse


def _canonical(m: Message) -> bytes:
    return orjson.dumps(m.record(), option=orjson.OPT_SORT_KEYS)


def request_hash(request: ModelRequest) -> str:
    """A digest of the whole request; each message is encoded once per conversation."""
    h = hashlib.sha256()
    for m in request.messages:
        h.update(m.encoded("canonical", _canonical))
    for t in request.tools:
        h.update(t.name.encode())
    return h.hexdigest()[:16]


class TracedModel:
    """Wraps any :class:`Model`; emits ``llm`` spans with the request delta and response."""

    def __init__(self, inner: Model, trace: Trace) -> None:
        self.inner = inner
        self.trace = trace
        self._seen: dict[str, int] = {}

    async def complete(self, request: ModelRequest) -> ModelResponse:
        if not self.trace.enabled:
            return await self.inner.complete(request)
        start = self._seen.get(request.task, 0) if request.step > 1 else 0
        self._seen[request.task] = len(request.messages)
        span = self.trace.start("llm", parent=self.trace.task_spans.get(request.task),
                                task=request.task, step=request.step, data={
                                    "purpose": request.purpose,
                                    "request_hash": request_hash(request),
                                    "tools": [t.name for t in request.tools],
                                    "new_messages": [m.record()
                                                     for m in request.messages[start:]]})
        try:
            resp = await self.inner.complete(request)
        except Exception as exc:
            self.trace.end(span, "llm", task=request.task, step=request.step,
                           data={"error": f"{type(exc).__name__}: {exc}"})
            raise
        except BaseException:  # cancelled (an abandoned stream, a deadline): ended as such
            with anyio.CancelScope(shield=True):
                self.trace.end(span, "llm", task=request.task, step=request.step,
                               data={"cancelled": True})
            raise
        self.trace.end(span, "llm", task=request.task, step=request.step,
                       data={"response": resp.to_json()})
        return resp
