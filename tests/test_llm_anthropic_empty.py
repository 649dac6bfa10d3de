"""Anthropic: an empty assistant reply is answered with a nudge and never sent back as an empty
message (issue 24, item 9). The fake server checks each request as the Messages API documents
it (roles alternate, starting with user; a message's content is non-empty; a text block's text
is not empty or whitespace) and answers a request that breaks a rule with the API's 400
invalid_request_error, as the real API does."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from typing import Any

import anyio

from agentkit import Orchestrator
from agentkit.testing import FakeLLMServer, Reply

from .conftest import write_tree


def problems(body: dict[str, Any]) -> list[str]:
    out = []
    msgs = body.get("messages", [])
    if not msgs or msgs[0]["role"] != "user":
        out.append("first message must use the user role")
    for a, b in itertools.pairwise(msgs):
        if a["role"] == b["role"]:
            out.append("roles must alternate between user and assistant")
    for m in msgs:
        if isinstance(m["content"], list) and not m["content"]:
            out.append(f"{m['role']} message content must be non-empty")
        for block in m["content"] if isinstance(m["content"], list) else []:
            if block.get("type") == "text" and not str(block.get("text", "")).strip():
                out.append("text content blocks must contain non-whitespace text")
    return out


def names(body: dict[str, Any]) -> set[str]:
    return {t["name"] for t in body.get("tools", [])}


def test_an_empty_reply_is_nudged_not_echoed(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "host", {"etc/nccl.conf": "NCCL_DEBUG=WARN\n"})
    empty_sent = {"plan": False, "task": False}
    refused: list[list[str]] = []

    def script(body: dict[str, Any]) -> Reply:
        wrong = problems(body)
        if wrong:
            refused.append(wrong)
            return Reply(status=400, body={"type": "error", "error": {
                "type": "invalid_request_error", "message": "; ".join(wrong)}})
        tools, msgs = names(body), body["messages"]
        if "submit_plan" in tools:
            if not empty_sent["plan"]:
                empty_sent["plan"] = True
                return Reply.anthropic(text="")  # content: [], stop_reason end_turn
            return Reply.anthropic(calls=[("submit_plan", {"tasks": [
                {"id": "nccl", "title": "NCCL", "objective": "read", "tools": ["read_file"]}]})])
        if "submit_answer" in tools:
            ids = re.findall(r"\b(E[0-9a-f]{10})\b", json.dumps(msgs))
            return Reply.anthropic(calls=[("submit_answer", {"bottom_line": [
                {"text": "NCCL_DEBUG=WARN", "evidence": ids[:1]}]})])
        results = [b for m in msgs if isinstance(m["content"], list) for b in m["content"]
                   if b.get("type") == "tool_result"]
        if not results:
            if not empty_sent["task"]:
                empty_sent["task"] = True
                return Reply.anthropic(text=" ")  # whitespace only: no text either
            return Reply.anthropic(calls=[("read_file", {"path": "/etc/nccl.conf"})])
        ev = re.findall(r"\bE[0-9a-f]{10}\b", json.dumps(results[-1]))[:1]
        return Reply.anthropic(calls=[("submit_result", {
            "status": "ok", "summary": "read", "findings": [{"claim": "set", "evidence": ev}]})])

    async def go(server: FakeLLMServer) -> Any:
        async with Orchestrator.from_env(root=root, base_url=server.base_url, model="claude",
                                         provider="anthropic", max_retries=1) as orch:
            return await orch.investigate("What does the NCCL config set?")

    with FakeLLMServer(script) as server:
        answer = anyio.run(go, server)
        nudged = [b for b in server.requests if "Call submit_plan." in json.dumps(b)]
    assert empty_sent == {"plan": True, "task": True}
    assert refused == []
    assert nudged  # the planner was asked again, with a nudge, after the empty reply
    assert answer.tasks == {"nccl": "ok"}
    assert not any("did not write" in n for n in answer.notes)
