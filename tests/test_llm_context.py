"""Context limits and truncated replies (issue 24, items 3 and 4), through the real OpenAI client
against a fake server on 127.0.0.1 that behaves as vLLM does: it refuses a request longer than
its context with vLLM's own 400 wording, cuts a reply at its token budget with
``finish_reason: "length"``, and (as some vLLM versions do) refuses a request whose history
holds tool-call arguments that are not JSON."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from agentkit import Orchestrator
from agentkit._llm._context import recognise
from agentkit.testing import FakeLLMServer, Reply

from .conftest import write_tree
from .llm_script import task_of

LIMIT = 8192  # tokens; the fake counts 4 characters of message text as a token
FILES = {f"data/f{n}.txt": "\n".join(f"line {i} of file {n}: " + "x" * 48 for i in range(200))
         for n in range(3)}


def vllm_refusal(limit: int, prompt: int) -> Reply:
    # vllm/entrypoints/openai/serving_engine.py, _validate_prompt_and_tokenize (HTTP 400)
    return Reply(status=400, body={"object": "error", "type": "BadRequestError", "code": 400,
                                   "message": f"This model's maximum context length is {limit} "
                                              f"tokens. However, you requested {prompt} tokens "
                                              f"in the messages, Please reduce the length of "
                                              f"the messages."})


def tokens(body: dict[str, Any]) -> int:
    return sum(len(m.get("content") or "") for m in body["messages"]) // 4


def history_is_json(body: dict[str, Any]) -> bool:
    for m in body["messages"]:
        for c in m.get("tool_calls") or []:
            try:
                if not isinstance(json.loads(c["function"]["arguments"]), dict):
                    return False
            except ValueError:
                return False
    return True


def plan(tasks: list[str]) -> Reply:
    return Reply.openai(calls=[("submit_plan", {"tasks": [
        {"id": t, "title": t, "objective": f"read {t}", "tools": ["read_file"]} for t in tasks]})])


def synth(body: dict[str, Any]) -> Reply:
    ids = re.findall(r"\b(E[0-9a-f]{10})\b", body["messages"][1]["content"])
    return Reply.openai(calls=[("submit_answer", {"bottom_line": [
        {"text": "the files were read", "evidence": ids[:3]}]})])


def names(body: dict[str, Any]) -> set[str]:
    return {t["function"]["name"] for t in body.get("tools", [])}


def reader(task: str, msgs: list[dict[str, Any]]) -> Reply:
    """Reads the three files one per step, then submits citing every evidence id it got."""
    seen = [m for m in msgs if m["role"] == "tool"]
    if len(seen) < 3:
        return Reply.openai(calls=[("read_file", {"path": f"/data/f{len(seen)}.txt"})])
    ids = list(dict.fromkeys(i for m in seen for i in re.findall(r"\bE[0-9a-f]{10}\b",
                                                                   m["content"])))
    return Reply.openai(calls=[("submit_result", {
        "status": "ok", "summary": "read",
        "findings": [{"claim": "three files", "evidence": ids}]})])


def investigate(server: FakeLLMServer, root: Path) -> Any:
    async def go() -> Any:
        async with Orchestrator.from_env(root=root, base_url=server.base_url, model="fake",
                                         max_retries=1) as orch:
            return await orch.investigate("read the data files")

    return anyio.run(go)


def llamacpp_refusal(limit: int, prompt: int) -> Reply:
    # llama.cpp server: type exceed_context_size_error, with n_prompt_tokens and n_ctx
    return Reply(status=400, body={"error": {
        "code": 400, "message": "the request exceeds the available context size, try "
        "increasing it", "type": "exceed_context_size_error", "n_prompt_tokens": prompt,
        "n_ctx": limit}})


def ollama_refusal(limit: int, prompt: int) -> Reply:
    return Reply(status=400, body={"error": "prompt too long; exceeded max context length by "
                                            f"{prompt - limit} tokens"})


def openai_refusal(limit: int, prompt: int) -> Reply:
    # the error code alone, no sizes: the shrinking cannot aim, it halves what is left
    return Reply(status=400, body={"error": {"message": "Request too long.", "type":
                                             "invalid_request_error",
                                             "code": "context_length_exceeded"}})


@pytest.mark.parametrize("refusal", [vllm_refusal, llamacpp_refusal, ollama_refusal,
                                     openai_refusal])
def test_a_conversation_past_the_context_is_shrunk_and_keeps_its_evidence(
        tmp_path: Path, refusal: Any) -> None:
    root = write_tree(tmp_path / "host", FILES)
    refused: list[int] = []

    def script(body: dict[str, Any]) -> Reply:
        if "submit_plan" in names(body):
            return plan(["reader"])
        if tokens(body) > LIMIT:
            refused.append(tokens(body))
            return refusal(LIMIT, tokens(body))
        if "submit_answer" in names(body):
            return synth(body)
        return reader(task_of(body["messages"]), body["messages"])

    with FakeLLMServer(script) as server:
        answer = investigate(server, root)
    assert refused  # the conversation did outgrow the context
    assert answer.tasks == {"reader": "ok"}
    # the finding cites all three reads, the elided ones too (their ids were kept)
    assert len(answer.citations) == 3
    assert {c.locator.split(":")[0] for c in answer.citations} == {
        f"/data/f{n}.txt" for n in range(3)}


def test_a_request_that_never_fits_names_the_limit_not_the_url(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "host", FILES)

    def script(body: dict[str, Any]) -> Reply:
        return vllm_refusal(100, tokens(body))

    with FakeLLMServer(script) as server:
        proc = subprocess.run(
            [sys.executable, "-m", "agentkit", "ask", "Summarize the data files", "--root",
             str(root), "--base-url", server.base_url, "--model", "fake", "-q"],
            capture_output=True, text=True, timeout=120)
    assert proc.returncode == 4, proc.stderr
    assert "the model's context is 100 tokens" in proc.stderr
    assert "--max-model-len" in proc.stderr and "Check --base-url" not in proc.stderr


def test_a_cut_tool_call_is_asked_again_and_never_enters_the_history(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "host", FILES)
    cut: list[int | None] = []

    def script(body: dict[str, Any]) -> Reply:
        if not history_is_json(body):
            return Reply(status=400, body={"object": "error", "type": "BadRequestError",
                                           "message": "arguments in the history are not JSON"})
        if "submit_plan" in names(body):
            return plan(["reader"])
        if "submit_answer" in names(body):
            return synth(body)
        reply = reader(task_of(body["messages"]), body["messages"])
        if (body.get("max_tokens") or 0) < 2048:  # the server's default budget cuts the call
            cut.append(body.get("max_tokens"))
            assert reply.body is not None
            choice = reply.body["choices"][0]
            fn = choice["message"]["tool_calls"][0]["function"]
            fn["arguments"] = fn["arguments"][: len(fn["arguments"]) // 2]
            choice["finish_reason"] = "length"
        return reply

    with FakeLLMServer(script) as server:
        answer = investigate(server, root)
        assert all(history_is_json(b) for b in server.requests)
    assert cut
    assert answer.tasks == {"reader": "ok"}
    assert len(answer.citations) == 3


def test_a_reply_always_cut_is_dropped_not_echoed(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "host", FILES)

    def script(body: dict[str, Any]) -> Reply:
        if not history_is_json(body):
            return Reply(status=400, body={"message": "arguments in the history are not JSON"})
        if "submit_plan" in names(body):
            return plan(["reader"])
        if "submit_answer" in names(body):
            return synth(body)
        return Reply.openai(calls=[("read_file", '{"path": "/data/f')])

    def cut(body: dict[str, Any]) -> Reply:
        reply = script(body)
        if reply.body is not None and "choices" in reply.body and "submit_" not in json.dumps(
                reply.body):
            reply.body["choices"][0]["finish_reason"] = "length"
        return reply

    with FakeLLMServer(cut) as server:
        answer = investigate(server, root)
        assert all(history_is_json(b) for b in server.requests)
    assert answer.tasks == {"reader": "failed"}


@pytest.mark.parametrize(("status", "text", "limit", "prompt"), [
    # vLLM, vllm/entrypoints/openai/serving_engine.py (_validate_prompt_and_tokenize)
    (400, "This model's maximum context length is 8192 tokens. However, you requested 9100 "
          "tokens (9000 in the messages, 100 in the completion). Please reduce the length of "
          "the messages or completion.", 8192, 9000),
    # vLLM, when only the completion budget does not fit
    (400, "'max_tokens' or 'max_completion_tokens' is too large: 8000. This model's maximum "
          "context length is 4096 tokens and your request has 2778 input tokens "
          "(8000 > 4096 - 2778).", 4096, 2778),
    # OpenAI (code context_length_exceeded)
    (400, json.dumps({"error": {"message": "This model's maximum context length is 128000 "
                                           "tokens. However, your messages resulted in 130000 "
                                           "tokens.", "type": "invalid_request_error",
                                "code": "context_length_exceeded"}}), 128000, 130000),
    # Anthropic Messages API
    (400, json.dumps({"type": "error", "error": {"type": "invalid_request_error",
                                                 "message": "prompt is too long: 208656 tokens "
                                                            "> 200000 maximum"}}),
     200000, 208656),
    # llama.cpp server (type exceed_context_size_error, n_prompt_tokens / n_ctx)
    (400, json.dumps({"error": {"code": 400, "message": "the request exceeds the available "
                                "context size, try increasing it", "type":
                                "exceed_context_size_error", "n_prompt_tokens": 20512,
                                "n_ctx": 16384}}), 16384, 20512),
    # Ollama
    (400, json.dumps({"error": "prompt too long; exceeded max context length by 4021 tokens"}),
     None, None),
])
def test_each_provider_s_wording_is_recognised(status: int, text: str, limit: int | None,
                                               prompt: int | None) -> None:
    got = recognise(status, text)
    assert got is not None
    assert (got.limit, got.prompt) == (limit, prompt)


@pytest.mark.parametrize("text", ["Invalid 'tool_choice'", '{"error": "model not found"}',
                                  "rate limited: too many requests"])
def test_other_refusals_are_not_context_limits(text: str) -> None:
    assert recognise(400, text) is None
