"""The peers, each in two configurations (install with ``pip install -e '.[bench]'``):

``default``: what a user gets following the library's getting-started page for an
OpenAI-compatible endpoint, nothing tuned (default HTTP client, timeouts, retries, tracing).

``best``: the library's own documented advice for throughput, applied:

- every peer: one ``AsyncOpenAI`` client over aiohttp (``openai.DefaultAioHttpClient``; the
  openai-python README: "for improved concurrency performance you may also use aiohttp as the
  HTTP backend"), built once and shared by every subagent; the agent, model and graph built
  once (LangGraph's graph compiled once).
- OpenAI Agents SDK: tracing disabled (``set_tracing_disabled``, as its docs advise for a
  non-OpenAI provider), one ``OpenAIChatCompletionsModel`` reused by every run rather than a
  model resolved by the default provider per run.
- pydantic-ai: the shared client passed as ``OpenAIProvider(openai_client=...)``.
- LangGraph: ``ChatOpenAI(http_async_client=...)``.

Timeouts are the libraries' own (600 s in the openai client) or 600 s where we pass a client,
so N=2048 against the mock is measured, not timed out. Retries are left at each library's
default in both configurations. The OpenAI Agents SDK's default configuration keeps tracing
on but has no key to export with (``OPENAI_API_KEY`` is unset in the benchmark's processes):
its spans are built and batched, and the upload is skipped (cheaper than a real export).

The echo tool is the same body (``tool_body``) as a plain ``def`` or an ``async def``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from ._runners import HTTP_TIMEOUT_S, SYSTEM, Prepared, tool_body, user_prompt


def _base(url: str) -> str:
    return url.rsplit("/chat/completions", 1)[0]


def _aiohttp_openai(url: str) -> Any:
    from openai import AsyncOpenAI, DefaultAioHttpClient

    return AsyncOpenAI(base_url=_base(url), api_key="x", timeout=HTTP_TIMEOUT_S,
                       http_client=DefaultAioHttpClient(timeout=HTTP_TIMEOUT_S))


def _check(outputs: list[Any], n: int) -> dict[str, Any]:
    done = sum(1 for o in outputs if o == "done")
    if done != n:
        raise RuntimeError(f"{n - done} of {n} subagents did not finish; e.g. {outputs[0]!r}")
    return {}


# ---------------------------------------------------------------------------------------
# LangGraph


def _langgraph(config: str) -> Callable[[str, int, str], Awaitable[Prepared]]:
    async def prepare(url: str, n: int, tool: str) -> Prepared:
        from langchain_core.tools import tool as lc_tool
        from langchain_openai import ChatOpenAI
        from langgraph.prebuilt import create_react_agent

        if tool == "async":
            @lc_tool
            async def echo(text: str) -> str:
                """Echo text."""
                return tool_body(text)
        else:
            @lc_tool
            def echo(text: str) -> str:  # type: ignore[misc]
                """Echo text."""
                return tool_body(text)

        closers: list[Any] = []
        if config == "best":
            from openai import DefaultAioHttpClient

            http = DefaultAioHttpClient(timeout=HTTP_TIMEOUT_S)
            closers.append(http.aclose)
            llm = ChatOpenAI(model="m", base_url=_base(url), api_key="x",
                             http_async_client=http, timeout=HTTP_TIMEOUT_S)
        else:
            llm = ChatOpenAI(model="m", base_url=_base(url), api_key="x")
        agent = create_react_agent(llm, [echo], prompt=SYSTEM)  # compiled once

        async def run(k: int) -> dict[str, Any]:
            outs = await asyncio.gather(*(
                agent.ainvoke({"messages": [("user", user_prompt(i, k))]},
                              {"recursion_limit": 4 * (k + 2)}) for i in range(n)))
            return _check([o["messages"][-1].content for o in outs], n)

        async def close() -> None:
            for c in closers:
                await c()

        return run, close

    return prepare


# ---------------------------------------------------------------------------------------
# OpenAI Agents SDK


def _openai_agents(config: str) -> Callable[[str, int, str], Awaitable[Prepared]]:
    async def prepare(url: str, n: int, tool: str) -> Prepared:
        from agents import Agent, Runner, function_tool

        if tool == "async":
            @function_tool
            async def echo(text: str) -> str:
                """Echo text."""
                return tool_body(text)
        else:
            @function_tool
            def echo(text: str) -> str:  # type: ignore[misc]
                """Echo text."""
                return tool_body(text)

        if config == "best":
            from agents import OpenAIChatCompletionsModel, set_tracing_disabled

            set_tracing_disabled(True)
            client = _aiohttp_openai(url)
            agent = Agent(name="sub", instructions=SYSTEM, tools=[echo],
                          model=OpenAIChatCompletionsModel(model="m", openai_client=client))
        else:
            from agents import set_default_openai_api, set_default_openai_client
            from openai import AsyncOpenAI

            client = AsyncOpenAI(base_url=_base(url), api_key="x")
            # the SDK's configuration page for another endpoint; the key is not for tracing
            set_default_openai_client(client, use_for_tracing=False)
            set_default_openai_api("chat_completions")
            agent = Agent(name="sub", instructions=SYSTEM, tools=[echo], model="m")

        async def run(k: int) -> dict[str, Any]:
            outs = await asyncio.gather(*(Runner.run(agent, user_prompt(i, k), max_turns=k + 2)
                                          for i in range(n)))
            return _check([o.final_output for o in outs], n)

        async def close() -> None:
            await client.close()

        return run, close

    return prepare


# ---------------------------------------------------------------------------------------
# pydantic-ai


def _pydantic_ai(config: str) -> Callable[[str, int, str], Awaitable[Prepared]]:
    async def prepare(url: str, n: int, tool: str) -> Prepared:
        from pydantic_ai import Agent
        from pydantic_ai.models.openai import OpenAIChatModel
        from pydantic_ai.providers.openai import OpenAIProvider

        client = None
        if config == "best":
            client = _aiohttp_openai(url)
            provider = OpenAIProvider(openai_client=client)
        else:
            provider = OpenAIProvider(base_url=_base(url), api_key="x")
        agent = Agent(OpenAIChatModel("m", provider=provider), system_prompt=SYSTEM)

        if tool == "async":
            @agent.tool_plain
            async def echo(text: str) -> str:
                """Echo text."""
                return tool_body(text)
        else:
            @agent.tool_plain
            def echo(text: str) -> str:  # type: ignore[misc]
                """Echo text."""
                return tool_body(text)

        async def run(k: int) -> dict[str, Any]:
            outs = await asyncio.gather(*(agent.run(user_prompt(i, k)) for i in range(n)))
            return _check([o.output for o in outs], n)

        async def close() -> None:
            if client is not None:
                await client.close()

        return run, close

    return prepare


PEERS: dict[str, Callable[[str, int, str], Awaitable[Prepared]]] = {
    f"{name}:{config}": make(config)
    for name, make in (("langgraph", _langgraph), ("openai-agents", _openai_agents),
                       ("pydantic-ai", _pydantic_ai))
    for config in ("best", "default")
}
PEER_WARM = {"langgraph": ["langgraph.prebuilt", "langchain_openai", "langchain_core.tools",
                           "openai"],
             "openai-agents": ["agents", "openai"],
             "pydantic-ai": ["pydantic_ai", "pydantic_ai.models.openai",
                             "pydantic_ai.providers.openai", "openai"]}
