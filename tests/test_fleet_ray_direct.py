"""The Ray transport's own logic, without a cluster: the run loop and the task it submits
against a stand-in for the ``ray`` module that keeps Ray's documented contracts
(``ray.nodes()`` lists dicts with ``NodeID`` and ``Alive``; ``ray.wait(refs, num_returns=,
timeout=)`` returns ``(ready, not_ready)`` after at most ``timeout`` seconds; ``ray.cancel(ref,
force=True)``; ``ray.get(ref, timeout=0)`` returns the value or raises the task's error), the
error mapping with Ray's real exception classes, attaching with the real ``ray.init``, and the
task's body (``_work``) running the real worker on a snapshot.

Expected from Ray's documentation and docs/fleet.md: one task per node, pinned with hard node
affinity (``NodeAffinitySchedulingStrategy(node_id, soft=False)``), one CPU, never retried; a
node that is not alive is unreachable and gets no task; a node that died or a worker that
crashed is unreachable, any other task error failed; the tasks still pending at
``--host-timeout`` are cancelled (force) and their nodes timed out.

These are the first tests of the ``fleet-ray`` mutation target: ``test_fleet_ray.py`` starts a
four-node cluster, a minute or more a mutant on the shared machine.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

ray = pytest.importorskip("ray")

from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy  # noqa: E402

from agentkit._fleet._names import InventoryError  # noqa: E402
from agentkit._fleet._outcome import Batch, HostOutcome  # noqa: E402
from agentkit._fleet._ray import RayTransport, _work  # noqa: E402
from agentkit._fleet._wire import parse_request, request  # noqa: E402
from benchmarks._fleet_hosts import write_host  # noqa: E402

REPLY = b'{"protocol":1,"agentkit":"t","error":"","results":[]}'
BATCH = Batch(question="q", tasks=[], root="/f/{host}")
N1, N2, N3, N4 = (f"{i:056x}" for i in (1, 2, 3, 4))  # node ids as Ray writes them (28 bytes)


class Ref:
    def __init__(self, host: str, data: bytes, opts: dict[str, Any]) -> None:
        self.host, self.data, self.opts = host, data, opts


class FakeRay:
    """``ray`` as the transport uses it; ``answers[node]`` is what its task returns (bytes)
    or raises (an exception); a node missing from ``answers`` never finishes."""

    exceptions = ray.exceptions

    def __init__(self, nodes: list[dict[str, Any]], answers: dict[str, Any]) -> None:
        self._nodes, self.answers = nodes, answers
        self.submitted: list[Ref] = []
        self.cancelled: list[tuple[str, bool]] = []
        self.timeouts: list[float] = []

    def nodes(self) -> list[dict[str, Any]]:
        return self._nodes

    def remote(self, fn: Callable[[bytes], bytes]) -> Any:
        fake = self
        assert fn is _work

        class Task:
            def options(self, **opts: Any) -> Any:
                class Bound:
                    def remote(self, data: bytes) -> Ref:
                        host = parse_request(data).root.rsplit("/", 1)[-1]
                        ref = Ref(host, data, opts)
                        fake.submitted.append(ref)
                        return ref
                return Bound()
        return Task()

    def wait(self, pending: list[Ref], *, num_returns: int, timeout: float) -> Any:
        # ray.wait's own checks (ray/_private/worker.py): unique refs, 0 < num_returns <= len
        assert len(set(map(id, pending))) == len(pending)
        if num_returns <= 0:
            raise ValueError(f"Invalid number of objects to return {num_returns}.")
        if num_returns > len(pending):
            raise ValueError("num_returns cannot be greater than the number of ray_waitables "
                             "provided to ray.wait.")
        self.timeouts.append(timeout)
        ready = [r for r in pending if r.host in self.answers][:num_returns]
        if not ready:
            time.sleep(timeout)
        return ready, [r for r in pending if r not in ready]

    def cancel(self, ref: Ref, *, force: bool = False) -> None:
        self.cancelled.append((ref.host, force))

    def get(self, ref: Ref, *, timeout: float) -> bytes:
        assert timeout == 0  # only called on a ready ref
        answer = self.answers[ref.host]
        if isinstance(answer, BaseException):
            raise answer
        return bytes(answer)


def microseconds(wall_s: float) -> bool:
    """A wall time as every transport records it: seconds to the microsecond."""
    return round(wall_s, 6) == wall_s and wall_s != round(wall_s)


def alive(*ids: str, dead: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    return ([{"NodeID": i, "Alive": True} for i in ids]
            + [{"NodeID": i, "Alive": False} for i in dead] + [{"NodeID": "x"}])


def run(t: RayTransport, fake: FakeRay, hosts: list[str]) -> list[HostOutcome]:
    t._ray = lambda: fake  # type: ignore[method-assign]

    async def go() -> list[HostOutcome]:
        with anyio.fail_after(30):
            return [o async for o in t.run(hosts, BATCH)]
    return anyio.run(go)


def test_settings() -> None:
    t = RayTransport()
    assert (t.address, t.host_timeout_s, t.root, t.name) == ("auto", 300.0, "/", "ray")
    t = RayTransport("10.0.0.1:6379", host_timeout_s=8, root="/f/{host}", remote_command="x")
    assert (t.address, t.host_timeout_s, t.root) == ("10.0.0.1:6379", 8, "/f/{host}")


def test_discover_lists_the_alive_nodes_sorted_and_checked() -> None:
    t = RayTransport()
    t._ray = lambda: FakeRay(alive("b2", "a1", dead=("c3",)), {})  # type: ignore[method-assign]
    assert anyio.run(t.discover) == ["a1", "b2"]
    t._ray = lambda: FakeRay(alive("-oProxyCommand=x"), {})  # type: ignore[method-assign]
    with pytest.raises(InventoryError):
        anyio.run(t.discover)


def test_one_pinned_task_per_alive_node_and_the_others_unreachable() -> None:
    fake = FakeRay(alive(N1, N2, dead=(N3,)), {N1: REPLY, N2: REPLY})
    got = run(RayTransport(host_timeout_s=5), fake, [N1, N2, N3, N4])
    assert sorted((o.host, o.status, o.error) for o in got) == [
        (N1, "ok", ""), (N2, "ok", ""),
        (N3, "unreachable", "not an alive node of the Ray cluster"),
        (N4, "unreachable", "not an alive node of the Ray cluster")]
    assert sorted(r.host for r in fake.submitted) == [N1, N2]
    for ref in fake.submitted:
        assert ref.data == request(BATCH, ref.host)
        strategy = ref.opts.pop("scheduling_strategy")
        assert isinstance(strategy, NodeAffinitySchedulingStrategy)
        assert (strategy.node_id, strategy.soft) == (ref.host, False)
        assert ref.opts == {"num_cpus": 1, "max_retries": 0}
    assert fake.cancelled == [] and all(0 < w <= 0.5 for w in fake.timeouts)
    assert all(0 < o.wall_s < 5 for o in got if o.status == "ok")


def test_tasks_pending_at_the_deadline_are_cancelled_and_timed_out() -> None:
    fake = FakeRay(alive(N1, N2, N3), {N1: REPLY})
    t0 = time.perf_counter()
    got = run(RayTransport(host_timeout_s=1.2), fake, [N1, N2, N3])
    assert time.perf_counter() - t0 >= 1.2
    late = sorted((o.host, o.status, o.error) for o in got if o.host != N1)
    assert late == [(h, "timed-out", "no reply within 1.2s (task cancelled)")
                    for h in (N2, N3)]
    assert sorted(fake.cancelled) == [(N2, True), (N3, True)]  # force: a frozen node
    assert all(1.2 <= o.wall_s < 10 and microseconds(o.wall_s) for o in got if o.host != N1)
    assert max(fake.timeouts) <= 0.5 and min(fake.timeouts) < 0.5  # the last wait: what is left


def test_a_run_cancelled_from_outside_cancels_its_tasks() -> None:
    fake = FakeRay(alive(N1, N2), {})
    t = RayTransport(host_timeout_s=60)
    t._ray = lambda: fake  # type: ignore[method-assign]

    async def go() -> None:
        with anyio.move_on_after(0.8):
            async for _ in t.run([N1, N2], BATCH):
                pass

    anyio.run(go)
    assert sorted(fake.cancelled) == [(N1, True), (N2, True)]


@pytest.mark.parametrize(("exc", "bucket"), [
    (ray.exceptions.NodeDiedError("node n1 died " + "y" * 400), "unreachable"),
    (ray.exceptions.WorkerCrashedError(), "unreachable"),
    (ray.exceptions.TaskUnschedulableError("no such node"), "unreachable"),
    (ray.exceptions.TaskCancelledError(), "failed"),
    (ray.exceptions.RaySystemError("x" * 500), "failed")])
def test_a_task_error_is_its_nodes_bucket(exc: Exception, bucket: str) -> None:
    fake = FakeRay(alive(N1), {N1: exc})
    [o] = run(RayTransport(host_timeout_s=5), fake, [N1])
    assert (o.host, o.status) == (N1, bucket)
    assert o.error == f"{type(exc).__name__}: {str(exc)[:300]}"
    assert 0 < o.wall_s < 5


def test_collect_reads_a_ready_reply_and_its_wall_time() -> None:
    fake = FakeRay([], {"n1": b"not json"})
    for _ in range(4):  # a seventh digit shows in all but one time in ten: four chances
        t0 = time.perf_counter() - 1.5
        o = RayTransport()._collect(fake, Ref("n1", b"", {}), "n1", t0)
        assert o.status == "failed" and "no worker reply (exit 0)" in o.error
        assert 1.5 <= o.wall_s < 5 and microseconds(o.wall_s)


def test_a_timed_out_nodes_wall_time_is_to_the_microsecond() -> None:
    for _ in range(3):
        [o] = run(RayTransport(host_timeout_s=0.2), FakeRay(alive(N1), {}), [N1])
        assert o.status == "timed-out" and 0.2 <= o.wall_s < 10 and microseconds(o.wall_s)


def test_work_runs_the_real_worker_on_the_node(tmp_path: Path) -> None:
    write_host(tmp_path, "n1")
    t = RayTransport(root=str(tmp_path / "{host}"))
    batch = Batch(question="q", tasks=[], root=t.root)
    reply = _work(request(batch, "n1"))
    assert reply.startswith(b'{"protocol":1,') and reply.endswith(b"\n")


def test_attaching_once_with_rays_own_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[dict[str, Any]] = []
    monkeypatch.setattr(ray, "is_initialized", lambda: bool(calls))
    monkeypatch.setattr(ray, "init", lambda **kw: calls.append(kw))
    t = RayTransport("10.0.0.1:6379")
    assert t._ray() is ray and t._ray() is ray
    assert calls == [{"address": "10.0.0.1:6379", "log_to_driver": False,
                      "logging_level": 40}]


@pytest.mark.parametrize("error", [ConnectionError, RuntimeError, ValueError])
def test_no_cluster_to_attach_to_is_an_inventory_error(
        monkeypatch: pytest.MonkeyPatch, error: type[Exception]) -> None:
    def init(**kw: Any) -> None:
        raise error("Could not find any running Ray instance.\n  Please specify " + "y" * 400)

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", init)
    with pytest.raises(InventoryError) as exc:
        RayTransport("10.0.0.1:6379")._ray()
    why = ("Could not find any running Ray instance. Please specify " + "y" * 400)[:300]
    assert str(exc.value) == (f"no Ray cluster to attach to at '10.0.0.1:6379' ({why}): "
                              "start one, or give its address (--ray HOST:6379)")
