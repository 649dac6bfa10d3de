"""Typed messages, requests and responses, independent of any provider's wire format."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from .._trace._withhold import withhold
from ._json import loads

Role = Literal["system", "user", "assistant", "tool"]
Purpose = Literal["plan", "subagent", "synthesize", "other"]


@dataclass(frozen=True)
class ToolCallRequest:
    """A tool call as the model asked for it; ``arguments`` is the raw JSON text.

    >>> ToolCallRequest("call_1", "read_file", '{"path": "/etc/nccl.conf"}').parsed()
    {'path': '/etc/nccl.conf'}
    """

    id: str
    name: str
    arguments: str

    def parsed(self) -> dict[str, Any]:
        """The arguments as an object; raises ValueError with the reason when they are not."""
        try:
            value = loads(self.arguments or "{}")
        except json.JSONDecodeError as exc:
            raise ValueError(f"arguments are not valid JSON ({exc.msg} at {exc.pos})") from None
        if not isinstance(value, dict):
            raise ValueError("arguments must be a JSON object")
        return value


class _Encoded:
    """Encodings of an immutable message or tool (wire formats, trace record), made once and
    reused on every later request: the hot path must not re-serialize the history."""

    wire: dict[str, Any]

    def encoded(self, key: str, encode: Callable[[Any], Any]) -> Any:
        got = self.wire.get(key)
        if got is None:
            got = self.wire[key] = encode(self)
        return got


@dataclass(frozen=True)
class Message(_Encoded):
    """One message of a conversation, provider-neutral.

    >>> Message.user("Is NCCL tuned?").role
    'user'
    """

    role: Role
    content: str = ""
    tool_calls: tuple[ToolCallRequest, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    wire: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def record(self) -> dict[str, Any]:
        """The message as the trace records it."""
        return self.encoded("record", _record)  # type: ignore[no-any-return, unused-ignore]

    @classmethod
    def system(cls, text: str) -> Message:
        return cls("system", text)

    @classmethod
    def user(cls, text: str) -> Message:
        return cls("user", text)

    @classmethod
    def tool(cls, call: ToolCallRequest, text: str) -> Message:
        return cls("tool", text, tool_call_id=call.id, name=call.name)


@dataclass(frozen=True)
class ToolSpec(_Encoded):
    """A tool as a model is told about it (name, description, JSON schema of the arguments).

    >>> ToolSpec("echo", "Echo text.", {"type": "object"}).name
    'echo'
    """

    name: str
    description: str
    parameters: dict[str, Any] = field(hash=False)
    wire: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    # the schema is in strict-mode shape (see _schemas.py): backends that enforce it may
    strict: bool = field(default=False, compare=False)


def _record(m: Message) -> dict[str, Any]:
    out: dict[str, Any] = {"role": m.role, "content": m.content}
    if m.tool_calls:
        out["tool_calls"] = [{"id": c.id, "name": c.name, "arguments": c.arguments}
                             for c in m.tool_calls]
    if m.tool_call_id:
        out["tool_call_id"] = m.tool_call_id
    return out


@dataclass
class TokenUsage:
    input_tokens: int = 0
    output_tokens: int = 0


@dataclass
class ModelRequest:
    """One model call. ``task`` and ``step`` key it for tracing and exact replay.

    >>> ModelRequest(messages=[Message.user("hi")], task="t1", step=1).purpose
    'other'
    """

    messages: list[Message]
    tools: list[ToolSpec] = field(default_factory=list)
    task: str = ""
    step: int = 0
    purpose: Purpose = "other"
    max_tokens: int | None = None
    tool_choice: Literal["auto", "required"] = "auto"


@dataclass
class ModelResponse:
    """What a model answered: text, tool calls, usage.

    >>> ModelResponse(text="done").to_json()["text"]
    'done'
    """

    text: str = ""
    tool_calls: list[ToolCallRequest] = field(default_factory=list)
    usage: TokenUsage = field(default_factory=TokenUsage)
    finish_reason: str = ""
    model: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"text": self.text, "finish_reason": self.finish_reason, "model": self.model,
                "tool_calls": [{"id": c.id, "name": c.name, "arguments": c.arguments}
                               for c in self.tool_calls],
                "usage": {"input_tokens": self.usage.input_tokens,
                          "output_tokens": self.usage.output_tokens}}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> ModelResponse:
        return cls(
            text=d.get("text", ""),
            tool_calls=[ToolCallRequest(c["id"], c["name"], c["arguments"])
                        for c in d.get("tool_calls", [])],
            usage=TokenUsage(**d.get("usage", {})),
            finish_reason=d.get("finish_reason", ""),
            model=d.get("model", ""),
        )


class ModelError(Exception):
    """A failed model call. ``retryable`` says whether trying again could help.

    >>> ModelError("HTTP 503", status=503, retryable=True).retryable
    True
    """

    def __init__(self, message: str, *, status: int | None = None, retryable: bool = False,
                 retry_after: float | None = None) -> None:
        # every model error passes here: the one place to take out the API key, in any
        # spelling a server could echo it in, before it reaches a note, stderr or the trace
        super().__init__(withhold(message))
        self.status = status
        self.retryable = retryable
        self.retry_after = retry_after


@runtime_checkable
class Model(Protocol):
    """The one method a model backend needs.

    >>> class Echo:
    ...     async def complete(self, request: ModelRequest) -> ModelResponse:
    ...         return ModelResponse(text=request.messages[-1].content)
    >>> isinstance(Echo(), Model)
    True
    """

    async def complete(self, request: ModelRequest) -> ModelResponse: ...
