"""A scripted model for the LLM-mode tests, speaking through FakeLLMServer.

The script reads the request like a model would: the planner is asked for a plan, each
subagent calls one real tool and then submits what it found citing the evidence id it got,
and the synthesizer cites evidence ids it was given.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from agentkit.testing import Reply

EV = re.compile(r'"evidence_id": ?"(E[0-9a-f]{10})"')

# task id -> (tool, arguments, claim)
TASKS: dict[str, tuple[str, dict[str, Any], str]] = {
    "unit": ("parse_config", {"path": "/etc/systemd/system/demo.service"},
             "The demo unit sets NCCL_PROTO=LL."),
    "nccl-conf": ("read_file", {"path": "/etc/nccl.conf"}, "/etc/nccl.conf sets NCCL_DEBUG=WARN."),
    "model": ("grep", {"pattern": "num_hidden_layers", "path": "/models/m/config.json"},
              "The model has 61 layers."),
}


def plan_reply(task_ids: list[str]) -> Reply:
    tasks = [{"id": t, "title": f"check {t}", "objective": TASKS.get(t, ("", {}, t))[2],
              "tools": ["read_file", "parse_config", "grep"]} for t in task_ids]
    return Reply.openai(calls=[("submit_plan", {"tasks": tasks})])


def task_of(messages: list[dict[str, Any]]) -> str:
    m = re.match(r"Task (\S+):", messages[1]["content"])
    return m.group(1) if m else "?"


def make_script(task_ids: list[str], delay_s: float = 0.3,
                special: Callable[[str, list[dict[str, Any]]], Reply | None] | None = None
                ) -> Callable[[dict[str, Any]], Reply]:
    def script(body: dict[str, Any]) -> Reply:
        tools = {t["function"]["name"] for t in body.get("tools", [])}
        msgs = body["messages"]
        if "submit_plan" in tools:
            return plan_reply(task_ids)
        if "submit_answer" in tools:
            ids = re.findall(r"\b(E[0-9a-f]{10})\b", msgs[1]["content"])
            failed = re.findall(r"## Task (\S+) \((?:failed|timed-out)\)", msgs[1]["content"])
            bottom = [{"text": "NCCL_PROTO=LL is set for the served unit.", "evidence": ids[:1]}]
            if failed:
                bottom.append({"text": f"Not established: {', '.join(failed)}.", "evidence": []})
            return Reply.openai(calls=[("submit_answer", {
                "bottom_line": bottom,
                "sections": [{"title": "Details", "claims": [
                    {"text": "Per-task findings.", "evidence": ids[1:3]}]}]})])
        task = task_of(msgs)
        if special is not None:
            got = special(task, msgs)
            if got is not None:
                return got
        tool_msgs = [m for m in msgs if m["role"] == "tool"]
        tool, args, claim = TASKS[task]
        if not tool_msgs:
            return Reply.openai(calls=[(tool, args)], delay_s=delay_s)
        ev = EV.findall(tool_msgs[-1]["content"])
        return Reply.openai(calls=[("submit_result", {
            "status": "ok", "summary": claim,
            "findings": [{"claim": claim, "evidence": ev[:1]}],
            "facts": {"seen": {"value": True, "evidence": ev[:1]}}})], delay_s=delay_s)

    return script


def stalling_script(task_ids: list[str], delay_s: float) -> Callable[[dict[str, Any]], Reply]:
    """Plans ``task_ids`` at once, then keeps every subagent's first call waiting ``delay_s``:
    for tests that interrupt a run while its subagents are in flight."""
    planner = make_script(task_ids)

    def script(body: dict[str, Any]) -> Reply:
        if any(t["function"]["name"] == "submit_plan" for t in body.get("tools", [])):
            return planner(body)
        return Reply.openai(text="thinking", delay_s=delay_s)

    return script


def dumps(obj: Any) -> str:
    return json.dumps(obj)


def llm_orchestrator(server: Any, root: Any, trace: Any = None) -> Any:
    """An LLM-mode orchestrator on ``root`` whose model is the scripted ``server`` (the real
    OpenAI client and the default transport), with no config file read."""
    from agentkit import Host, load_settings
    from agentkit._api import build_orchestrator

    settings = load_settings(None, {"base_url": server.base_url, "model": "fake"},
                             environ={"AGENTKIT_CONFIG": "/dev/null"})
    return build_orchestrator(settings, Host.at(root), trace=trace)
