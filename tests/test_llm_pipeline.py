"""The full LLM pipeline end to end: agentkit ask → plan → parallel subagents using real tools
on a fixture tree → synthesis, all through the real httpx client against a scripted
OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentkit.cli import main
from agentkit.testing import FakeLLMServer, Reply

from .conftest import write_tree
from .llm_script import make_script, stalling_script, task_of

HOST = {
    "etc/systemd/system/demo.service": "[Service]\nEnvironment=NCCL_PROTO=LL\n"
                                       "ExecStart=/opt/v/bin/vllm serve /models/m\n",
    "etc/nccl.conf": "NCCL_DEBUG=WARN\n",
    "models/m/config.json": '{\n  "num_hidden_layers": 61\n}\n',
}


def ask(server: FakeLLMServer, root: Path, trace: Path, capsys: pytest.CaptureFixture[str],
        *extra: str) -> tuple[int, dict[str, Any] | None, str]:
    code = main(["ask", "What NCCL and model settings does this host use?", "--root", str(root),
                 "--base-url", server.base_url, "--model", "fake", "--json", "-q",
                 "--trace", str(trace), *extra])
    out = capsys.readouterr()
    return code, (json.loads(out.out) if code == 0 else None), out.err


def events(trace: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in trace.read_text().splitlines()]


def test_pipeline_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = write_tree(tmp_path / "host", HOST)
    trace = tmp_path / "run.jsonl"
    with FakeLLMServer(make_script(["unit", "nccl-conf", "model"])) as server:
        code, answer, err = ask(server, root, trace, capsys)
    assert code == 0, err
    assert answer is not None
    # the three subagents really ran at the same time
    assert server.peak_in_flight >= 3
    assert answer["mode"] == "llm"
    assert answer["tasks"] == {"unit": "ok", "nccl-conf": "ok", "model": "ok"}
    evs = events(trace)
    produced = {e["id"]: e for ev in evs if ev["kind"] == "tool" and ev["phase"] == "end"
                for e in ev["data"]["evidence"]}
    cited = {c["id"] for c in answer["citations"]}
    assert cited and cited <= set(produced)
    assert any("NCCL_PROTO=LL" in produced[i]["excerpt"] for i in cited)
    assert not any("removed citations" in n for n in answer["notes"])
    # the trace holds every event, each span closed
    kinds = [(e["kind"], e["phase"]) for e in evs]
    assert kinds[0] == ("trace", "event") and evs[0]["data"]["format"] == "agentkit-trace"
    assert kinds[1] == ("run", "start") and kinds[-1] == ("run", "end")
    assert kinds.count(("plan", "event")) == 1
    assert kinds.count(("task", "start")) == kinds.count(("task", "end")) == 3
    assert kinds.count(("llm", "start")) == kinds.count(("llm", "end")) == 1 + 3 * 2 + 1
    assert kinds.count(("tool", "end")) == 3
    assert ("synthesize", "end") in kinds
    starts = {e["span"] for e in evs if e["phase"] == "start"}
    ends = {e["span"] for e in evs if e["phase"] == "end"}
    assert starts == ends
    subagent_calls = [e for e in evs if e["kind"] == "llm" and e["phase"] == "start"
                      and e["task"] in ("unit", "nccl-conf", "model")]
    assert {(e["task"], e["step"]) for e in subagent_calls} == {
        (t, s) for t in ("unit", "nccl-conf", "model") for s in (1, 2)}
    # the request really carried tools with schemas from the signatures
    first = server.requests[1]
    names = {t["function"]["name"] for t in first["tools"]}
    assert {"read_file", "parse_config", "grep", "submit_result"} <= names


def test_one_failing_subagent_does_not_sink_the_others(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = write_tree(tmp_path / "host", HOST)

    def special(task: str, msgs: list[dict[str, Any]]) -> Reply | None:
        if task == "broken-server":
            return Reply(status=500, body={"error": "boom"})
        if task == "bad-result":
            return Reply.openai(calls=[("submit_result", {"status": "great", "summary": ""})])
        if task == "slow":
            return Reply.openai(calls=[("read_file", {"path": "/etc/nccl.conf"})], delay_s=3)
        return None

    trace = tmp_path / "run.jsonl"
    script = make_script(["unit", "broken-server", "bad-result", "slow"], special=special)
    with FakeLLMServer(script) as server:
        (tmp_path / "cfg.toml").write_text("task_deadline_s = 1.5\nmax_retries = 2\n")
        code, answer, err = ask(server, root, trace, capsys, "--config",
                                str(tmp_path / "cfg.toml"))
    assert code == 0, err
    assert answer is not None
    assert answer["tasks"] == {"unit": "ok", "broken-server": "failed",
                               "bad-result": "failed", "slow": "timed-out"}
    assert set(answer["failed_tasks"]) == {"broken-server", "bad-result", "slow"}
    notes = " ".join(answer["notes"])
    assert "HTTP 500" in notes and "deadline" in notes and "never validated" in notes
    bad = [r for r in server.requests if task_of(r["messages"]) == "bad-result"]
    assert len(bad) == 3  # first try + 2 repairs, then recorded as failed
    assert "does not match the schema" in bad[-1]["messages"][-1]["content"]
    # the 500 was retried (bounded), never forever
    broken = [r for r in server.requests if task_of(r["messages"]) == "broken-server"]
    assert len(broken) == 2


def test_unknown_citations_are_reasked_then_removed(tmp_path: Path) -> None:
    import anyio

    from agentkit import Host, Trace
    from agentkit._api import build_orchestrator
    from agentkit._config import Settings
    from agentkit.testing import ScriptedModel, reply, tool_call

    root = write_tree(tmp_path / "host", HOST)
    synth_requests = []

    def script(request: Any) -> Any:
        if request.purpose == "plan":
            return reply(calls=[tool_call("submit_plan", {"tasks": [
                {"id": "t1", "title": "conf", "objective": "read nccl.conf",
                 "tools": ["read_file"]}]})])
        if request.purpose == "synthesize":
            synth_requests.append(request)
            return reply(calls=[tool_call("submit_answer", {"bottom_line": [
                {"text": "made up", "evidence": ["E0000000000"]}]})])
        tool_msgs = [m for m in request.messages if m.role == "tool"]
        if not tool_msgs:
            # two independent calls in one turn
            return reply(calls=[tool_call("read_file", {"path": "/etc/nccl.conf"}),
                                tool_call("read_file", {"path": "/models/m/config.json"})])
        ids = [json.loads(m.content.split("\n", 1)[1].rsplit("\n", 1)[0])["evidence_id"]
               for m in tool_msgs]
        return reply(calls=[tool_call("submit_result", {
            "status": "ok", "summary": "read", "findings": [
                {"claim": "NCCL_DEBUG=WARN", "evidence": ids[:1]}]})])

    trace = Trace(tmp_path / "t.jsonl")
    orch = build_orchestrator(Settings(), Host.at(root), trace=trace,
                              model=ScriptedModel(script))
    answer = anyio.run(orch.investigate, "What does nccl.conf set?")
    trace.close()
    assert len(synth_requests) == 3  # first answer + 2 repairs, each told the valid ids
    assert "do not exist: E0000000000" in synth_requests[1].messages[-1].content
    assert answer.bottom_line[0].evidence == []
    assert any("removed citations of evidence that does not exist: E0000000000" in n
               for n in answer.notes)
    tools = [e for e in map(json.loads, (tmp_path / "t.jsonl").read_text().splitlines())
             if e["kind"] == "tool"]
    starts = [e for e in tools if e["phase"] == "start"]
    first_end = next(i for i, e in enumerate(tools) if e["phase"] == "end")
    assert len(starts) == 2 and first_end >= 2  # both calls of the turn started before either ended


def test_ctrl_c_cancels_and_closes_the_trace(tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys
    import time

    root = write_tree(tmp_path / "host", HOST)
    trace = tmp_path / "run.jsonl"

    with FakeLLMServer(stalling_script(["unit", "nccl-conf", "model"], 30)) as server:
        proc = subprocess.Popen(
            [sys.executable, "-m", "agentkit", "ask", "What is set?", "--root", str(root),
             "--base-url", server.base_url, "--model", "fake", "--trace", str(trace), "-q"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            # a runner started with SIGINT ignored (nohup, background jobs) passes that on:
            # the child gets the default back, as an interactive shell would give it
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and server.in_flight < 3:
            time.sleep(0.05)
        assert server.in_flight >= 3
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=20)
    assert proc.returncode == 130, err
    assert "interrupted" in err and "CancelledError" not in err, err
    evs = [json.loads(line) for line in trace.read_text().splitlines()]
    assert evs[-1]["kind"] == "run" and evs[-1]["phase"] == "end"
    assert evs[-1]["data"]["status"] == "cancelled"


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_llm_mode_runs_on_either_anyio_backend_with_the_default_client(
        tmp_path: Path, backend: str) -> None:
    # No http_client given: the default client must work on trio too (aiohttp cannot).
    import anyio

    from .llm_script import llm_orchestrator

    root = write_tree(tmp_path / "host", HOST)
    with FakeLLMServer(make_script(["unit", "nccl-conf", "model"])) as server:
        orch = llm_orchestrator(server, root)

        async def go() -> Any:
            async with orch:
                return await orch.investigate("What NCCL and model settings does this host use?")

        answer = anyio.run(go, backend=backend)
        peak = server.peak_in_flight
    assert answer.mode == "llm"
    assert answer.tasks == {"unit": "ok", "nccl-conf": "ok", "model": "ok"}
    assert answer.citations and peak >= 3


def test_the_answer_s_usage_counts_every_model_call_the_planner_s_too(tmp_path: Path) -> None:
    import anyio

    from .llm_script import llm_orchestrator

    root = write_tree(tmp_path / "host", HOST)
    with FakeLLMServer(make_script(["unit", "nccl-conf", "model"])) as server:
        orch = llm_orchestrator(server, root)

        async def go() -> Any:
            async with orch:
                return await orch.investigate("What NCCL and model settings does this host use?")

        answer = anyio.run(go)
    # 1 plan + 3 subagents × 2 steps + 1 synthesis (the planner's call was left out before)
    assert answer.usage.llm_calls == 1 + 3 * 2 + 1, answer.usage


def test_events_carry_usage_per_task_and_per_model_call(tmp_path: Path) -> None:
    import anyio

    from .llm_script import llm_orchestrator

    root = write_tree(tmp_path / "host", HOST)
    with FakeLLMServer(make_script(["unit", "nccl-conf", "model"])) as server:
        orch = llm_orchestrator(server, root)

        async def go() -> list[Any]:
            async with orch:
                return [e async for e in orch.stream("What NCCL settings does it use?")]

        events = anyio.run(go)
    finished = [e for e in events if e.kind == "task_finished"]
    answered = [e for e in events if e.kind == "model_answered"]
    answer = events[-1].answer
    assert [e.total for e in finished] == [3, 3, 3] and finished[-1].done == 3
    assert all(e.usage.llm_calls == 2 for e in finished)  # each subagent: 2 model calls
    assert sum(e.input_tokens for e in answered) == answer.usage.input_tokens
