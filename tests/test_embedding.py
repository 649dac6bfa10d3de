"""Embedding agentkit: the Python API (stream, limits, custom tools, bring-your-own client),
the tool schema and handler, the Anthropic backend, and the example programs."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from agentkit import (
    Limits,
    Orchestrator,
    ToolContext,
    handle_investigate,
    investigate_sync,
    investigate_tool,
    tool,
)
from agentkit._orchestrator import UnknownTask
from agentkit.cli import main
from agentkit.testing import FakeLLMServer, Reply, ScriptedModel, reply, tool_call

from .conftest import EXAMPLES, REPO, write_tree
from .llm_script import make_script, task_of
from .test_llm_pipeline import HOST

BW = str(EXAMPLES / "blackwell-kimi")


def test_stream_yields_typed_events_then_the_answer() -> None:
    async def go() -> list[Any]:
        async with Orchestrator.from_env(root=BW) as orch:
            return [e async for e in orch.stream("Is NCCL tuned for this topology?")]

    events = anyio.run(go)
    kinds = [e.kind for e in events]
    assert kinds[0] == "plan" and kinds[-1] == "answer"
    finished = [e for e in events if e.kind == "task_finished"]
    assert {e.task_id for e in finished} == {t.id for t in events[0].plan.tasks}
    assert finished[-1].done == finished[-1].total == len(finished)
    assert "tool_called" in kinds and "task_started" in kinds
    assert "NCCL_PROTO=LL" in events[-1].answer.bottom_line[0].text


def test_sync_wrapper_limits_and_task_selection() -> None:
    a = investigate_sync("Do previous optimizations around allreduce apply?", root=BW,
                         limits=Limits(max_tasks=1))
    assert len(a.tasks) == 1 and any("cut from" in n for n in a.notes)
    b = investigate_sync("anything", root=BW, tasks=["gpu-inventory"])
    assert list(b.tasks) == ["gpu-inventory"] and "compute capability 12.0" in b.bottom_line[0].text
    with pytest.raises(UnknownTask, match="nope"):
        investigate_sync("anything", root=BW, tasks=["nope"])


@tool
def disk_model(ctx: ToolContext, device: str) -> dict[str, Any]:
    """Model name of a block device (a test tool)."""
    return {"device": device, "model": "SAMSUNG MZ-TEST"}


def test_custom_tool_used_by_a_subagent(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "host", HOST)

    def script(request: Any) -> Any:
        if request.purpose == "plan":
            return reply(calls=[tool_call("submit_plan", {"tasks": [
                {"id": "disk", "title": "disk", "objective": "which disk",
                 "tools": ["disk_model"]}]})])
        if request.purpose == "synthesize":
            ids = sorted(set(__import__("re").findall(r"\bE[0-9a-f]{10}\b",
                                                      request.messages[1].content)))
            return reply(calls=[tool_call("submit_answer", {"bottom_line": [
                {"text": "The disk is a SAMSUNG MZ-TEST.", "evidence": ids}]})])
        tool_msgs = [m for m in request.messages if m.role == "tool"]
        if not tool_msgs:
            assert {t.name for t in request.tools} == {"disk_model", "submit_result"}
            return reply(calls=[tool_call("disk_model", {"device": "nvme0n1"})])
        data = json.loads(tool_msgs[0].content.split("\n", 1)[1].rsplit("\n", 1)[0])
        return reply(calls=[tool_call("submit_result", {
            "status": "ok", "summary": data["model"],
            "findings": [{"claim": data["model"], "evidence": [data["evidence_id"]]}]})])

    async def go() -> Any:
        async with Orchestrator.from_env(root=root, llm=ScriptedModel(script),
                                         tools=[disk_model]) as orch:
            return await orch.investigate("Which disk holds the models?")

    a = anyio.run(go)
    assert a.tasks == {"disk": "ok"}
    assert a.citations[0].locator == 'tool disk_model {"device": "nvme0n1"}'
    assert "SAMSUNG MZ-TEST" in a.citations[0].excerpt


def test_bring_your_own_httpx_client(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "host", HOST)
    seen: list[str] = []

    async def hook(request: httpx.Request) -> None:
        seen.append(request.url.path)

    async def go(server: FakeLLMServer) -> Any:
        async with httpx.AsyncClient(event_hooks={"request": [hook]}) as client:
            async with Orchestrator.from_env(root=root, base_url=server.base_url,
                                             model="fake", http_client=client) as orch:
                return await orch.investigate("What is set?")

    with FakeLLMServer(make_script(["unit", "nccl-conf"])) as server:
        a = anyio.run(go, server)
    assert a.mode == "llm" and set(a.tasks.values()) == {"ok"}
    assert len(seen) == len(server.requests) and seen[0] == "/v1/chat/completions"


def _as_openai(body: dict[str, Any]) -> dict[str, Any]:
    """Read an Anthropic Messages request the way the OpenAI-side script expects."""
    msgs: list[dict[str, Any]] = [{"role": "system", "content": body.get("system", "")}]
    for m in body["messages"]:
        for block in m["content"]:
            if block["type"] == "text":
                msgs.append({"role": m["role"], "content": block["text"]})
            elif block["type"] == "tool_result":
                msgs.append({"role": "tool", "content": block["content"]})
            elif block["type"] == "tool_use":
                msgs.append({"role": "assistant", "content": ""})
    return {"messages": msgs,
            "tools": [{"function": {"name": t["name"]}} for t in body.get("tools", [])]}


def test_pipeline_through_anthropic_messages(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    root = write_tree(tmp_path / "host", HOST)
    inner = make_script(["unit", "nccl-conf", "model"])

    def script(body: dict[str, Any]) -> Reply:
        out = inner(_as_openai(body))
        msg = out.body["choices"][0]["message"]  # type: ignore[index]
        calls = [(c["function"]["name"], json.loads(c["function"]["arguments"]))
                 for c in msg.get("tool_calls", [])]
        return Reply.anthropic(text=msg.get("content") or "", calls=calls, delay_s=out.delay_s)

    trace = tmp_path / "t.jsonl"
    with FakeLLMServer(script) as server:
        code = main(["ask", "What NCCL and model settings does this host use?", "--root",
                     str(root), "--base-url", server.base_url, "--model", "claude-test",
                     "--provider", "anthropic", "--json", "-q", "--trace", str(trace)])
    out = capsys.readouterr()
    assert code == 0, out.err
    answer = json.loads(out.out)
    assert answer["tasks"] == {"unit": "ok", "nccl-conf": "ok", "model": "ok"}
    assert server.peak_in_flight >= 3
    assert all(r["max_tokens"] > 0 and r["model"] == "claude-test" for r in server.requests)
    sub = [r for r in server.requests if task_of(_as_openai(r)["messages"]) == "unit"]
    assert sub[1]["messages"][-1]["content"][0]["type"] == "tool_result"
    cited = {c["id"] for c in answer["citations"]}
    produced = {e["id"] for line in trace.read_text().splitlines()
                for e in json.loads(line)["data"].get("evidence", [])}
    assert cited and cited <= produced


def test_schema_shapes_and_handler() -> None:
    oa, an, mc = (investigate_tool(f) for f in ("openai", "anthropic", "mcp"))
    assert oa["function"]["name"] == an["name"] == mc["name"] == "investigate"
    assert oa["function"]["parameters"] == an["input_schema"] == mc["inputSchema"]
    assert an["input_schema"]["properties"]["tasks"]["type"] == "array"
    bad = anyio.run(lambda: handle_investigate({"question": ""}, root=BW))
    assert "invalid arguments" in bad["error"]
    escape = anyio.run(lambda: handle_investigate({"question": "x", "root": "/"}, root=BW))
    assert "not allowed" in escape["error"]
    ok = anyio.run(lambda: handle_investigate('{"question": "Is NCCL tuned?"}', root=BW,
                                              catalog_only=True))
    assert ok["answer"]["citations"] and ok["markdown"].startswith("# Is NCCL tuned?")


def test_the_embedders_own_root_stays_allowed_beside_allowed_roots() -> None:
    # allowed_roots add to the root the embedding program chose; they do not replace it
    # (the MCP server refused its own default root this way: issue 25, item 2)
    hopper = str(EXAMPLES / "hopper-deepseek")
    ok = anyio.run(lambda: handle_investigate({"question": "Is NCCL tuned?"}, root=BW,
                                              allowed_roots=[hopper], catalog_only=True))
    assert "error" not in ok, ok
    other = anyio.run(lambda: handle_investigate({"question": "Is NCCL tuned?",
                                                  "root": hopper}, root=BW,
                                                 allowed_roots=[hopper], catalog_only=True))
    assert "error" not in other, other
    escape = anyio.run(lambda: handle_investigate({"question": "x", "root": "/"}, root=BW,
                                                  allowed_roots=[hopper]))
    assert "not allowed" in escape["error"]


def _run_example(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *argv], capture_output=True, text=True, timeout=120,
                          cwd=REPO, env={**os.environ, **(env or {})})


def test_example_api_script_runs() -> None:
    done = _run_example("examples/embedding/api_example.py", BW)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("- No: ")
    assert "even though the checkpoint recommends it" in done.stdout
    # the plan's size is the catalog's business: every task it planned reports, the last as n/n
    assert "triton_mla.py:75-76" in done.stdout and re.search(r"\[(\d+)/\1\]", done.stderr)


def test_example_agent_loop_calls_investigate_as_a_tool() -> None:
    def script(body: dict[str, Any]) -> Reply:
        tool_msgs = [m for m in body["messages"] if m["role"] == "tool"]
        assert body["tools"][0]["function"]["name"] == "investigate"
        if not tool_msgs:
            return Reply.openai(calls=[("investigate", {"question": "Is NCCL tuned?"})])
        result = json.loads(tool_msgs[0]["content"])
        return Reply.openai(text="Found: " + result["answer"]["bottom_line"][0]["text"])

    with FakeLLMServer(script) as server:
        done = _run_example("examples/embedding/agent_loop.py", BW, "Is our NCCL tuned?",
                            env={"OPENAI_BASE_URL": server.base_url})
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Found: Yes: NCCL tuning is in effect")
    assert len(server.requests) == 2


def test_example_mcp_client_runs() -> None:
    done = _run_example("examples/embedding/mcp_client.py", BW, "Is NCCL tuned?")
    assert done.returncode == 0, done.stderr
    assert "tools: investigate, list_tasks, replay" in done.stdout
    assert "NCCL_PROTO=LL" in done.stdout and re.search(r"progress (\d+)/\1\b", done.stderr)


def test_tool_cache_is_shared_within_a_run_and_fresh_for_the_next(tmp_path: Path) -> None:
    import shutil

    root = tmp_path / "host"
    shutil.copytree(EXAMPLES / "blackwell-kimi", root)
    unit = root / "etc/systemd/system/vllm-kimi.service"

    async def go() -> tuple[Any, int, Any]:
        async with Orchestrator.from_env(root=root) as orch:
            first = await orch.investigate("Is NCCL tuned? Would fp8 kv cache help?")
            hits = orch.cache.hits
            unit.write_text(unit.read_text().replace("NCCL_PROTO=LL", "NCCL_PROTO=Simple"))
            second = await orch.investigate("Is NCCL tuned?")
            return first, hits, second

    first, hits, second = anyio.run(go)
    assert hits > 0  # several tasks read the same unit and configs: each read ran once
    assert "NCCL_PROTO=LL" in first.bottom_line[0].text
    assert "NCCL_PROTO=Simple" in second.bottom_line[0].text  # not served from the old run


def test_gc_thresholds_are_restored_after_a_run() -> None:
    import gc

    before = gc.get_threshold()
    seen: list[tuple[int, int, int]] = []

    async def go() -> None:
        async with Orchestrator.from_env(root=BW) as orch:
            orch.tune_gc = True  # opted in (the library default leaves the GC alone)
            orch.trace.listen(lambda ev: seen.append(gc.get_threshold())
                              if ev["kind"] == "task" else None)
            await orch.investigate("Is NCCL tuned?")

    anyio.run(go)
    assert gc.get_threshold() == before
    assert seen and max(t[0] for t in seen) >= 100_000  # raised while the tasks ran


def test_llm_planner_mixes_catalog_templates_and_free_form_tasks(tmp_path: Path) -> None:
    import re

    def script(request: Any) -> Any:
        if request.purpose == "plan":
            listed = request.messages[0].content
            assert "kv-cache-dtype-support" in listed and "nccl-env" in listed
            return reply(calls=[tool_call("submit_plan", {"tasks": [
                {"id": "nccl", "title": "nccl", "template": "nccl-env"},
                {"id": "conf", "title": "conf", "objective": "read /etc/nccl.conf",
                 "tools": ["read_file"]}]})])
        if request.purpose == "synthesize":
            ids = sorted(set(re.findall(r"\bE[0-9a-f]{10}\b", request.messages[1].content)))
            return reply(calls=[tool_call("submit_answer", {"bottom_line": [
                {"text": "tuned", "evidence": ids[:2]}]})])
        tool_msgs = [m for m in request.messages if m.role == "tool"]
        assert request.task == "conf"  # the template task never asks the model
        if not tool_msgs:
            return reply(calls=[tool_call("read_file", {"path": "/etc/nccl.conf"})])
        ev = json.loads(tool_msgs[0].content.split("\n", 1)[1].rsplit("\n", 1)[0])
        return reply(calls=[tool_call("submit_result", {
            "status": "ok", "summary": "read", "findings": [
                {"claim": "NCCL_DEBUG=WARN", "evidence": [ev["evidence_id"]]}]})])

    model = ScriptedModel(script)

    async def go() -> Any:
        async with Orchestrator.from_env(root=BW, llm=model) as orch:
            return await orch.investigate("Is NCCL tuned here?")

    a = anyio.run(go)
    assert a.mode == "llm" and a.tasks == {"nccl": "ok", "conf": "ok"}
    assert {r.task for r in model.requests} == {"plan", "conf", "synthesize"}


def test_half_configured_model_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    err_code = main(["ask", "Is NCCL tuned?", "--root", BW, "--model", "m", "-q"])
    err = capsys.readouterr().err
    assert err_code == 2 and "model is set but base_url is not" in err
    assert main(["ask", "x?", "--root", BW, "--concurrency", "0", "-q"]) == 2
    assert "concurrency must be at least 1" in capsys.readouterr().err
