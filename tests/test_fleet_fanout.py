"""The fan-out (``_fleet/_fanout.py``) called directly: ``work(host)`` for every host, at most
``limit`` at a time, exactly one outcome per host whatever ``work`` raises, and the hosts still
running stopped when the consumer stops early (the ``Transport`` protocol in ``_outcome.py``:
"Cancelling the iteration stops the hosts still running"). Expected values come from that
contract and from anyio's semantics for task groups and cancellation."""

from __future__ import annotations

import types
from collections.abc import Awaitable, Callable

import anyio
import pytest

from agentkit._fleet import _fanout
from agentkit._fleet._fanout import fan_out
from agentkit._fleet._outcome import HostOutcome

HOSTS = [f"n{i:02}" for i in range(12)]


class _Pool:
    """Work that counts the hosts in flight; each host waits a few loop turns."""

    def __init__(self, turns: int = 3) -> None:
        self.turns = turns
        self.now = self.most = 0
        self.started: list[str] = []

    async def __call__(self, host: str) -> HostOutcome:
        self.started.append(host)
        self.now += 1
        self.most = max(self.most, self.now)
        try:
            for _ in range(self.turns):
                await anyio.sleep(0)
        finally:
            self.now -= 1
        return HostOutcome(host=host, status="ok")


def _all(hosts: list[str], work: Callable[[str], object], limit: int) -> list[HostOutcome]:
    async def go() -> list[HostOutcome]:
        with anyio.fail_after(30):  # a bound on a broken fan-out, not a speed assertion
            return [o async for o in fan_out(hosts, work, limit)]  # type: ignore[arg-type]

    return anyio.run(go)


@pytest.mark.parametrize("limit", [1, 2, 5, 11, 12, 13, 100])
def test_every_host_once_and_at_most_limit_in_flight(limit: int) -> None:
    pool = _Pool()
    got = _all(HOSTS, pool, limit)
    assert sorted(o.host for o in got) == HOSTS and len(got) == len(HOSTS)
    assert sorted(pool.started) == HOSTS  # each host taken by exactly one worker
    # the pool is full while there are hosts to give it: limit at a time, not fewer
    assert pool.most == min(limit, len(HOSTS))


def test_no_hosts_is_no_outcome() -> None:
    assert _all([], _Pool(), 4) == []


@pytest.mark.parametrize("limit", [0, -1])
def test_a_limit_under_one_is_refused(limit: int) -> None:
    with pytest.raises(ValueError, match=f"^concurrency must be at least 1, not {limit}$"):
        _all(HOSTS, _Pool(), limit)


def test_outcomes_come_as_they_finish_not_in_the_order_given() -> None:
    async def work(host: str) -> HostOutcome:
        for _ in range({"slow": 20, "quick": 1}[host]):
            await anyio.sleep(0)
        return HostOutcome(host=host, status="ok")

    assert [o.host for o in _all(["slow", "quick"], work, 2)] == ["quick", "slow"]


def test_many_outcomes_finished_at_once_are_all_kept_for_a_slow_consumer() -> None:
    # every host finishes before the consumer reads the first outcome: none may be lost
    async def work(host: str) -> HostOutcome:
        return HostOutcome(host=host, status="ok")

    async def go() -> list[str]:
        seen = []
        with anyio.fail_after(30):
            async for o in fan_out(HOSTS, work, len(HOSTS)):
                for _ in range(50):
                    await anyio.sleep(0)
                seen.append(o.host)
        return seen

    assert sorted(anyio.run(go)) == HOSTS


def test_what_work_raises_is_that_hosts_failed_outcome(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = iter([100.0, 102.25])
    monkeypatch.setattr(_fanout, "time", types.SimpleNamespace(perf_counter=lambda: next(clock)))

    async def work(host: str) -> HostOutcome:
        raise OSError(5, "Input/output error")

    [got] = _all(["gpu07"], work, 1)
    assert got == HostOutcome(host="gpu07", status="failed",
                              error="OSError: [Errno 5] Input/output error", wall_s=2.25)


def test_one_hosts_exception_leaves_the_others_answers() -> None:
    async def work(host: str) -> HostOutcome:
        await anyio.sleep(0)
        if host == "n03":
            raise KeyError("gpu")
        return HostOutcome(host=host, status="ok")

    got = {o.host: o for o in _all(HOSTS, work, 3)}
    assert set(got) == set(HOSTS)
    assert got["n03"].status == "failed" and got["n03"].error == "KeyError: 'gpu'"
    assert {o.status for h, o in got.items() if h != "n03"} == {"ok"}


def _all_but_quick_wait(cancelled: list[str]) -> Callable[[str], Awaitable[HostOutcome]]:
    """Work that answers at once for "quick" and waits an hour for every other host,
    noting the hosts it was cancelled on."""
    async def work(host: str) -> HostOutcome:
        if host != "quick":
            try:
                await anyio.sleep(3600)
            except anyio.get_cancelled_exc_class():
                cancelled.append(host)
                raise
        return HostOutcome(host=host, status="ok")
    return work


def test_a_consumer_that_stops_early_stops_the_hosts_still_running() -> None:
    cancelled: list[str] = []
    work = _all_but_quick_wait(cancelled)

    async def go() -> str:
        with anyio.fail_after(30):  # without the cancel, closing would wait an hour
            it = fan_out(["a", "quick", "b"], work, 3)
            first = await it.__anext__()
            await it.aclose()  # type: ignore[attr-defined]
        return first.host

    assert anyio.run(go) == "quick"
    assert sorted(cancelled) == ["a", "b"]


def test_a_deadline_around_the_iteration_stops_the_hosts_still_running() -> None:
    cancelled: list[str] = []
    work = _all_but_quick_wait(cancelled)

    async def go() -> list[str]:
        seen: list[str] = []
        with anyio.fail_after(30), anyio.move_on_after(0.2):
            async for o in fan_out(["a", "quick", "b"], work, 3):
                seen.append(o.host)
        return seen

    assert anyio.run(go) == ["quick"]
    assert sorted(cancelled) == ["a", "b"]
