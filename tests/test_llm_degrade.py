"""Degrade, never discard (issue 24, items 2 and 7): a planning or synthesis call that fails,
or a synthesis that would run past the run deadline, leaves the findings the tasks already
established with evidence in the answer; exit 4 is kept for runs where nothing was
established at all. The CLI runs as a real process against a fake model server on
127.0.0.1 speaking the OpenAI wire."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio

from agentkit import Limits, Orchestrator
from agentkit.testing import FakeLLMServer, Reply

from .conftest import EXAMPLES, REFERENCE_QUESTION

KIMI = EXAMPLES / "blackwell-kimi"
TEMPLATES = ["nccl-env", "custom-allreduce", "kv-cache-dtype-support", "model-diff"]


def tools_of(body: dict[str, Any]) -> set[str]:
    return {t["function"]["name"] for t in body.get("tools", [])}


def template_plan() -> Reply:
    return Reply.openai(calls=[("submit_plan", {"tasks": [
        {"id": t, "title": t, "template": t} for t in TEMPLATES]})])


def good_synth(body: dict[str, Any]) -> Reply:
    ids = re.findall(r"\b(E[0-9a-f]{10})\b", body["messages"][1]["content"])
    return Reply.openai(calls=[("submit_answer", {"bottom_line": [
        {"text": "merged", "evidence": ids[:1]}]})])


def ask(server: FakeLLMServer, tmp_path: Path, question: str = REFERENCE_QUESTION
        ) -> tuple[int, dict[str, Any] | None, str]:
    cfg = tmp_path / "cfg.toml"
    cfg.write_text("max_retries = 2\n")
    proc = subprocess.run(
        [sys.executable, "-m", "agentkit", "ask", question, "--root", str(KIMI),
         "--base-url", server.base_url, "--model", "fake", "--json", "-q", "--config", str(cfg),
         "--trace", str(tmp_path / "run.jsonl")],
        capture_output=True, text=True, timeout=120)
    answer = json.loads(proc.stdout) if proc.returncode == 0 else None
    return proc.returncode, answer, proc.stderr


def test_a_failing_synthesis_call_keeps_the_tasks_findings(tmp_path: Path) -> None:
    def script(body: dict[str, Any]) -> Reply:
        if "submit_plan" in tools_of(body):
            return template_plan()
        return Reply(status=503, body={"error": {"message": "overloaded"}})

    with FakeLLMServer(script) as server:
        code, answer, err = ask(server, tmp_path)
    assert code == 0, err
    assert answer is not None and answer["mode"] == "llm"
    assert answer["notes"][0].startswith("The model did not write this answer")
    assert "HTTP 503" in answer["notes"][0]
    assert not any(n.startswith("Catalog mode (no LLM configured)") for n in answer["notes"])
    # the catalog tasks' verdicts survive, each cited
    bottom = " ".join(c["text"] for c in answer["bottom_line"])
    assert "custom allreduce is not used" in bottom and "fp8" in bottom.lower()
    assert all(c["evidence"] for c in answer["bottom_line"])
    cited = {i for c in answer["bottom_line"] for i in c["evidence"]}
    assert cited <= {c["id"] for c in answer["citations"]}


def test_a_failing_planning_call_plans_from_the_catalog(tmp_path: Path) -> None:
    def script(body: dict[str, Any]) -> Reply:
        if "submit_plan" in tools_of(body):
            return Reply(status=503, body={"error": {"message": "overloaded"}})
        return good_synth(body)

    with FakeLLMServer(script) as server:
        code, answer, err = ask(server, tmp_path)
    assert code == 0, err
    assert answer is not None and answer["citations"]
    assert any("did not write the plan" in n and "HTTP 503" in n for n in answer["notes"])
    assert {"nccl-env", "custom-allreduce", "kv-cache-dtype-support"} <= set(answer["tasks"])


def test_exit_4_only_when_nothing_was_established(tmp_path: Path) -> None:
    with FakeLLMServer(lambda body: Reply(status=503, body={})) as server:
        code, _, err = ask(server, tmp_path, "What colour is the sky today?")
    assert code == 4, err
    assert "HTTP 503" in err


def _run(server: FakeLLMServer, deadline_s: float) -> Any:
    async def go() -> Any:
        async with Orchestrator.from_env(root=KIMI, base_url=server.base_url, model="fake",
                                         max_retries=1) as orch:
            answer = await orch.investigate(REFERENCE_QUESTION,
                                            limits=Limits(deadline_s=deadline_s))
            return answer, server.in_flight

    return anyio.run(go)


def test_the_run_deadline_bounds_a_stalled_synthesis_call(tmp_path: Path) -> None:
    def script(body: dict[str, Any]) -> Reply:
        if "submit_plan" in tools_of(body):
            return template_plan()
        return Reply(body=good_synth(body).body, delay_s=60)  # far past the deadline

    with FakeLLMServer(script) as server:
        answer, in_flight = _run(server, 4)
    # answered while the synthesis request was still stalled at the server
    assert in_flight == 1
    assert "deadline passed during the synthesis call" in answer.notes[0]
    assert answer.citations and all(c.evidence for c in answer.bottom_line)


def test_past_the_deadline_synthesis_is_from_the_findings_at_once(tmp_path: Path) -> None:
    def script(body: dict[str, Any]) -> Reply:
        names = tools_of(body)
        if "submit_plan" in names:
            return Reply.openai(calls=[("submit_plan", {"tasks": [
                *({"id": t, "title": t, "template": t} for t in TEMPLATES),
                {"id": "slow", "title": "look around", "tools": ["read_file"]}]})])
        if "submit_answer" in names:
            return good_synth(body)
        return Reply.openai(text="thinking", delay_s=60)  # the free-form task stalls

    with FakeLLMServer(script) as server:
        answer, _ = _run(server, 4)
        synth_calls = [b for b in server.requests if "submit_answer" in tools_of(b)]
    assert synth_calls == []  # no model call once the deadline had passed
    assert "deadline had passed before synthesis" in answer.notes[0]
    assert answer.tasks["slow"] == "timed-out"
    assert answer.citations
