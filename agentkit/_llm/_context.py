"""Context limits: recognise a server's "the request does not fit" answer, shrink, retry.

A conversation that outgrows the model's context is refused with a 400 whose wording depends
on the server. Each wording below is the provider's own, cited where it comes from:

- vLLM (``vllm/entrypoints/openai/serving_engine.py``, ``_validate_prompt_and_tokenize``):
  "This model's maximum context length is {max_model_len} tokens. However, you requested
  {n} tokens ({p} in the messages, {c} in the completion). Please reduce the length of the
  messages or completion." (HTTP 400, type BadRequestError); later versions say "… is too
  large: {c}. This model's maximum context length is {max_model_len} tokens and your request
  has {p} input tokens".
- OpenAI: error ``code`` ``context_length_exceeded`` ("This model's maximum context length is
  {n} tokens. However, your messages resulted in {m} tokens."), the wording vLLM copies.
- Anthropic Messages API: ``invalid_request_error`` "prompt is too long: {n} tokens > {m}
  maximum" (as quoted from the API in anthropics/claude-code issues #59696 and #62560).
- llama.cpp server (``tools/server``): type ``exceed_context_size_error``, "the request exceeds
  the available context size, try increasing it", with ``n_prompt_tokens`` and ``n_ctx``
  fields; older builds: "request ({n} tokens) exceeds the available context size ({m} tokens)".
- Ollama: "prompt too long; exceeded max context length by {n} tokens" (chat, when it does not
  truncate) and "the input length exceeds the context length" (as its users' reports quote
  it; not checked against Ollama's source here).

Recognised, the call is retried with less: when the prompt itself fits and only the requested
completion does not, with a smaller completion budget; otherwise with the oldest tool outputs
replaced by a stub that keeps their evidence ids (a finding may still cite them). When it
still does not fit, :class:`ContextTooLong` names the limit and the size.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from typing import Any

from ._messages import Message, Model, ModelError, ModelRequest, ModelResponse

# (provider, pattern); named groups: limit (the context), asked (the whole request),
# prompt (its input part), over (by how much it is over)
_WORDINGS: list[tuple[str, re.Pattern[str]]] = [
    ("vLLM/OpenAI", re.compile(
        r"maximum context length is (?P<limit>\d+) tokens\. However, you requested "
        r"(?P<asked>\d+) tokens(?: \((?P<prompt>\d+) in the messages)?", re.I)),
    ("vLLM", re.compile(
        r"maximum context length is (?P<limit>\d+) tokens and your request has "
        r"(?P<prompt>\d+) input tokens", re.I)),
    ("OpenAI", re.compile(
        r"maximum context length is (?P<limit>\d+) tokens\. However, your messages resulted "
        r"in (?P<prompt>\d+) tokens", re.I)),
    ("vLLM/OpenAI", re.compile(r"maximum context length is (?P<limit>\d+) tokens", re.I)),
    ("OpenAI", re.compile(r"context_length_exceeded")),
    ("Anthropic", re.compile(
        r"prompt is too long: (?P<prompt>\d+) tokens > (?P<limit>\d+) maximum", re.I)),
    ("llama.cpp", re.compile(
        r"request \((?P<prompt>\d+) tokens\) exceeds the available context size "
        r"\((?P<limit>\d+) tokens\)", re.I)),
    ("llama.cpp", re.compile(r"exceeds the available context size|exceed_context_size_error",
                             re.I)),
    ("Ollama", re.compile(r"exceeded max context length by (?P<over>\d+) tokens", re.I)),
    ("Ollama", re.compile(r"input length exceeds the context length", re.I)),
]


class ContextTooLong(ModelError):
    """The server refused the request as longer than the model's context."""

    def __init__(self, message: str, *, status: int | None = None, provider: str = "",
                 limit: int | None = None, prompt: int | None = None,
                 asked: int | None = None, over: int | None = None) -> None:
        super().__init__(message, status=status, retryable=False)
        self.provider = provider
        self.limit = limit
        self.prompt = prompt
        self.asked = asked
        self.over = over

    def size(self) -> str:
        """The limit and the size, as far as the server said them."""
        parts = []
        if self.limit is not None:
            parts.append(f"the model's context is {self.limit} tokens")
        if self.prompt is not None:
            parts.append(f"the prompt is {self.prompt} tokens")
        if self.asked is not None:
            parts.append(f"the request asked for {self.asked} in all")
        if self.over is not None:
            parts.append(f"it is {self.over} tokens over")
        return "; ".join(parts) or "the server did not say the sizes"


def recognise(status: int, text: str) -> ContextTooLong | None:
    """A context-length refusal in a server's error body, or None."""
    if status not in (400, 413, 422, 500):
        return None
    numbers = _numbers(text)
    for provider, pattern in _WORDINGS:
        m = pattern.search(text)
        if m is None:
            continue
        got = {k: int(v) for k, v in m.groupdict().items() if v is not None}
        got = {**{k: v for k, v in numbers.items() if k not in got}, **got}
        body = text[:300].replace("\n", " ")
        return ContextTooLong(f"model server answered HTTP {status}: {body}", status=status,
                              provider=provider, **got)
    return None


def _numbers(text: str) -> dict[str, int]:
    """llama.cpp's JSON fields (n_ctx, n_prompt_tokens), when the body carries them."""
    try:
        body: Any = json.loads(text)
    except ValueError:
        return {}
    err = body.get("error") if isinstance(body, dict) else None
    if not isinstance(err, dict):
        return {}
    out = {}
    if isinstance(err.get("n_ctx"), int):
        out["limit"] = err["n_ctx"]
    if isinstance(err.get("n_prompt_tokens"), int):
        out["prompt"] = err["n_prompt_tokens"]
    return out


_EVIDENCE = re.compile(r"\bE[0-9a-f]{10}\b")
_MIN_COMPLETION = 256


@dataclass
class _Fit:
    elided: int = 0  # the task's oldest tool outputs elided so far
    max_tokens: int | None = None  # a completion budget that fit


class FittingModel:
    """Wraps a model: a request refused as too long is retried smaller (see the module
    docstring); what fitted is remembered per task, so its later calls start from there."""

    def __init__(self, inner: Model, *, tries: int = 6) -> None:
        self.inner = inner
        self.tries = tries
        self._fit: dict[str, _Fit] = {}

    async def complete(self, request: ModelRequest) -> ModelResponse:
        if request.step <= 1:  # a new conversation (another run may reuse the task's id)
            self._fit.pop(request.task, None)
        fit = self._fit.setdefault(request.task, _Fit())
        last: ContextTooLong | None = None
        for _ in range(self.tries):
            try:
                return await self.inner.complete(_shrunk(request, fit))
            except ContextTooLong as exc:
                last = exc
                if not _shrink(request, fit, exc):
                    break
        assert last is not None
        raise ContextTooLong(
            f"the request does not fit the model's context even with {fit.elided} tool "
            f"outputs elided: {last.size()} ({last.provider} said: {last})", status=last.status,
            provider=last.provider, limit=last.limit, prompt=last.prompt, asked=last.asked,
            over=last.over) from None

    async def aclose(self) -> None:
        closer = getattr(self.inner, "aclose", None)
        if closer is not None:
            await closer()


def _tool_positions(request: ModelRequest) -> list[int]:
    return [i for i, m in enumerate(request.messages) if m.role == "tool"]


def _shrink(request: ModelRequest, fit: _Fit, exc: ContextTooLong) -> bool:
    """Less for the next try; False when nothing is left to take away."""
    if exc.limit is not None and exc.prompt is not None and exc.prompt < exc.limit:
        room = exc.limit - exc.prompt  # the prompt fits: ask for a completion that does too
        if room >= _MIN_COMPLETION and (fit.max_tokens is None or room < fit.max_tokens):
            fit.max_tokens = room
            return True
    total = len(_tool_positions(request))
    if fit.elided >= total:
        return False
    size = exc.prompt or exc.asked
    need = exc.over or (size - exc.limit if size and exc.limit else 0)
    if not need:  # the server did not say how far over: half of what is left, each try
        fit.elided += max(1, (total - fit.elided) // 2)
        return True
    # enough to free what it is over by (~3 characters a token, on the safe side)
    step, freed = 0, 0
    positions = _tool_positions(request)
    while fit.elided + step < total:
        freed += len(request.messages[positions[fit.elided + step]].content) // 3
        step += 1
        if freed >= need:
            break
    fit.elided += step
    return True


def _shrunk(request: ModelRequest, fit: _Fit) -> ModelRequest:
    if not fit.elided and fit.max_tokens is None:
        return request
    messages = list(request.messages)
    for i in _tool_positions(request)[: fit.elided]:
        messages[i] = _stub(messages[i])
    max_tokens = request.max_tokens
    if fit.max_tokens is not None:
        max_tokens = min(max_tokens or fit.max_tokens, fit.max_tokens)
    return replace(request, messages=messages, max_tokens=max_tokens)


def _stub(m: Message) -> Message:
    ids = list(dict.fromkeys(_EVIDENCE.findall(m.content)))
    keep = (f" Evidence ids it returned, still citable: {', '.join(ids)}." if ids else "")
    return Message("tool", f"[output elided to fit the model's context.{keep}]",
                   tool_call_id=m.tool_call_id, name=m.name)
