"""Running one coroutine per host with a bounded number in flight, outcomes yielded as they
finish. A fixed pool of workers pulls hosts from a list, so a fleet of thousands holds at
most ``limit`` hosts' work (and no thousands of waiting tasks) at any time."""

from __future__ import annotations

import math
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence

import anyio

from ._outcome import HostOutcome

Work = Callable[[str], Awaitable[HostOutcome]]


async def fan_out(hosts: Sequence[str], work: Work, limit: int) -> AsyncIterator[HostOutcome]:
    """``work(host)`` for every host, ``limit`` at a time; one outcome per host, whatever
    ``work`` raises (an exception is that host's failed outcome).

    >>> async def ok(h: str) -> HostOutcome:
    ...     return HostOutcome(host=h, status="ok")
    >>> async def hosts() -> list[str]:
    ...     return sorted([o.host async for o in fan_out(["b", "a"], ok, 1)])
    >>> anyio.run(hosts)
    ['a', 'b']
    """
    if limit < 1:
        raise ValueError(f"concurrency must be at least 1, not {limit}")
    send, receive = anyio.create_memory_object_stream[HostOutcome](math.inf)
    todo = iter(hosts)

    async def pull() -> None:
        for host in todo:  # shared iterator: each host is taken by exactly one worker
            send.send_nowait(await _guarded(work, host))

    async with anyio.create_task_group() as tg:
        for _ in range(min(limit, len(hosts))):
            tg.start_soon(pull)
        try:
            async with receive:
                for _ in range(len(hosts)):
                    yield await receive.receive()
        except GeneratorExit:  # the consumer stopped early: stop the hosts still running
            tg.cancel_scope.cancel()
            # and end quietly: re-raised, the task group would wrap GeneratorExit in a
            # BaseExceptionGroup, which aclose() hands to the consumer as an error
            return


async def _guarded(work: Work, host: str) -> HostOutcome:
    t0 = time.perf_counter()
    try:
        return await work(host)
    except Exception as exc:  # isolation: one host's bug is its failed outcome, not the run's
        return HostOutcome(host=host, status="failed", error=f"{type(exc).__name__}: {exc}",
                           wall_s=round(time.perf_counter() - t0, 6))
