"""LLM mode with a model that follows the JSON schemas it is given to the letter and knows
nothing else (agentkit.testing.SchemaFollowingModel, seeded): the schemas themselves must say
what is valid (template and tool names, evidence ids as enums), in the shape strict backends
accept. Before this, 0 of 30 such runs got past planning."""

from __future__ import annotations

import json
from typing import Any

import anyio

from agentkit import Host, load_settings
from agentkit._api import build_orchestrator
from agentkit._llm._messages import ModelRequest, ModelResponse
from agentkit._llm._openai import _encode_tool
from agentkit.testing import SchemaFollowingModel

from .conftest import EXAMPLES

QUESTION = "Do previous optimizations apply? Would an FP8 KV cache help?"


class Recording(SchemaFollowingModel):
    def __init__(self, seed: int) -> None:
        super().__init__(seed)
        self.requests: list[ModelRequest] = []

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        return await super().complete(request)


def _run(seed: int) -> tuple[Any, Recording, int, int]:
    model = Recording(seed)
    settings = load_settings(None, {"base_url": "http://127.0.0.1:9/v1", "model": "m"},
                             environ={"AGENTKIT_CONFIG": "/dev/null"})
    orch = build_orchestrator(settings, Host.at(EXAMPLES / "hopper-deepseek"), model=model)
    running, peak = 0, 0

    def watch(ev: dict[str, Any]) -> None:
        nonlocal running, peak
        if ev["kind"] == "task":
            running += 1 if ev["phase"] == "start" else -1
            peak = max(peak, running)

    orch.trace.listen(watch)
    answer = anyio.run(orch.investigate, QUESTION)
    return answer, model, peak, len(answer.tasks)


def test_nearly_every_seed_ends_in_a_cited_answer_with_tasks_overlapping() -> None:
    cited, overlapped, multi = 0, 0, 0
    for seed in range(100):
        answer, _, peak, n_tasks = _run(seed)
        valid = {c.id for c in answer.citations}
        cited += any(e in valid for c in answer.bottom_line for e in c.evidence)
        if n_tasks >= 3:
            multi += 1
            overlapped += peak >= 3
    assert cited >= 95, cited
    assert multi and overlapped == multi  # every multi-task plan ran its tasks at once


def _objects(node: Any) -> list[dict[str, Any]]:
    if isinstance(node, list):
        return [o for n in node for o in _objects(n)]
    if not isinstance(node, dict):
        return []
    found = [node] if node.get("type") == "object" or "properties" in node else []
    return found + [o for v in node.values() for o in _objects(v)]


def test_submission_schemas_are_strict_and_name_what_is_valid() -> None:
    _, model, _, _ = _run(3)
    by_name = {t.name: t for r in model.requests for t in r.tools}
    plan, answer = by_name["submit_plan"], by_name["submit_answer"]
    for spec in (plan, answer):
        assert spec.strict
        for obj in _objects(spec.parameters):
            assert obj.get("additionalProperties") is False, obj
            assert sorted(obj.get("required", [])) == sorted(obj.get("properties", {})), obj
        wire = json.loads(_encode_tool(spec))
        assert wire["function"]["strict"] is True
    task = plan.parameters["$defs"]["_PlannedTask"]["properties"]
    template = next(o for o in task["template"]["anyOf"] if o.get("type") != "null")
    assert "kv-cache-dtype-support" in template["enum"] and "nccl-env" in template["enum"]
    tools = next(o for o in task["tools"]["anyOf"] if o.get("type") == "array")["items"]
    assert "read_file" in tools["enum"] and "run_command" in tools["enum"]
    text = json.dumps(answer.parameters)
    assert '"enum": ["E' in text  # evidence ids the tasks returned, and only those


def test_the_exported_investigate_tool_in_strict_shape() -> None:
    import anyio as _anyio

    from agentkit import handle_investigate, investigate_tool

    tool = investigate_tool("openai", strict=True)["function"]
    params = tool["parameters"]
    assert tool["strict"] is True
    for obj in _objects(params):
        assert obj.get("additionalProperties") is False
        assert sorted(obj["required"]) == sorted(obj["properties"])
    tasks = next(o for o in params["properties"]["tasks"]["anyOf"] if o.get("type") == "array")
    assert "nccl-env" in tasks["items"]["enum"]
    # what a strict model sends for the optional ones (nulls) is accepted
    out = _anyio.run(lambda: handle_investigate(
        {"question": "Is NCCL tuned?", "root": None, "tasks": None},
        root=str(EXAMPLES / "hopper-deepseek")))
    assert "answer" in out, out
    plain = investigate_tool("anthropic")["input_schema"]
    assert plain["required"] == ["question"]  # the relaxed shape is unchanged
