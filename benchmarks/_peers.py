"""The peers, each fanning out the idiomatic way (install with `pip install -e '.[bench]'`).

Tuning applied, as each library documents it: LangGraph and pydantic-ai out of the box; the
OpenAI Agents SDK with its tracing exporter disabled (it would try to upload spans) and one
shared AsyncOpenAI client with a raised connection limit.
"""

from __future__ import annotations

import asyncio
from typing import Any

SYSTEM = "You are a subagent. Call echo K times, then answer."


def _base(url: str) -> str:
    return url.rsplit("/chat/completions", 1)[0]


async def langgraph_run(url: str, n: int, k: int) -> dict[str, Any]:
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI
    from langgraph.prebuilt import create_react_agent

    @tool
    def echo(text: str) -> str:
        """Echo text."""
        return text

    llm = ChatOpenAI(model="m", base_url=_base(url), api_key="x", max_retries=0)
    agent = create_react_agent(llm, [echo], prompt=SYSTEM)
    await asyncio.gather(*(agent.ainvoke({"messages": [("user", f"task {i}")]},
                                         {"recursion_limit": 4 * (k + 2)})
                           for i in range(n)))
    return {}


async def openai_agents_run(url: str, n: int, k: int) -> dict[str, Any]:
    import httpx
    from agents import (
        Agent,
        OpenAIChatCompletionsModel,
        Runner,
        function_tool,
        set_tracing_disabled,
    )
    from openai import AsyncOpenAI

    set_tracing_disabled(True)

    @function_tool
    def echo(text: str) -> str:
        """Echo text."""
        return text

    client = AsyncOpenAI(base_url=_base(url), api_key="x", max_retries=0,
                         http_client=httpx.AsyncClient(limits=httpx.Limits(
                             max_connections=n, max_keepalive_connections=n)))
    agent = Agent(name="sub", instructions=SYSTEM, tools=[echo],
                  model=OpenAIChatCompletionsModel(model="m", openai_client=client))
    await asyncio.gather(*(Runner.run(agent, f"task {i}", max_turns=k + 2) for i in range(n)))
    return {}


async def pydantic_ai_run(url: str, n: int, k: int) -> dict[str, Any]:
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    model = OpenAIChatModel("m", provider=OpenAIProvider(base_url=_base(url), api_key="x"))
    agent = Agent(model, system_prompt=SYSTEM)

    @agent.tool_plain
    def echo(text: str) -> str:
        """Echo text."""
        return text

    await asyncio.gather(*(agent.run(f"task {i}") for i in range(n)))
    return {}


PEERS = {"langgraph": langgraph_run, "openai-agents": openai_agents_run,
         "pydantic-ai": pydantic_ai_run}
