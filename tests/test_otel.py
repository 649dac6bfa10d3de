"""OpenTelemetry spans of an LLM-mode investigation, captured with the SDK's in-memory
exporter: one per run, plan, task, model call and tool call, parented as agentkit parents
them, with the GenAI semantic conventions' attributes and token usage."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agentkit import Host, load_settings
from agentkit._api import build_orchestrator
from agentkit.otel import instrument
from agentkit.testing import FakeLLMServer

from .conftest import write_tree
from .llm_script import make_script
from .test_llm_pipeline import HOST


def test_spans_follow_the_run_with_genai_attributes(tmp_path: Path) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    root = write_tree(tmp_path / "host", HOST)
    with FakeLLMServer(make_script(["unit", "nccl-conf", "model"])) as server:
        settings = load_settings(None, {"base_url": server.base_url, "model": "fake"},
                                 environ={"AGENTKIT_CONFIG": "/dev/null"})
        orch = build_orchestrator(settings, Host.at(root))
        instrument(orch, provider.get_tracer("test"))

        async def go() -> Any:
            async with orch:
                return await orch.investigate("What NCCL and model settings does this host use?")

        answer = anyio.run(go)
    spans = exporter.get_finished_spans()
    by_kind: dict[str, list[Any]] = {}
    for s in spans:
        by_kind.setdefault(str(s.attributes.get("agentkit.kind", s.name)), []).append(s)
    assert len(by_kind["run"]) == 1 and len(by_kind["task"]) == 3
    chats = by_kind["llm"]
    assert len(chats) == answer.usage.llm_calls == 8  # plan + 3 × 2 + synthesis
    assert all(c.name == "chat fake" and c.attributes["gen_ai.operation.name"] == "chat"
               for c in chats)
    assert sum(c.attributes["gen_ai.usage.input_tokens"] for c in chats) == \
        answer.usage.input_tokens
    tools = by_kind["tool"]
    assert tools and all(t.attributes["gen_ai.operation.name"] == "execute_tool" and
                         t.name == f"execute_tool {t.attributes['gen_ai.tool.name']}"
                         for t in tools)
    run = by_kind["run"][0]
    ids = {s.context.span_id: s for s in spans}
    for t in by_kind["task"]:  # tasks are children of the run, tools of their task
        assert t.parent is not None and t.parent.span_id == run.context.span_id
    for tool in tools:
        parent = ids[tool.parent.span_id]
        assert parent.attributes["agentkit.kind"] == "task"
    assert all(s.end_time >= s.start_time for s in spans)
