"""Model output as models write it (issue 24, item 5): calls written as JSON in the message text
(fenced, with prose around, inside <tool_call> tags) are read and validated like tool calls, so
the plan and the answer are the model's own; and a server that only answers streamed requests
(SSE) gets them. Through the real OpenAI client against a fake server on 127.0.0.1."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import anyio
import pytest

from agentkit import Orchestrator
from agentkit._llm._messages import ToolSpec
from agentkit._llm._textcalls import calls_in_text
from agentkit.testing import FakeLLMServer, Reply

from .conftest import write_tree
from .llm_script import task_of

HOST = {"etc/nccl.conf": "NCCL_DEBUG=WARN\n", "etc/app.conf": "threads=8\n"}
ANSWER = "The host sets NCCL_DEBUG=WARN in /etc/nccl.conf."


def names(body: dict[str, Any]) -> set[str]:
    return {t["function"]["name"] for t in body.get("tools", [])}


def written(body: dict[str, Any]) -> str:
    """What a model without a tool-call parser writes back, as text."""
    tools, msgs = names(body), body["messages"]
    if "submit_plan" in tools:
        plan = {"tasks": [{"id": "nccl", "title": "NCCL config", "objective": "read it",
                           "tools": ["read_file"]}]}
        return f"Here is the plan.\n```json\n{json.dumps(plan, indent=1)}\n```\nDone."
    if "submit_answer" in tools:
        ids = re.findall(r"\b(E[0-9a-f]{10})\b", msgs[1]["content"])
        return ("<think>merge the findings</think>I will submit: " + json.dumps(
            {"bottom_line": [{"text": ANSWER, "evidence": ids[:1]}]}) + " -- end")
    seen = [m for m in msgs if m["role"] == "tool"]
    if not seen:
        return ('<tool_call>\n{"name": "read_file", "arguments": {"path": "/etc/nccl.conf"}}'
                "\n</tool_call>")
    ev = re.findall(r"\bE[0-9a-f]{10}\b", seen[-1]["content"])[:1]
    return "Result: " + json.dumps({"status": "ok", "summary": "NCCL_DEBUG=WARN", "findings": [
        {"claim": "NCCL_DEBUG=WARN is set", "evidence": ev}]})


def run(server: FakeLLMServer, root: Path, **settings: Any) -> Any:
    async def go() -> Any:
        async with Orchestrator.from_env(root=root, base_url=server.base_url, model="fake",
                                         max_retries=1, **settings) as orch:
            return await orch.investigate("What does the NCCL config set?")

    return anyio.run(go)


def test_calls_written_in_the_text_are_the_model_s_plan_and_answer(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "host", HOST)
    with FakeLLMServer(lambda body: Reply.openai(text=written(body))) as server:
        answer = run(server, root)
    assert answer.mode == "llm"
    assert answer.tasks == {"nccl": "ok"}  # the model's plan, not the catalog's
    assert [c.text for c in answer.bottom_line] == [ANSWER]  # the model's answer
    assert answer.citations and answer.citations[0].locator.startswith("/etc/nccl.conf")
    assert not any("did not write" in n or "catalog planned" in n for n in answer.notes)


def sse(reply: Reply) -> bytes:
    """``reply``'s completion as OpenAI streams it: text and arguments in fragments."""
    assert reply.body is not None
    msg = reply.body["choices"][0]["message"]
    chunks: list[dict[str, Any]] = []
    text = msg.get("content") or ""
    for i in range(0, len(text), 7):
        chunks.append({"delta": {"content": text[i:i + 7]}})
    for n, call in enumerate(msg.get("tool_calls") or []):
        args = call["function"]["arguments"]
        third = max(1, len(args) // 3)
        chunks.append({"delta": {"tool_calls": [{"index": n, "id": call["id"], "type":
                                                 "function", "function": {
                                                     "name": call["function"]["name"],
                                                     "arguments": args[:third]}}]}})
        for k in range(third, len(args), third):
            chunks.append({"delta": {"tool_calls": [{"index": n, "function": {
                "arguments": args[k:k + third]}}]}})
    chunks.append({"delta": {}, "finish_reason": reply.body["choices"][0]["finish_reason"]})
    events = [{"id": "c", "object": "chat.completion.chunk", "model": "fake",
               "choices": [{"index": 0, **c}]} for c in chunks]
    events.append({"id": "c", "object": "chat.completion.chunk", "model": "fake",
                   "choices": [], "usage": {"prompt_tokens": 100, "completion_tokens": 20}})
    body = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
    return (": keep-alive\n\n" + body).encode()


def tool_script(body: dict[str, Any]) -> Reply:
    tools, msgs = names(body), body["messages"]
    if "submit_plan" in tools:
        return Reply.openai(calls=[("submit_plan", {"tasks": [
            {"id": "nccl", "title": "NCCL", "objective": "read", "tools": ["read_file"]}]})])
    if "submit_answer" in tools:
        ids = re.findall(r"\b(E[0-9a-f]{10})\b", msgs[1]["content"])
        return Reply.openai(text="Merged.", calls=[("submit_answer", {"bottom_line": [
            {"text": ANSWER, "evidence": ids[:1]}]})])
    assert task_of(msgs) == "nccl"
    seen = [m for m in msgs if m["role"] == "tool"]
    if not seen:
        return Reply.openai(calls=[("read_file", {"path": "/etc/nccl.conf"})])
    ev = re.findall(r"\bE[0-9a-f]{10}\b", seen[-1]["content"])[:1]
    return Reply.openai(calls=[("submit_result", {"status": "ok", "summary": "read",
                                                  "findings": [{"claim": "set",
                                                                "evidence": ev}]})])


@pytest.mark.parametrize("configured", [False, True])
def test_a_server_that_only_streams_is_streamed_to(tmp_path: Path, configured: bool) -> None:
    root = write_tree(tmp_path / "host", HOST)

    def script(body: dict[str, Any]) -> Reply:
        if body.get("stream") is not True:
            return Reply(status=400, body={"error": {
                "message": 'this gateway only supports "stream": true', "type": "invalid"}})
        assert body.get("stream_options") == {"include_usage": True}
        return Reply(raw=sse(tool_script(body)))

    with FakeLLMServer(script) as server:
        answer = run(server, root, **({"stream": True} if configured else {}))
        refused = [b for b in server.requests if not b.get("stream")]
    assert len(refused) == (0 if configured else 1)  # asked once unstreamed, then streamed
    assert answer.tasks == {"nccl": "ok"}
    assert [c.text for c in answer.bottom_line] == [ANSWER]
    assert answer.usage.input_tokens > 0  # the final usage chunk was read


SPECS = [ToolSpec("read_file", "", {"type": "object", "properties": {"path": {}},
                                    "required": ["path"]}),
         ToolSpec("grep", "", {"type": "object", "properties": {"path": {}, "pattern": {}},
                               "required": ["pattern", "path"]}),
         ToolSpec("list_dir", "", {"type": "object", "properties": {"path": {}},
                                   "required": ["path"]})]


@pytest.mark.parametrize(("text", "expected"), [
    ('{"name": "grep", "arguments": {"pattern": "x", "path": "/"}}', ["grep"]),
    ('<tool_call>{"name": "grep", "parameters": "{\\"pattern\\": \\"x\\", \\"path\\": \\"/\\"}"}'
     "</tool_call>", ["grep"]),
    ('Searching: {"pattern": "NCCL", "path": "/etc"}.', ["grep"]),  # fits grep only
    ('{"path": "/etc"}', []),  # fits read_file and list_dir: ambiguous, no call
    ('{"name": "rm", "arguments": {"path": "/"}}', []),  # not an offered tool
    ("```json\n{\"pattern\": \"a\", \"path\": \"/\"\n```", []),  # not JSON: no call
    ("no json here", []),
])
def test_calls_in_text(text: str, expected: list[str]) -> None:
    assert [c.name for c in calls_in_text(text, SPECS)] == expected


def test_a_gateway_that_streams_unasked_is_read(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "host", HOST)
    with FakeLLMServer(lambda body: Reply(raw=sse(tool_script(body)))) as server:
        answer = run(server, root)
        asked = [b.get("stream") for b in server.requests]
    assert not any(asked)  # never asked to stream, streamed anyway
    assert answer.tasks == {"nccl": "ok"}
    assert [c.text for c in answer.bottom_line] == [ANSWER]
