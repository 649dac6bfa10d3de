"""OpenTelemetry spans for an investigation (``pip install 'agentkit[otel]'``).

Every run, plan, task, model call and tool call is already a span of agentkit's own trace;
this listener turns each into an OpenTelemetry span with the GenAI semantic conventions'
attributes (``gen_ai.operation.name``, ``gen_ai.request.model``, token usage,
``gen_ai.tool.name``), parented as agentkit parents them, timed by the trace's clock.

>>> from opentelemetry.sdk.trace import TracerProvider  # doctest: +SKIP
>>> from agentkit.otel import instrument  # doctest: +SKIP
>>> instrument(orch, TracerProvider().get_tracer("agentkit"))  # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from opentelemetry import trace as otel
from opentelemetry.trace import Status, StatusCode

if TYPE_CHECKING:
    from ._orchestrator import Orchestrator

_NAMES = {"run": "invoke_agent agentkit", "task": "invoke_agent", "synthesize": "synthesize"}


class OTelBridge:
    """A trace listener that mirrors agentkit's spans as OpenTelemetry spans."""

    def __init__(self, tracer: otel.Tracer, model: str | None = None) -> None:
        self.tracer = tracer
        self.model = model
        self.spans: dict[str, otel.Span] = {}

    def __call__(self, ev: dict[str, Any]) -> None:
        kind, phase, data = ev["kind"], ev["phase"], ev.get("data") or {}
        ns = int(float(ev["ts"]) * 1e9)
        if kind == "plan" and phase == "event":
            parent = self.spans.get(ev.get("parent") or "")
            ctx = otel.set_span_in_context(parent) if parent else None
            span = self.tracer.start_span("plan", context=ctx, start_time=ns)
            span.set_attribute("agentkit.plan.tasks", [t["id"] for t in data.get("tasks", [])])
            span.end(end_time=ns)
            return
        if phase == "start" and ev.get("span"):
            parent = self.spans.get(ev.get("parent") or "")
            ctx = otel.set_span_in_context(parent) if parent else None
            span = self.tracer.start_span(self._name(kind, ev, data), context=ctx,
                                          start_time=ns, attributes=self._start(kind, ev, data))
            self.spans[ev["span"]] = span
        elif phase == "end" and ev.get("span") in self.spans:
            span = self.spans.pop(ev["span"])
            self._end(kind, span, data)
            span.end(end_time=ns)

    def _name(self, kind: str, ev: dict[str, Any], data: dict[str, Any]) -> str:
        if kind == "llm":
            return f"chat {self.model or 'model'}"
        if kind == "tool":
            return f"execute_tool {data.get('tool', '')}"
        if kind == "task":
            return f"invoke_agent {ev.get('task') or ''}".strip()
        return _NAMES.get(kind, kind)

    def _start(self, kind: str, ev: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
        attrs: dict[str, Any] = {"agentkit.kind": kind}
        if ev.get("task"):
            attrs["agentkit.task"] = ev["task"]
        if kind == "llm":
            attrs.update({"gen_ai.operation.name": "chat",
                          "agentkit.purpose": data.get("purpose", "")})
            if self.model:
                attrs["gen_ai.request.model"] = self.model
        elif kind == "tool":
            attrs.update({"gen_ai.operation.name": "execute_tool",
                          "gen_ai.tool.name": data.get("tool", "")})
        elif kind in ("run", "task"):
            attrs["gen_ai.operation.name"] = "invoke_agent"
            if kind == "run":
                attrs["agentkit.question"] = str(data.get("question", ""))[:500]
        return attrs

    def _end(self, kind: str, span: otel.Span, data: dict[str, Any]) -> None:
        if kind == "llm" and "response" in data:
            usage = data["response"].get("usage") or {}
            span.set_attribute("gen_ai.usage.input_tokens", int(usage.get("input_tokens", 0)))
            span.set_attribute("gen_ai.usage.output_tokens", int(usage.get("output_tokens", 0)))
            if data["response"].get("model"):
                span.set_attribute("gen_ai.response.model", data["response"]["model"])
        elif kind == "task" and isinstance(data.get("result"), dict):
            result = data["result"]
            span.set_attribute("agentkit.status", result.get("status", ""))
            usage = result.get("usage") or {}
            span.set_attribute("gen_ai.usage.input_tokens", int(usage.get("input_tokens", 0)))
            span.set_attribute("gen_ai.usage.output_tokens", int(usage.get("output_tokens", 0)))
        failed = data.get("error") or data.get("ok") is False or data.get("cancelled") or (
            kind == "run" and data.get("status") not in (None, "ok"))
        if failed:
            span.set_status(Status(StatusCode.ERROR, str(data.get("error") or "")[:200]))


def instrument(orch: Orchestrator, tracer: otel.Tracer | None = None) -> OTelBridge:
    """Mirror ``orch``'s spans into OpenTelemetry (the global tracer provider by default)."""
    bridge = OTelBridge(tracer or otel.get_tracer("agentkit"),
                        model=(orch.config or {}).get("model"))
    orch.trace.listen(bridge)
    return bridge
