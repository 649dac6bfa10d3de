"""One fan-out measurement per process: N subagents × (K tool steps + a final answer) against
the mock server. Each runner is the idiomatic way to fan out in its library."""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
from typing import Any

SYSTEM = "You are a subagent. Call echo K times, then answer."
ECHO_SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}},
               "required": ["text"]}
TOOLS = [{"type": "function", "function": {"name": "echo", "description": "Echo text.",
                                           "parameters": ECHO_SCHEMA}}]


async def floor(url: str, n: int, k: int) -> dict[str, Any]:
    """The floor: a plain aiohttp loop, no framework."""
    import aiohttp

    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:

        async def post(msgs: list[dict[str, Any]]) -> Any:
            async with session.post(url, json={"model": "m", "messages": msgs,
                                               "tools": TOOLS}) as resp:
                return await resp.json()

        await asyncio.gather(*(_plain_agent(post, i, k) for i in range(n)))
    return {}


async def _plain_agent(post: Any, i: int, k: int) -> None:
    """One subagent of the plain loops: post the history, run the echo calls, repeat."""
    msgs: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM},
                                  {"role": "user", "content": f"task {i}"}]
    for _ in range(k + 1):
        msg = (await post(msgs))["choices"][0]["message"]
        msgs.append(msg)
        for call in msg.get("tool_calls") or []:
            args = json.loads(call["function"]["arguments"])
            msgs.append({"role": "tool", "tool_call_id": call["id"],
                         "content": json.dumps({"text": args["text"]})})


async def httpx_loop(url: str, n: int, k: int) -> dict[str, Any]:
    """The same loop over a plain httpx client with its default pool."""
    import httpx

    async with httpx.AsyncClient(timeout=60) as client:

        async def post(msgs: list[dict[str, Any]]) -> Any:
            resp = await client.post(url, json={"model": "m", "messages": msgs, "tools": TOOLS})
            return resp.json()

        await asyncio.gather(*(_plain_agent(post, i, k) for i in range(n)))
    return {}


def _echo_tool() -> Any:
    from agentkit import ToolContext, tool

    # async: it never blocks, so it needs no worker thread (agentkit runs plain functions in
    # one, as a blocking read would need); the peers' echo tools are the same one-liner
    @tool
    async def echo(ctx: ToolContext, text: str) -> dict[str, Any]:
        """Echo text."""
        return {"text": text}

    return echo


_TOOLS: dict[str, Any] = {}


async def agentkit_run(url: str, n: int, k: int) -> dict[str, Any]:
    """agentkit's own subagents (sandbox, validation, evidence) with tracing on."""
    from agentkit import Host, OpenAIChatModel, Orchestrator, Plan, TaskSpec, Trace
    from agentkit._llm._traced import TracedModel
    from agentkit._runner import DefaultRunner

    echo = _TOOLS.get("echo") or _echo_tool()
    with tempfile.TemporaryDirectory() as tmp:
        trace = Trace(os.path.join(tmp, "bench.jsonl"))
        model = OpenAIChatModel(url.rsplit("/chat/completions", 1)[0], "m")
        traced = TracedModel(model, trace)
        orch = Orchestrator(planner=None, runner=DefaultRunner(traced),  # type: ignore[arg-type]
                            synthesizer=None, host=Host.at(tmp),  # type: ignore[arg-type]
                            trace=trace, concurrency=n, tools={"echo": echo})
        orch.tune_gc = True  # as the CLI runs it (the library default leaves the GC alone)
        plan = Plan(question="bench", mode="llm", tasks=[
            TaskSpec(id=f"t{i}", title="fan-out", objective=f"echo {k} times", tools=["echo"])
            for i in range(n)])
        results = await orch.run_tasks(plan)
        await model.aclose()
        trace.close()
        size = os.path.getsize(os.path.join(tmp, "bench.jsonl"))
    bad = [r.task_id for r in results if r.status != "partial" or r.usage.llm_calls != k + 1]
    if bad:
        raise RuntimeError(f"{len(bad)} subagents did not complete as scripted: {bad[:3]}")
    return {"trace_bytes": size, "cache_hits": orch.cache.hits, "cache_misses": orch.cache.misses}


def warm_up(runner: str) -> None:
    if runner == "floor":
        import aiohttp
    elif runner == "httpx":
        import httpx  # noqa: F401
    elif runner in ("langgraph", "openai-agents", "pydantic-ai"):
        import importlib

        for mod in {"langgraph": ["langgraph.prebuilt", "langchain_openai"],
                    "openai-agents": ["agents", "openai"],
                    "pydantic-ai": ["pydantic_ai", "pydantic_ai.models.openai"]}[runner]:
            importlib.import_module(mod)
    else:
        import aiohttp  # noqa: F401  (agentkit imports it on the first model call)
        import anyio

        import agentkit._runner  # noqa: F401
        from agentkit._subagent import submit_spec

        submit_spec()
        _TOOLS["echo"] = _echo_tool()  # tools are defined at import time in real programs
        anyio.run(anyio.sleep, 0)  # loads anyio's asyncio backend, as any first run does


RUNNERS: dict[str, Any] = {"floor": floor, "httpx": httpx_loop, "agentkit": agentkit_run}
try:
    from ._peers import PEERS

    RUNNERS.update(PEERS)
except ImportError:  # pragma: no cover - peers are optional
    pass
