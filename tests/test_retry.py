"""The OpenAI-compatible client against a scripted server: what is retried, what is not,
and how Retry-After is honoured."""

from __future__ import annotations

import itertools
from email.utils import formatdate
from typing import Any

import anyio
import pytest

from agentkit import Message, ModelError, ModelRequest, OpenAIChatModel
from agentkit._llm._retry import RetryPolicy
from agentkit.testing import FakeLLMServer, Reply

FAST = RetryPolicy(max_attempts=4, base_wait_s=0.01, max_wait_s=2.0)


def complete(server: FakeLLMServer, policy: RetryPolicy = FAST) -> object:
    async def go() -> object:
        model = OpenAIChatModel(server.base_url, "m", retry=policy, api_key="k-test")
        try:
            return await model.complete(ModelRequest(messages=[Message.user("hi")]))
        finally:
            await model.aclose()

    return anyio.run(go)


def sequence(*replies: Reply) -> object:
    it = itertools.chain(replies, itertools.repeat(replies[-1]))
    return lambda body: next(it)


@pytest.mark.parametrize("first", [
    Reply(status=429, headers={"retry-after-ms": "20"}, body={"error": "slow down"}),
    Reply(status=429, headers={"retry-after": "0"}, body={}),
    Reply(status=429, headers={"retry-after": formatdate(usegmt=True)}, body={}),
    Reply(status=408, body={}), Reply(status=500, body={}), Reply(status=502, body={}),
    Reply(status=503, body={}), Reply(status=529, body={}),
    Reply(raw=b'{"choices": [{"mess'), Reply(body={"choices": []}), Reply(drop=True),
])
def test_transient_failures_are_retried(first: Reply) -> None:
    with FakeLLMServer(sequence(first, Reply.openai(text="ok"))) as server:
        resp = complete(server)
    assert resp.text == "ok" and len(server.requests) == 2
    assert server.headers[0]["authorization"] == "Bearer k-test"


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
def test_client_errors_are_not_retried(status: int) -> None:
    with FakeLLMServer(sequence(Reply(status=status, body={"error": "no"}))) as server:
        with pytest.raises(ModelError) as err:
            complete(server)
    assert len(server.requests) == 1 and err.value.status == status
    assert not err.value.retryable


def test_absurd_retry_after_fails_instead_of_stalling() -> None:
    with FakeLLMServer(sequence(Reply(status=429, headers={"retry-after": "86400"},
                                      body={}))) as server, pytest.raises(ModelError, match="429"):
        complete(server)
    assert len(server.requests) == 1


@pytest.mark.parametrize("name", ["Retry-After", "RETRY-AFTER", "retry-after"])
def test_retry_after_is_read_in_any_case(name: str) -> None:
    # HTTP header names are case-insensitive (RFC 9110 5.1); the response's headers are used
    # as the HTTP client hands them over, so that must hold there.
    with FakeLLMServer(sequence(Reply(status=429, headers={name: "86400"},
                                      body={}))) as server, pytest.raises(ModelError) as err:
        complete(server)
    assert err.value.retry_after == 86400 and len(server.requests) == 1


def test_retries_are_bounded() -> None:
    with FakeLLMServer(sequence(Reply(status=503, body={}))) as server:
        with pytest.raises(ModelError, match="503"):
            complete(server)
    assert len(server.requests) == FAST.max_attempts


@pytest.mark.parametrize("first,retried", [
    (Reply(status=429, headers={"retry-after": "0"}, body={}), True),
    (Reply(status=529, body={"type": "error", "error": {"type": "overloaded_error"}}), True),
    (Reply(status=400, body={"type": "error"}), False),
    (Reply(status=401, body={"type": "error"}), False),
])
def test_anthropic_backend_retries_the_same_way(first: Reply, retried: bool) -> None:
    from agentkit import AnthropicModel

    ok = Reply.anthropic(calls=[("read_file", {"path": "/a"}), ("glob", {"pattern": "/b/*"})])

    async def go(server: FakeLLMServer) -> object:
        model = AnthropicModel(server.base_url, "claude-test", retry=FAST, api_key="k")
        try:
            return await model.complete(ModelRequest(messages=[Message.user("hi")]))
        finally:
            await model.aclose()

    with FakeLLMServer(sequence(first, ok)) as server:
        if not retried:
            with pytest.raises(ModelError):
                anyio.run(go, server)
            assert len(server.requests) == 1
            return
        resp = anyio.run(go, server)
    assert len(server.requests) == 2 and server.headers[0]["x-api-key"] == "k"
    assert [c.name for c in resp.tool_calls] == ["read_file", "glob"]  # several in one turn


def test_tool_calls_and_usage_parsed() -> None:
    reply = Reply.openai(calls=[("read_file", {"path": "/a"}), ("glob", {"pattern": "/b/*"})])
    with FakeLLMServer(sequence(reply)) as server:
        resp = complete(server)
    assert [(c.name, c.parsed()) for c in resp.tool_calls] == [
        ("read_file", {"path": "/a"}), ("glob", {"pattern": "/b/*"})]
    assert resp.usage.input_tokens == 100 and resp.usage.output_tokens == 20


def test_retry_after_is_waited_for_in_full_through_the_server() -> None:
    # A server that asks for 1.5 s gets at least 1.5 s before the next attempt (a lower bound:
    # a busy machine can only make the wait longer, never shorter).
    import time

    server_replies = sequence(Reply(status=503, headers={"retry-after": "1.5"}, body={}),
                              Reply.openai(text="ok"))
    with FakeLLMServer(server_replies) as server:
        t0 = time.monotonic()
        complete(server, RetryPolicy(max_attempts=3, base_wait_s=0.01, max_wait_s=5.0))
        waited = time.monotonic() - t0
        assert len(server.requests) == 2
    assert waited >= 1.5, waited


@pytest.mark.parametrize("headers,seconds", [
    ({"retry-after-ms": "1500"}, 1.5), ({"retry-after": "2"}, 2.0),
    ({"retry-after": "0.25"}, 0.25), ({"retry-after": "-3"}, 0.0),
    ({"retry-after-ms": "x", "retry-after": "4"}, 4.0), ({"retry-after": "soon"}, None), ({}, None),
])
def test_retry_after_header_forms(headers: dict[str, str], seconds: float | None) -> None:
    import httpx

    from agentkit._llm._retry import retry_after

    assert retry_after(httpx.Headers(headers)) == seconds


def test_retry_after_as_an_http_date_counts_from_now() -> None:
    import time

    import httpx

    from agentkit._llm._retry import retry_after

    got = retry_after(httpx.Headers({"retry-after": formatdate(time.time() + 30, usegmt=True)}))
    assert got is not None and 28 <= got <= 30


def test_asking_longer_than_the_bound_fails_at_once() -> None:
    calls = []

    async def fn() -> str:
        calls.append(1)
        raise ModelError("HTTP 429", status=429, retryable=True, retry_after=60.0)

    with pytest.raises(ModelError, match="429"):
        anyio.run(RetryPolicy(max_attempts=5, max_wait_s=10.0).call, fn)
    assert calls == [1]


def test_each_attempt_waits_what_its_own_error_asked() -> None:
    import time

    asked = iter([0.3, 0.6])
    stamps: list[float] = []

    async def fn() -> str:
        stamps.append(time.monotonic())
        wait = next(asked, None)
        if wait is None:
            return "ok"
        raise ModelError("HTTP 503", status=503, retryable=True, retry_after=wait)

    assert anyio.run(RetryPolicy(max_attempts=4, base_wait_s=0.01, max_wait_s=5.0).call,
                     fn) == "ok"
    gaps = [b - a for a, b in itertools.pairwise(stamps)]
    assert len(gaps) == 2 and gaps[0] >= 0.3 and gaps[1] >= 0.6, gaps


def test_the_policy_defaults() -> None:
    assert RetryPolicy() == RetryPolicy(max_attempts=5, base_wait_s=0.5, max_wait_s=30.0)


@pytest.mark.parametrize("status,retryable", [
    (408, True), (409, True), (425, True), (429, True), (500, True), (502, True), (503, True),
    (504, True), (529, True), (400, False), (401, False), (403, False), (404, False),
    (422, False), (501, False), (200, False),
])
def test_error_for_status(status: int, retryable: bool) -> None:
    import httpx

    from agentkit._llm._retry import error_for_status

    err = error_for_status(status, httpx.Headers({"retry-after": "3"}), "line one\nline two"
                           + "x" * 400)
    assert err.retryable is retryable and err.status == status and err.retry_after == 3.0
    assert str(err) == f"model server answered HTTP {status}: line one line two" + "x" * 283


def counted(errors: list[ModelError | None]) -> tuple[list[int], Any]:
    calls: list[int] = []

    async def fn() -> str:
        calls.append(1)
        err = errors[min(len(calls) - 1, len(errors) - 1)]
        if err is not None:
            raise err
        return "ok"

    return calls, fn


def busy(after: float | None = None, message: str = "HTTP 503") -> ModelError:
    return ModelError(message, status=503, retryable=True, retry_after=after)


def test_one_attempt_means_no_retry_and_the_attempts_are_counted_exactly() -> None:
    calls, fn = counted([busy(0.0)])
    with pytest.raises(ModelError):
        anyio.run(RetryPolicy(max_attempts=1).call, fn)
    assert len(calls) == 1
    calls, fn = counted([busy(0.0), None])
    assert anyio.run(RetryPolicy(max_attempts=2, base_wait_s=0.01).call, fn) == "ok"
    assert len(calls) == 2
    calls, fn = counted([busy(0.0, "first"), busy(0.0, "second"), busy(0.0, "last")])
    with pytest.raises(ModelError, match=r"^last$"):  # the last error itself, not a wrapper
        anyio.run(RetryPolicy(max_attempts=3, base_wait_s=0.01).call, fn)
    assert len(calls) == 3


def test_what_is_not_retried() -> None:
    calls, fn = counted([ModelError("HTTP 400", status=400, retryable=False)])
    with pytest.raises(ModelError):
        anyio.run(RetryPolicy(max_attempts=4).call, fn)
    assert len(calls) == 1
    # a retryable error on a later attempt that is not: stops there
    calls, fn = counted([busy(0.0), ModelError("HTTP 401", status=401), None])
    with pytest.raises(ModelError, match="401"):
        anyio.run(RetryPolicy(max_attempts=4, base_wait_s=0.01).call, fn)
    assert len(calls) == 2


def test_the_bound_on_what_a_server_may_ask_is_inclusive() -> None:
    calls, fn = counted([busy(0.2), None])
    assert anyio.run(RetryPolicy(max_attempts=2, max_wait_s=0.2).call, fn) == "ok"
    calls, fn = counted([busy(0.21), None])
    with pytest.raises(ModelError):
        anyio.run(RetryPolicy(max_attempts=2, max_wait_s=0.2).call, fn)
    assert len(calls) == 1
    calls, fn = counted([busy(0.0), busy(0.21), None])  # a later ask past the bound stops too
    with pytest.raises(ModelError):
        anyio.run(RetryPolicy(max_attempts=3, max_wait_s=0.2).call, fn)
    assert len(calls) == 2


def test_the_jitter_added_to_an_asked_wait_is_small() -> None:
    # asked 0.2 s; the jitter on top is at most a tenth of max_wait_s (0.05 s here)
    import time

    stamps: list[float] = []

    async def fn() -> str:
        stamps.append(time.monotonic())
        if len(stamps) < 3:
            raise busy(0.2)
        return "ok"

    anyio.run(RetryPolicy(max_attempts=3, base_wait_s=10.0, max_wait_s=0.5).call, fn)
    gaps = [b - a for a, b in itertools.pairwise(stamps)]
    assert all(0.2 <= g < 2.5 for g in gaps), gaps


def test_without_an_asked_wait_the_backoff_is_bounded_by_max_wait() -> None:
    import time

    stamps: list[float] = []

    async def fn() -> str:
        stamps.append(time.monotonic())
        if len(stamps) < 3:
            raise busy(None)
        return "ok"

    anyio.run(RetryPolicy(max_attempts=3, base_wait_s=5.0, max_wait_s=0.3).call, fn)
    gaps = [b - a for a, b in itertools.pairwise(stamps)]
    assert all(g < 2.0 for g in gaps), gaps


def test_short_and_past_waits_are_not_rounded_up() -> None:
    import time

    import httpx

    from agentkit._llm._retry import retry_after

    assert retry_after(httpx.Headers({"retry-after-ms": "20"})) == 0.02
    assert retry_after(httpx.Headers({"retry-after": "0.5"})) == 0.5
    past = formatdate(time.time() - 60, usegmt=True)
    assert retry_after(httpx.Headers({"retry-after": past})) == 0.0
