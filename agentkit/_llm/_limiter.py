"""A request budget shared by every subagent of a process: at most ``rps`` request starts per
second (evenly spaced, first come first served) and at most ``max_in_flight`` at once.

It gates each HTTP attempt, retries included, so the server sees the budget it was promised.
Reservations are taken in arrival order without awaiting, so no caller can be starved.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio


class RequestLimiter:
    """``async with limiter.slot(): send()``.

    >>> limiter = RequestLimiter(rps=5, max_in_flight=8)
    """

    def __init__(self, rps: float | None = None, max_in_flight: int | None = None) -> None:
        if rps is not None and rps <= 0:
            raise ValueError("rps must be positive")
        self.interval = 1.0 / rps if rps else 0.0
        self._cap = anyio.CapacityLimiter(max_in_flight) if max_in_flight else None
        self._next = 0.0

    async def _pace(self) -> None:
        if not self.interval:
            return
        now = anyio.current_time()
        at = max(now, self._next)
        self._next = at + self.interval  # reserved before awaiting: first come, first served
        if at > now:
            await anyio.sleep(at - now)

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        if self._cap is None:
            await self._pace()
            yield
            return
        async with self._cap:
            await self._pace()
            yield
