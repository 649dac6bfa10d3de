"""agentkit as an MCP server, driven by the official MCP client over stdio."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from agentkit.testing import FakeLLMServer

from .conftest import EXAMPLES, write_tree
from .llm_script import stalling_script
from .test_llm_pipeline import HOST


def params(root: Path | str, env: dict[str, str] | None = None) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable,
                                 args=["-m", "agentkit", "mcp", "--root", str(root)],
                                 env={**os.environ, **(env or {})})


def test_list_tools_and_investigate_over_stdio() -> None:
    progress: list[tuple[float, float | None, str | None]] = []

    async def go() -> Any:
        async with stdio_client(params(EXAMPLES / "hopper-deepseek")) as (r, w), \
                ClientSession(r, w) as session:
            await session.initialize()
            tools = {t.name: t for t in (await session.list_tools()).tools}
            assert set(tools) == {"investigate", "list_tasks", "replay"}
            assert tools["investigate"].input_schema["required"] == ["question"]
            listed = await session.call_tool("list_tasks", {})
            names = [t["name"] for t in listed.structured_content["tasks"]]
            assert "kv-cache-dtype-support" in names

            async def on_progress(done: float, total: float | None, msg: str | None) -> None:
                progress.append((done, total, msg))

            return await session.call_tool(
                "investigate", {"question": "Would an FP8 KV cache help?"},
                progress_callback=on_progress)

    result = anyio.run(go)
    assert not result.is_error
    answer = result.structured_content["answer"]
    assert answer["bottom_line"][0]["text"].startswith("Yes")
    assert answer["citations"] and all(c["locator"] for c in answer["citations"])
    assert all(len(c["excerpt"]) <= 160 for c in answer["citations"])
    assert progress[-1][0] == progress[-1][1] == len(answer["tasks"])


def test_client_cancellation_stops_the_subagents(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "host", HOST)
    traces = tmp_path / "traces"

    async def go(server: FakeLLMServer) -> int:
        env = {"AGENTKIT_BASE_URL": server.base_url, "AGENTKIT_MODEL": "fake",
               "AGENTKIT_TRACE_DIR": str(traces)}
        async with stdio_client(params(root, env)) as (r, w), ClientSession(r, w) as session:
            await session.initialize()
            async with anyio.create_task_group() as tg:
                tg.start_soon(session.call_tool, "investigate", {"question": "What is set?"})
                with anyio.fail_after(30):
                    while server.in_flight < 3:
                        await anyio.sleep(0.05)
                tg.cancel_scope.cancel()
            with anyio.fail_after(15):
                while not _ended(traces):
                    await anyio.sleep(0.1)
            seen = len(server.requests)
            await anyio.sleep(1.0)
            assert len(server.requests) == seen  # nothing new was sent after cancelling
            return seen

    with FakeLLMServer(stalling_script(["unit", "nccl-conf", "model"], 20)) as server:
        anyio.run(go, server)
    events = [json.loads(line) for line in _lines(next(traces.glob("run-*")))]
    assert events[-1]["kind"] == "run" and events[-1]["data"]["status"] == "cancelled"
    cancelled = [e["task"] for e in events if e["kind"] == "task" and e["phase"] == "end"
                 and e["data"].get("cancelled")]
    assert sorted(cancelled) == ["model", "nccl-conf", "unit"]


def _lines(path: Path) -> list[str]:
    """A trace's lines, compressed (the trace directory's .jsonl.gz) or not, as far as the
    file goes while it is being written."""
    import zlib

    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = zlib.decompressobj(wbits=31).decompress(data)
    return data.decode().splitlines()


def _ended(traces: Path) -> bool:
    files = list(traces.glob("run-*")) if traces.exists() else []
    if not files:
        return False
    lines = _lines(files[0])
    if not lines:
        return False
    last = json.loads(lines[-1])
    return bool(last["kind"] == "run" and last["phase"] == "end")



def test_streamable_http_transport(tmp_path: Path) -> None:
    import socket
    import subprocess

    from mcp.client.streamable_http import streamable_http_client

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "agentkit", "mcp", "--root",
                             str(EXAMPLES / "blackwell-kimi"), "--http", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)

    async def go() -> Any:
        with anyio.fail_after(30):
            while True:
                try:
                    with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                        break
                except OSError:
                    await anyio.sleep(0.1)
        async with streamable_http_client(f"http://127.0.0.1:{port}/mcp") as (r, w), \
                ClientSession(r, w) as session:
            await session.initialize()
            return await session.call_tool("investigate", {"question": "Is NCCL tuned?"})

    try:
        result = anyio.run(go)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert not result.is_error
    assert "NCCL_PROTO=LL" in json.dumps(result.structured_content["answer"])


def test_replay_tool_reads_only_traces_it_may_show(tmp_path: Path) -> None:
    from agentkit.cli import main

    traces = tmp_path / "traces"
    traces.mkdir()
    inside = traces / "run.jsonl"
    assert main(["ask", "Is NCCL tuned?", "--root", str(EXAMPLES / "blackwell-kimi"), "-q",
                 "--trace", str(inside)]) == 0
    outside = tmp_path / "elsewhere.jsonl"
    outside.write_bytes(inside.read_bytes())
    not_a_trace = traces / "notes.yaml"  # inside the directory, but no trace
    not_a_trace.write_text("password: x\n")

    async def go() -> tuple[Any, Any, Any]:
        env = {"AGENTKIT_TRACE_DIR": str(traces)}
        async with stdio_client(params(EXAMPLES / "blackwell-kimi", env)) as (r, w), \
                ClientSession(r, w) as session:
            await session.initialize()
            ok = await session.call_tool("replay", {"trace_path": str(inside)})
            refused = await session.call_tool("replay", {"trace_path": str(outside)})
            bad = await session.call_tool("replay", {"trace_path": str(not_a_trace)})
            return ok, refused, bad

    ok, refused, bad = anyio.run(go)
    assert not ok.is_error and ok.structured_content["identical"] is True
    assert refused.is_error and "not in the trace directory" in str(refused.content)
    # a refusal that says why, not the SDK's "Error executing tool replay"
    assert bad.is_error and "is not a trace agentkit can replay" in str(bad.content), bad


def test_a_failure_reaches_the_client_as_one_line_and_the_server_prints_no_traceback(
        tmp_path: Path) -> None:
    errlog = tmp_path / "server.err"

    async def go() -> Any:
        # a model server that is not there: planning cannot reach it
        env = {"AGENTKIT_BASE_URL": "http://127.0.0.1:9/v1", "AGENTKIT_MODEL": "m",
               "AGENTKIT_MAX_RETRIES": "1", "AGENTKIT_TRACE_DIR": str(tmp_path / "traces"),
               "AGENTKIT_CONFIG": "/dev/null"}
        with errlog.open("w") as err:
            async with stdio_client(params(EXAMPLES / "hopper-deepseek", env),
                                    errlog=err) as (r, w), ClientSession(r, w) as session:
                await session.initialize()
                return await session.call_tool("investigate",
                                               {"question": "Why is decode slow?"})

    result = anyio.run(go)
    assert result.is_error
    text = " ".join(c.text for c in result.content if hasattr(c, "text"))
    assert "cannot reach the model server at http://127.0.0.1:9/v1" in text and "trace:" in text
    assert "Traceback" not in errlog.read_text()


def test_results_are_compact_by_default_and_full_on_request_and_limits_apply(
        tmp_path: Path) -> None:
    async def go() -> tuple[Any, Any, Any]:
        env = {"AGENTKIT_TRACE_DIR": str(tmp_path / "traces")}
        async with stdio_client(params(EXAMPLES / "hopper-deepseek", env)) as (r, w), \
                ClientSession(r, w) as session:
            await session.initialize()
            q = {"question": "Do previous optimizations apply? Would an FP8 KV cache help?"}
            return (await session.call_tool("investigate", q),
                    await session.call_tool("investigate", {**q, "detail": "full"}),
                    await session.call_tool("investigate", {**q, "max_tasks": 1}))

    compact, full, one = anyio.run(go)
    c, f = compact.structured_content, full.structured_content
    assert "sections" not in c["answer"] and "sections" in f["answer"]
    assert "markdown" not in c and "markdown" in f
    assert len(json.dumps(c)) * 2 < len(json.dumps(f))  # at most half the size
    cited = {e for claim in c["answer"]["bottom_line"] for e in claim["evidence"]}
    assert cited <= {x["id"] for x in c["answer"]["citations"]}
    assert all(len(x["excerpt"]) <= 160 for x in c["answer"]["citations"])
    assert len(one.structured_content["answer"]["tasks"]) == 1


def test_two_investigations_at_once_write_two_traces_that_replay(tmp_path: Path) -> None:
    from agentkit.cli import main

    traces = tmp_path / "traces"

    async def go() -> list[Any]:
        env = {"AGENTKIT_TRACE_DIR": str(traces)}
        async with stdio_client(params(EXAMPLES / "hopper-deepseek", env)) as (r, w), \
                ClientSession(r, w) as session:
            await session.initialize()
            out: list[Any] = [None, None]

            async def one(i: int, q: str) -> None:
                out[i] = await session.call_tool("investigate", {"question": q})

            async with anyio.create_task_group() as tg:
                tg.start_soon(one, 0, "Is NCCL tuned?")
                tg.start_soon(one, 1, "Would an FP8 KV cache help?")
            return out

    results = anyio.run(go)
    paths = {r.structured_content["trace"] for r in results}
    assert len(paths) == 2
    for p in paths:
        assert main(["replay", p]) == 0


def test_progress_reports_each_model_step_in_llm_mode(tmp_path: Path) -> None:
    from .llm_script import make_script

    root = write_tree(tmp_path / "host", HOST)
    progress: list[str] = []

    async def go() -> Any:
        with FakeLLMServer(make_script(["unit", "nccl-conf"])) as server:
            env = {"AGENTKIT_BASE_URL": server.base_url, "AGENTKIT_MODEL": "fake",
                   "AGENTKIT_TRACE_DIR": str(tmp_path / "traces"),
                   "AGENTKIT_CONFIG": "/dev/null"}
            async with stdio_client(params(root, env)) as (r, w), \
                    ClientSession(r, w) as session:
                await session.initialize()

                async def on_progress(done: float, total: float | None, msg: str | None) -> None:
                    progress.append(msg or "")

                return await session.call_tool(
                    "investigate", {"question": "What NCCL settings does this host use?"},
                    progress_callback=on_progress)

    result = anyio.run(go)
    assert not result.is_error
    assert "unit step 1" in progress and "nccl-conf step 1" in progress
    assert progress[0] == "plan step 1"  # the planner's own call, while it plans
    assert any(p.startswith("planned: ") for p in progress)


def fleet_params(args: list[str], env: dict[str, str]) -> StdioServerParameters:
    # no SSH agent for the server: only known_hosts and the operator's flags decide
    clean = {k: v for k, v in os.environ.items() if k != "SSH_AUTH_SOCK"}
    return StdioServerParameters(command=sys.executable,
                                 args=["-m", "agentkit", "mcp", *args], env={**clean, **env})


async def _calls(server: StdioServerParameters, *calls: dict[str, Any],
                 progress: list[str] | None = None) -> list[Any]:
    async def on_progress(done: float, total: float | None, msg: str | None) -> None:
        if progress is not None:
            progress.append(f"{done:g}/{total:g} {msg}")

    async with stdio_client(server) as (r, w), ClientSession(r, w) as session:
        await session.initialize()
        return [await session.call_tool("investigate", c, progress_callback=on_progress)
                for c in calls]


def _text(result: Any) -> str:
    return " ".join(c.text for c in result.content if hasattr(c, "text"))


def test_a_fleet_is_refused_unless_the_operator_allowed_it(tmp_path: Path) -> None:
    from benchmarks._fleet_hosts import make_fleet

    make_fleet(tmp_path / "allowed", 2, width=2)
    make_fleet(tmp_path / "other", 2, width=2)
    env = {"AGENTKIT_TRACE_DIR": str(tmp_path / "traces")}
    q = {"question": "Which driver?", "tasks": ["gpu-inventory"]}
    root = ["--root", str(EXAMPLES / "hopper-deepseek")]
    [off] = anyio.run(lambda: _calls(fleet_params(root, env),
                                     {**q, "fleet_dir": str(tmp_path / "allowed")}))
    assert off.is_error and "fleet investigations are off on this server" in _text(off)
    allowing = fleet_params([*root, "--fleet-dir", str(tmp_path / "allowed")], env)
    outside, ssh, both, bad = anyio.run(lambda: _calls(
        allowing, {**q, "fleet_dir": str(tmp_path / "other")},
        {**q, "hosts": "n[01-02]"},
        {**q, "fleet_dir": str(tmp_path / "allowed"), "root": str(EXAMPLES)},
        {**q, "fleet_dir": str(tmp_path / "allowed"), "hosts": "h,,["}))
    assert outside.is_error and "is not allowed" in _text(outside)
    assert ssh.is_error and "SSH to hosts is off on this server" in _text(ssh)
    assert both.is_error and "not both" in _text(both)
    assert bad.is_error and "h,,[" in _text(bad)
    for r in (off, outside, ssh, both, bad):
        assert "\n" not in _text(r)


def test_investigate_a_snapshot_fleet_with_the_official_client(tmp_path: Path) -> None:
    from benchmarks._fleet_hosts import OTHER_DRIVER, make_fleet

    # n01-n05: n03 runs the other driver, n05's snapshot is cut off
    make_fleet(tmp_path / "fleets" / "a", 5, outliers=[3], broken=[5], width=2)
    env = {"AGENTKIT_TRACE_DIR": str(tmp_path / "traces")}
    server = fleet_params(["--fleet-dir", str(tmp_path / "fleets")], env)
    progress: list[str] = []
    q = {"question": "Which driver?", "tasks": ["gpu-inventory"],
         "fleet_dir": str(tmp_path / "fleets" / "a")}
    whole, some = anyio.run(lambda: _calls(server, q, {**q, "hosts": "n[01-02]"},
                                           progress=progress))
    assert not whole.is_error, _text(whole)
    fleet = whole.structured_content["answer"]["fleet"]
    assert fleet["recap"] == "ok=3 differs=1 failed=1"
    assert fleet["buckets"] == {"ok": "n[01-02,04]", "differs": "n03", "failed": "n05"}
    assert OTHER_DRIVER in json.dumps(whole.structured_content["answer"]["table"])
    starts = [i for i, p in enumerate(progress) if p == "0/1 planned: gpu-inventory"]
    assert len(starts) == 2  # one plan per call
    first = progress[:starts[1]]
    hosts = sorted(p.split(" ", 1)[1] for p in first if ": " in p and "planned" not in p)
    assert hosts == ["n01: ok", "n02: ok", "n03: ok", "n04: ok", "n05: failed"]
    assert any(p.startswith("5/5 ") for p in first)
    assert some.structured_content["answer"]["fleet"]["buckets"] == {"ok": "n[01-02]"}


def test_investigate_ssh_hosts_only_those_the_server_allows(tmp_path: Path) -> None:
    pytest.importorskip("asyncssh")
    from benchmarks._fleet_hosts import make_fleet
    from benchmarks._ssh_servers import start

    names = make_fleet(tmp_path / "f", 4, width=3)
    env = {"AGENTKIT_TRACE_DIR": str(tmp_path / "traces")}
    q = {"question": "Which driver?", "tasks": ["gpu-inventory"]}

    async def go() -> list[Any]:
        # n003's server shows a host key known_hosts does not have
        fleet = await start({h: tmp_path / "f" / h for h in names}, {"n003": "unknown-key"},
                            tmp_path)
        try:
            server = fleet_params(["--fleet-hosts", "n[001-003]", "--ssh-config",
                                   str(fleet.config), "--known-hosts",
                                   str(fleet.known_hosts)], env)
            return await _calls(server, {**q, "hosts": "n[001-003]"},
                                {**q, "hosts": "n[003-004]"})
        finally:
            fleet.close()

    allowed, beyond = anyio.run(go)
    assert not allowed.is_error, _text(allowed)
    assert allowed.structured_content["answer"]["fleet"]["buckets"] == {
        "ok": "n[001-002]", "unknown-key": "n003"}
    assert beyond.is_error and "n004 are not in this server's --fleet-hosts" in _text(beyond)


def test_the_default_root_the_empty_question_and_the_version(tmp_path: Path) -> None:
    # issue 25 item 2: --allow-root adds roots, it does not take --root away; an empty
    # question is said as such; the server names agentkit's version in its handshake
    from agentkit import __version__

    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "agentkit", "mcp", "--root", str(EXAMPLES / "blackwell-kimi"),
              "--allow-root", str(EXAMPLES / "hopper-deepseek")],
        env={**os.environ, "AGENTKIT_TRACE_DIR": str(tmp_path), "AGENTKIT_CONFIG": "/dev/null"})

    errlog = tmp_path / "server-stderr.txt"

    async def go() -> Any:
        with errlog.open("w") as err:
            async with stdio_client(server, errlog=err) as (r, w), \
                    ClientSession(r, w) as session:
                return await _three_calls(session)

    async def _three_calls(session: ClientSession) -> Any:
        init = await session.initialize()
        default = await session.call_tool("investigate", {"question": "Which GPUs?"})
        other = await session.call_tool("investigate", {
            "question": "Which GPUs?", "root": str(EXAMPLES / "hopper-deepseek")})
        empty = await session.call_tool("investigate", {"question": "  "})
        return init, default, other, empty

    init, default, other, empty = anyio.run(go)
    assert init.server_info.name == "agentkit" and init.server_info.version == __version__
    assert not default.is_error, default.content
    assert not other.is_error, other.content
    assert empty.is_error and "the question is empty" in str(empty.content), empty.content
    assert "INFO" not in errlog.read_text()  # quiet: the SDK's INFO logging printed every run
