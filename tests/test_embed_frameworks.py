"""agentkit's exported investigate tool called from other agent runtimes, each through its own
test model: pydantic-ai (FunctionModel) and the OpenAI Agents SDK (strict function tools, over
the OpenAI wire against a scripted server on 127.0.0.1). In strict shape the model passes null
for root and tasks instead of guessing them, and gets a cited answer."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from agentkit import handle_investigate, investigate_tool
from agentkit.testing import FakeLLMServer, Reply

from .conftest import EXAMPLES

ROOT = str(EXAMPLES / "hopper-deepseek")
ARGS = {"question": "Is NCCL tuned for this topology?", "root": None, "tasks": None}


def test_pydantic_ai_calls_the_exported_tool() -> None:
    pytest.importorskip("pydantic_ai", reason="pydantic-ai is in the test extra")
    from pydantic_ai import Agent, Tool
    from pydantic_ai.messages import (
        ModelMessage,
        ModelResponse,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
    )
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    spec = investigate_tool("openai", strict=True)["function"]

    async def investigate(**arguments: Any) -> dict[str, Any]:
        return await handle_investigate(arguments, root=ROOT)

    tool = Tool.from_schema(investigate, name="investigate", description=spec["description"],
                            json_schema=spec["parameters"])
    seen: list[Any] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        returns = [p for m in messages for p in getattr(m, "parts", [])
                   if isinstance(p, ToolReturnPart)]
        if not returns:
            assert [t.name for t in info.function_tools] == ["investigate"]
            return ModelResponse(parts=[ToolCallPart("investigate", dict(ARGS))])
        seen.append(returns[-1].content)
        return ModelResponse(parts=[TextPart(returns[-1].content["answer"]["bottom_line"][0]
                                             ["text"])])

    agent = Agent(FunctionModel(model), tools=[tool])
    result = anyio.run(agent.run, "Is NCCL tuned on this host?")
    assert "NCCL" in result.output
    answer = seen[0]["answer"]
    assert answer["citations"] and answer["bottom_line"][0]["evidence"]


def test_the_openai_agents_sdk_calls_the_exported_tool_as_a_strict_function_tool() -> None:
    pytest.importorskip("agents", reason="openai-agents is in the test extra")
    from agents import Agent, FunctionTool, OpenAIChatCompletionsModel, Runner, set_tracing_disabled
    from openai import AsyncOpenAI

    set_tracing_disabled(True)  # its default exporter would reach the internet
    spec = investigate_tool("openai", strict=True)["function"]
    results: list[dict[str, Any]] = []

    async def on_invoke(ctx: Any, arguments: str) -> str:
        out = await handle_investigate(arguments, root=ROOT)
        results.append(out)
        return json.dumps(out["answer"]["bottom_line"] if "answer" in out else out)

    tool = FunctionTool(name="investigate", description=spec["description"],
                        params_json_schema=spec["parameters"], on_invoke_tool=on_invoke,
                        strict_json_schema=True)

    def script(request: Any) -> Reply:
        body = request if isinstance(request, dict) else json.loads(request)
        tools = body.get("tools") or []
        if not any(m.get("role") == "tool" for m in body.get("messages", [])):
            fn = tools[0]["function"]
            assert fn["name"] == "investigate" and fn.get("strict") is True
            assert sorted(fn["parameters"]["required"]) == ["question", "root", "tasks"]
            return Reply.openai(calls=[("investigate", dict(ARGS))])
        told = next(m for m in body["messages"] if m.get("role") == "tool")["content"]
        return Reply.openai(text="From agentkit: " + str(told)[:200])

    with FakeLLMServer(script) as server:
        client = AsyncOpenAI(base_url=server.base_url, api_key="test-key")
        agent = Agent(name="ops", instructions="Use investigate.", tools=[tool],
                      model=OpenAIChatCompletionsModel(model="fake", openai_client=client))
        result = anyio.run(Runner.run, agent, "Is NCCL tuned on this host?")
    assert results and "answer" in results[0], results
    assert results[0]["answer"]["citations"]
    assert result.final_output.startswith("From agentkit: ")
