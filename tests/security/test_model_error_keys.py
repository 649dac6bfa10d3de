"""Issue 28, class 8: a model server that answers 401 with the key in its body must not put
the key into the error (which reaches stderr and the trace)."""

from __future__ import annotations

import anyio
import pytest

from agentkit._llm._http import Reply, post_json
from agentkit._llm._limiter import RequestLimiter
from agentkit._llm._messages import ModelError

KEY = "sk-live-9f8e7d6c5b4a39281706f5e4d3c2b1a0"


class _Echo:
    """A server that quotes the credential it was sent, as some proxies do on a 401."""

    def __init__(self, header: str) -> None:
        self.header = header

    async def post(self, url: str, body: bytes, headers: dict[str, str]) -> Reply:
        sent = headers[self.header]
        return Reply(401, {}, f'{{"error": "invalid credential: {sent}"}}'.encode())


@pytest.mark.parametrize("header,value", [("Authorization", f"Bearer {KEY}"),
                                          ("x-api-key", KEY)])
def test_a_key_echoed_in_an_error_body_is_not_in_the_error(header: str, value: str) -> None:
    async def go() -> ModelError:
        try:
            await post_json(_Echo(header), RequestLimiter(), "http://127.0.0.1:9/v1", b"{}",
                            {header: value})
        except ModelError as exc:
            return exc
        raise AssertionError("a 401 must raise")

    exc = anyio.run(go)
    assert KEY not in str(exc) and "HTTP 401" in str(exc), str(exc)
