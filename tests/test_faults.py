"""A fault-injecting model server: whatever it does, the run ends within its deadline with an
answer naming the failed tasks (or a typed error), tools are never run on invalid calls and
never run twice, and a shared limiter keeps many subagents within the request budget."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from agentkit import Limits, ModelError, Orchestrator, ToolContext, tool
from agentkit.testing import FakeLLMServer, Reply

from .conftest import write_tree
from .llm_script import task_of

EXECUTED: list[tuple[str, str]] = []


@tool
def probe(ctx: ToolContext, name: str) -> dict[str, Any]:
    """A tool that counts its executions (the faults must never reach it wrongly)."""
    EXECUTED.append(("probe", name))
    return {"name": name, "value": len(name)}


def plan(tasks: list[str]) -> Reply:
    return Reply.openai(calls=[("submit_plan", {"tasks": [
        {"id": t, "title": t, "objective": f"probe {t}", "tools": ["probe"]} for t in tasks]})])


def synth(body: dict[str, Any]) -> Reply:
    import re

    ids = re.findall(r"\b(E[0-9a-f]{10})\b", body["messages"][1]["content"])
    return Reply.openai(calls=[("submit_answer", {"bottom_line": [
        {"text": "probed", "evidence": ids[:1]}]})])


def good_subagent(task: str, msgs: list[dict[str, Any]]) -> Reply:
    tools = [m for m in msgs if m["role"] == "tool"]
    if not tools:
        return Reply.openai(calls=[("probe", {"name": task})])
    ev = json.loads(tools[-1]["content"].split("\n", 1)[1].rsplit("\n", 1)[0])["evidence_id"]
    return Reply.openai(calls=[("submit_result", {"status": "ok", "summary": task, "findings": [
        {"claim": f"{task} probed", "evidence": [ev]}]})])


def run_with(script: Any, root: Path, tasks: list[str], **settings: Any) -> Any:
    EXECUTED.clear()

    def route(body: dict[str, Any]) -> Reply:
        names = {t["function"]["name"] for t in body.get("tools", [])}
        if "submit_plan" in names:
            return plan(tasks)
        if "submit_answer" in names:
            return synth(body)
        return script(task_of(body["messages"]), body["messages"])

    async def go(server: FakeLLMServer) -> Any:
        async with Orchestrator.from_env(root=root, base_url=server.base_url, model="fake",
                                         tools=[probe], max_retries=2, **settings) as orch:
            t0 = time.monotonic()
            answer = await orch.investigate("probe everything", limits=Limits(deadline_s=30))
            return answer, time.monotonic() - t0

    with FakeLLMServer(route) as server:
        answer, took = anyio.run(go, server)
    return answer, took, server


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "host", {"etc/x.conf": "a=1\n"})


def test_malformed_unknown_and_invalid_calls_never_reach_a_tool(root: Path) -> None:
    def script(task: str, msgs: list[dict[str, Any]]) -> Reply:
        if task == "good":
            return good_subagent(task, msgs)
        tools = [m for m in msgs if m["role"] == "tool"]
        if task == "malformed" and not tools:
            return Reply.openai(calls=[("probe", '{"name": "x"')])  # cut-off JSON
        if task == "unknown" and not tools:
            return Reply.openai(calls=[("rm_rf", {"path": "/"})])
        if task == "schema" and not tools:
            return Reply.openai(calls=[("probe", {"name": 42, "extra": True})])
        if task == "loops":
            return Reply.openai(calls=[("probe", '{"nam": "x"}')])  # never stops, never valid
        return Reply.openai(calls=[("submit_result", {"status": "partial", "summary": task})])

    answer, _, server = run_with(script, root, ["good", "malformed", "unknown", "schema",
                                                "loops"], max_steps=4)
    assert EXECUTED == [("probe", "good")]  # only the one valid call ran, once
    assert answer.tasks == {"good": "ok", "malformed": "partial", "unknown": "partial",
                            "schema": "partial", "loops": "failed"}
    feedback = {task_of(r["messages"]): r["messages"][-1]["content"] for r in server.requests
                if task_of(r["messages"]) in ("malformed", "unknown", "schema")}
    assert "not valid JSON" in feedback["malformed"]
    assert "not available to this task" in feedback["unknown"]
    assert "invalid arguments for probe" in feedback["schema"]
    assert "loops" in answer.failed_tasks and any("step limit" in n for n in answer.notes)


@pytest.mark.parametrize("fault", ["reset", "truncated", "no-choices", "retry-after-date",
                                   "retry-after-ms", "408", "502", "529"])
def test_transient_faults_are_retried_once_each(root: Path, fault: str) -> None:
    seen: set[str] = set()

    def script(task: str, msgs: list[dict[str, Any]]) -> Reply:
        if task == "flaky" and len(msgs) == 2 and "flaky" not in seen:
            seen.add("flaky")
            return {
                "reset": Reply(reset=True), "truncated": Reply(raw=b'{"choices": [{"mess'),
                "no-choices": Reply(body={"choices": []}),
                "retry-after-date": Reply(status=429, headers={
                    "retry-after": "Thu, 01 Jan 1970 00:00:00 GMT"}, body={}),
                "retry-after-ms": Reply(status=429, headers={"retry-after-ms": "10"}, body={}),
                "408": Reply(status=408, body={}), "502": Reply(status=502, body={}),
                "529": Reply(status=529, body={"type": "overloaded_error"}),
            }[fault]
        return good_subagent(task, msgs)

    answer, _, server = run_with(script, root, ["flaky", "steady"])
    assert answer.tasks == {"flaky": "ok", "steady": "ok"}
    assert sorted(EXECUTED) == [("probe", "flaky"), ("probe", "steady")]  # no duplicates
    assert sum(task_of(r["messages"]) == "flaky" for r in server.requests) == 3  # 2 + 1 retry


def test_read_timeout_slow_drip_and_absurd_retry_after_end_in_time(root: Path) -> None:
    def script(task: str, msgs: list[dict[str, Any]]) -> Reply:
        if task == "hangs":
            return Reply.openai(text="late", delay_s=5)
        if task == "drips":
            return Reply(body={"choices": []}, drip_s=0.05)  # ~1 s per try, never complete
        if task == "waits":
            return Reply(status=429, headers={"retry-after": "86400"}, body={})
        return good_subagent(task, msgs)

    answer, took, _ = run_with(script, root, ["hangs", "drips", "waits", "fine"],
                               task_deadline_s=2.0, timeout_s=1.0)
    assert answer.tasks["fine"] == "ok"
    assert answer.tasks["hangs"] in ("failed", "timed-out")
    assert answer.tasks["drips"] in ("failed", "timed-out")
    assert answer.tasks["waits"] == "failed" and any("HTTP 429" in n for n in answer.notes)
    assert set(answer.failed_tasks) == {"hangs", "drips", "waits"}
    assert took < 10


def test_connect_timeout_is_a_typed_error() -> None:
    from agentkit import Message, ModelRequest, OpenAIChatModel
    from agentkit._llm._retry import RetryPolicy

    # A listener that never accepts, with its backlog already full: connects hang.
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    fillers = []
    for _ in range(4):
        s = socket.socket()
        s.setblocking(False)
        s.connect_ex(("127.0.0.1", port))
        fillers.append(s)

    async def go() -> None:
        async with httpx.AsyncClient(timeout=httpx.Timeout(1.0, connect=0.3)) as client:
            model = OpenAIChatModel(f"http://127.0.0.1:{port}/v1", "m", client=client,
                                    retry=RetryPolicy(max_attempts=2, base_wait_s=0.01))
            await model.complete(ModelRequest(messages=[Message.user("hi")]))

    t0 = time.monotonic()
    with pytest.raises(ModelError, match="cannot reach the model server"):
        anyio.run(go)
    assert time.monotonic() - t0 < 5
    for s in fillers:
        s.close()
    listener.close()


def test_shared_limiter_keeps_twenty_subagents_within_five_rps(root: Path) -> None:
    tasks = [f"t{i:02d}" for i in range(20)]

    def script(task: str, msgs: list[dict[str, Any]]) -> Reply:
        return Reply.openai(calls=[("submit_result", {"status": "partial", "summary": task})])

    answer, _, server = run_with(script, root, tasks, rps=5, max_in_flight=8, max_tasks=20)
    assert set(answer.tasks.values()) == {"partial"}  # every subagent got its turn
    times = sorted(server.times)
    worst = max(sum(1 for u in times if t <= u < t + 2.0) for t in times)
    assert worst <= 11  # at most 110% of 5 requests/s over any two seconds
    assert len(times) == 22
