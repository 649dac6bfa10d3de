"""When and how long to retry a model call (tenacity underneath).

Retried: 408, 409, 425, 429, 5xx (529 included) and transport failures. Never: 400, 401, 403,
404, 422 — the same request would fail the same way. The wait honours ``Retry-After``
(seconds or an HTTP date) and ``retry-after-ms``, is jittered, and is bounded: a server that
asks for longer than ``max_wait_s`` makes the call fail instead of stalling the run.
"""

from __future__ import annotations

import email.utils
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception,
    stop_after_attempt,
    wait_random_exponential,
)

from ._messages import ModelError

T = TypeVar("T")
RETRY_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 529})


def retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds the server asked us to wait, if it said (``headers``: case-insensitive, as
    httpx's and aiohttp's both are)."""
    if ms := headers.get("retry-after-ms"):
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


_log = logging.getLogger("agentkit.llm")


def _say_retry(state: RetryCallState) -> None:
    exc = state.outcome.exception() if state.outcome else None
    wait = state.next_action.sleep if state.next_action else 0.0
    _log.warning("model call failed (%s); attempt %d, retrying in %.2f s", exc,
                 state.attempt_number, wait)


def error_for_status(status: int, headers: Mapping[str, str], text: str) -> ModelError:
    from ._context import recognise

    too_long = recognise(status, text)  # a context-length refusal: shrink, do not retry as is
    if too_long is not None:
        return too_long
    body = text[:300].replace("\n", " ")
    return ModelError(f"model server answered HTTP {status}: {body}", status=status,
                      retryable=status in RETRY_STATUSES, retry_after=retry_after(headers))


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 5
    base_wait_s: float = 0.5
    max_wait_s: float = 30.0

    async def call(self, fn: Callable[[], Awaitable[T]]) -> T:
        # The common case is one attempt that works: keep tenacity off that hot path.
        try:
            return await fn()
        except ModelError as exc:
            if self.max_attempts <= 1 or not self._retryable(exc):
                raise
            first = exc
        return await self._retrying(fn, first)

    def _retryable(self, exc: BaseException) -> bool:
        if not isinstance(exc, ModelError) or not exc.retryable:
            return False
        return exc.retry_after is None or exc.retry_after <= self.max_wait_s

    async def _retrying(self, fn: Callable[[], Awaitable[T]], first: ModelError) -> T:
        jitter = wait_random_exponential(multiplier=self.base_wait_s, max=self.max_wait_s)

        def wait(state: RetryCallState) -> float:
            exc = state.outcome.exception() if state.outcome else None
            asked = getattr(exc, "retry_after", None)
            if asked is not None:
                return float(asked) + jitter(state) * 0.1
            return float(jitter(state))

        first_pending = True

        async def again() -> T:
            # the first attempt already failed with ``first``; replay that into tenacity
            nonlocal first_pending
            if first_pending:
                first_pending = False
                raise first
            return await fn()

        async for attempt in AsyncRetrying(
            stop=stop_after_attempt(self.max_attempts), wait=wait,
            retry=retry_if_exception(self._retryable), reraise=True,
            before_sleep=_say_retry,
        ):
            with attempt:
                return await again()
        raise AssertionError("unreachable")  # pragma: no cover
