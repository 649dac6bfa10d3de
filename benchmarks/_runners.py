"""One fan-out measurement per process: N subagents × (K tool steps + a final answer) against
the mock server.

Every runner is ``prepare(url, n, tool) -> (run, close)``: ``prepare`` is set-up (clients,
agents, graphs, orchestrators; timed, but apart from the run), ``run(k)`` is the fan-out
(timed), ``close`` tears down (not timed; it may return figures known only then, such as the
trace's size). ``tool`` is ``"def"`` or ``"async"``: the echo tool as a plain function (every
framework here runs those in a worker thread) or as a coroutine (run inline). Its body is
:func:`tool_body` for every framework, the floor included.

agentkit is driven through its public API only (``from agentkit import ...``), with its
built-in tools offered beside the echo tool, as a user's orchestrator would be.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import tempfile
from collections.abc import Awaitable, Callable
from typing import Any

SYSTEM = "You are a subagent. Call echo with the text you are given, K times, then answer."
ECHO_SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}},
               "required": ["text"]}
TOOLS = [{"type": "function", "function": {"name": "echo", "description": "Echo text.",
                                           "parameters": ECHO_SCHEMA}}]
# Generous for N=4096 against a 50 ms mock: a slow framework is measured, not timed out.
HTTP_TIMEOUT_S = 600.0

Run = Callable[[int], Awaitable[dict[str, Any]]]
Close = Callable[[], Awaitable[Any]]  # may return a dict of figures known only after
Prepared = tuple[Run, Close]

_calls = itertools.count()  # next() is atomic under the GIL: safe from worker threads


def tool_body(text: str) -> str:
    """The echo tool's body, the same for every framework (and the floor)."""
    next(_calls)
    return text


def tool_calls_so_far() -> int:
    """How many times :func:`tool_body` ran in this process (reading it costs one)."""
    return next(_calls)


def user_prompt(i: int, k: int) -> str:
    # The mock server keys each subagent's echo arguments on "subagent-<i>".
    return f"subagent-{i}: call echo {k} times with the text you are given, then answer."


# ---------------------------------------------------------------------------------------
# The floor: no framework


async def _plain_agent(post: Callable[[list[dict[str, Any]]], Awaitable[Any]], i: int,
                       k: int) -> None:
    """One subagent of the plain loops: post the history, run the echo calls, repeat."""
    msgs: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM},
                                  {"role": "user", "content": user_prompt(i, k)}]
    for _ in range(k + 1):
        msg = (await post(msgs))["choices"][0]["message"]
        msgs.append(msg)
        for call in msg.get("tool_calls") or []:
            args = json.loads(call["function"]["arguments"])
            msgs.append({"role": "tool", "tool_call_id": call["id"],
                         "content": tool_body(args["text"])})
    if msgs[-1].get("content") != "done":
        raise RuntimeError(f"subagent {i} did not finish: {msgs[-1]!r}")


async def prepare_floor(url: str, n: int, tool: str) -> Prepared:
    """The floor: a plain aiohttp loop, no framework, the tool body called inline."""
    import aiohttp

    session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0),
                                    timeout=aiohttp.ClientTimeout(total=HTTP_TIMEOUT_S))

    async def post(msgs: list[dict[str, Any]]) -> Any:
        async with session.post(url, json={"model": "m", "messages": msgs,
                                           "tools": TOOLS}) as resp:
            resp.raise_for_status()
            return await resp.json()

    async def run(k: int) -> dict[str, Any]:
        await asyncio.gather(*(_plain_agent(post, i, k) for i in range(n)))
        return {}

    return run, session.close


async def prepare_httpx(url: str, n: int, tool: str) -> Prepared:
    """The same loop over an httpx client with its default pool (a second reference)."""
    import httpx

    client = httpx.AsyncClient(timeout=HTTP_TIMEOUT_S)

    async def post(msgs: list[dict[str, Any]]) -> Any:
        resp = await client.post(url, json={"model": "m", "messages": msgs, "tools": TOOLS})
        resp.raise_for_status()
        return resp.json()

    async def run(k: int) -> dict[str, Any]:
        await asyncio.gather(*(_plain_agent(post, i, k) for i in range(n)))
        return {}

    return run, client.aclose


# ---------------------------------------------------------------------------------------
# agentkit, through its public API


def agentkit_echo(kind: str) -> Any:
    from agentkit import ToolContext, tool

    if kind == "async":
        @tool
        async def echo(ctx: ToolContext, text: str) -> str:
            """Echo text."""
            return tool_body(text)
    else:
        @tool
        def echo(ctx: ToolContext, text: str) -> str:  # type: ignore[misc]
            """Echo text."""
            return tool_body(text)
    return echo


def _agentkit(config: str) -> Callable[[str, int, str], Awaitable[Prepared]]:
    async def prepare(url: str, n: int, tool: str) -> Prepared:
        from agentkit import Orchestrator, Plan, TaskSpec

        tmp = tempfile.mkdtemp(prefix="agentkit-bench-")
        trace_path = os.path.join(tmp, "trace.jsonl")
        orch = Orchestrator.from_env(
            root=tmp, tools=[agentkit_echo(tool)], trace=trace_path,
            config_file=os.devnull,  # nobody's ~/.config changes the benchmark
            base_url=url.rsplit("/chat/completions", 1)[0], model="m",
            concurrency=n, timeout_s=HTTP_TIMEOUT_S)
        if config == "tuned":
            orch.tune_gc = True  # the documented opt-in (the CLI turns it on)
        elif config == "nocache":
            orch.cache_tools = False

        async def run(k: int) -> dict[str, Any]:
            # No TaskSpec.tools: every tool the orchestrator offers (the built-ins and echo)
            # is in every request, as in an investigation the model plans.
            plan = Plan(question="bench", mode="llm", tasks=[
                TaskSpec(id=f"subagent-{i}", title="fan-out", objective=user_prompt(i, k))
                for i in range(n)])
            results = await orch.run_tasks(plan)
            bad = [r for r in results
                   if r.status != "partial" or r.usage.llm_calls != k + 1]
            if bad:
                raise RuntimeError(f"{len(bad)} of {n} subagents did not complete as scripted; "
                                   f"first: {bad[0].task_id} {bad[0].status} {bad[0].summary}")
            return {"cache_hits": orch.cache.hits, "cache_misses": orch.cache.misses}

        async def close() -> dict[str, Any]:
            await orch.aclose()
            size = os.path.getsize(trace_path)
            os.unlink(trace_path)
            os.rmdir(tmp)
            return {"trace_bytes": size}

        return run, close

    return prepare


PREPARE: dict[str, Callable[[str, int, str], Awaitable[Prepared]]] = {
    "floor": prepare_floor,
    "httpx": prepare_httpx,
    "agentkit:default": _agentkit("default"),
    "agentkit:tuned": _agentkit("tuned"),
    "agentkit:nocache": _agentkit("nocache"),
}
# runners whose tool is not a framework's tool (the body is called inline)
NO_TOOL_VARIANTS = {"floor", "httpx"}

WARM: dict[str, list[str]] = {
    "floor": ["aiohttp"],
    "httpx": ["httpx"],
    # agentkit imports aiohttp on its first model call; a real program has imported it by
    # its second investigation
    "agentkit": ["agentkit._orchestrator", "agentkit._api", "agentkit._agents._subagent", "aiohttp",
                 "anyio._backends._asyncio"],
}

try:
    from ._peers import PEER_WARM, PEERS

    PREPARE.update(PEERS)
    WARM.update(PEER_WARM)
except ImportError:  # pragma: no cover - peers are optional
    pass


def warm_up(runner: str) -> None:
    """Imports are start-up cost, the same for every runner: done before any clock starts."""
    import importlib

    for mod in WARM.get(runner.split(":")[0], []):
        importlib.import_module(mod)
