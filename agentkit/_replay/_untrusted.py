"""A trace read from disk is untrusted input (issue 28, T-A).

agentkit redacts what its tools return before it is traced, but a trace copied from another
machine, written by another version, or crafted, may hold anything: ``HF_TOKEN=hf_…`` in a
tool result, a password in the recorded answer. So every string of one passes the tools'
redactor before it is shown (replay's text and JSON, ``trace show``, the HTML report, MCP
``replay``). The replay itself still runs on the strings as recorded, so an exact replay is
judged identical or not on them; a trace agentkit recorded is redacted already, and comes
out as it went in.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, TypeVar

from pydantic import BaseModel

from .._sandbox._redact import redact
from .._trace._read import TraceFile
from ._result import ReplayResult

M = TypeVar("M", bound=BaseModel)


def redacted(value: Any) -> Any:
    """``value`` (JSON-like) with every string, keys included, redacted; the same object
    where nothing changed."""
    if isinstance(value, str):
        clean = redact(value)
        return value if clean == value else clean
    if isinstance(value, dict):
        new = {redacted(k): redacted(v) for k, v in value.items()}
        same = len(new) == len(value) and all(
            k in value and new[k] is value[k] for k in new)
        return value if same else new
    if isinstance(value, (list, tuple)):
        items = [redacted(v) for v in value]
        same = all(a is b for a, b in zip(items, value, strict=True))
        return value if same else type(value)(items)
    return value


def redacted_model(model: M) -> M:
    """A pydantic object (an answer, an evidence item) with its strings redacted: the same
    object when none changed, so what was clean prints byte for byte as before."""
    dumped = model.model_dump(mode="json")
    clean = redacted(dumped)
    return model if clean is dumped else type(model).model_validate(clean)


def redacted_error(exc: BaseException) -> str:
    """A reader's error as it may be shown: it quotes what it refuses (``trace version
    '…'``), which is the file's text."""
    return redact(str(exc))


def redacted_trace(tf: TraceFile) -> TraceFile:
    """The trace as it may be shown."""
    events = []
    for e in tf.events:
        data = redacted(e.data)
        events.append(e if data is e.data else e.model_copy(update={"data": data}))
    return replace(tf, events=events, notes=[redact(n) for n in tf.notes])


def redacted_result(result: ReplayResult) -> ReplayResult:
    """A replay's result as it may be shown: its answers, notes and drift."""
    drift = result.drift
    if drift is not None:
        drift = replace(drift, changed=[(redacted_model(a), redacted_model(b))
                                        for a, b in drift.changed],
                        gone=[redacted_model(e) for e in drift.gone],
                        new=[redacted_model(e) for e in drift.new],
                        findings=[redact(f) for f in drift.findings],
                        stale_steps=[redact(s) for s in drift.stale_steps])
    return replace(result,
                   answer=result.answer and redacted_model(result.answer),
                   recorded=result.recorded and redacted_model(result.recorded),
                   notes=[redact(n) for n in result.notes],
                   tasks=redacted(result.tasks), drift=drift)
