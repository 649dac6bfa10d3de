"""The Ray transport (``agentkit[ray]``): attach to the cluster that serves vLLM and run one
task per node, pinned to the node by its id with hard affinity (a label or a custom resource
could leave a task waiting forever for a node that has gone). Each task takes one CPU, so Ray
starts at most one worker per node for it (zero CPUs would let it start workers without
bound). agentkit owns the deadline: a frozen node does not fail by itself, so the tasks still
pending at the deadline are cancelled and their nodes are timed out.
"""

from __future__ import annotations

import functools
import time
from collections.abc import AsyncIterator, Sequence
from typing import Any

import anyio

from ._names import InventoryError, check_name
from ._outcome import Batch, HostOutcome
from ._wire import outcome, request


def _work(data: bytes) -> bytes:
    """Runs on the node, in a Ray worker: agentkit's worker, in process."""
    from .worker import serve

    return anyio.run(serve, data)


class RayTransport:
    """The alive nodes of the Ray cluster at ``address`` (``auto``: the one this machine
    belongs to); a host is a node id.

    >>> RayTransport("auto", host_timeout_s=60).host_timeout_s
    60
    """

    name = "ray"

    def __init__(self, address: str = "auto", *, host_timeout_s: float = 300.0,
                 root: str = "/", remote_command: str | None = None) -> None:
        self.address = address
        self.host_timeout_s = host_timeout_s
        self.root = root  # remote_command is not used: the worker runs inside a Ray task

    def _ray(self) -> Any:
        import ray

        if not ray.is_initialized():  # attach once; an embedder's own ray.init is kept
            try:
                # ERROR: attached from a worker thread, Ray warns that it set no SIGTERM
                # handler there, which is as it should be (the library leaves signals alone)
                ray.init(address=self.address, log_to_driver=False, logging_level=40)
            except (ConnectionError, RuntimeError, ValueError) as exc:
                why = " ".join(str(exc).split())[:300]
                raise InventoryError(f"no Ray cluster to attach to at {self.address!r} "
                                     f"({why}): start one, or give its address "
                                     "(--ray HOST:6379)") from None
        return ray

    def _alive(self) -> list[str]:
        return [n["NodeID"] for n in self._ray().nodes() if n.get("Alive")]

    async def discover(self) -> list[str]:
        return [check_name(n) for n in sorted(await anyio.to_thread.run_sync(self._alive))]

    async def run(self, hosts: Sequence[str], batch: Batch) -> AsyncIterator[HostOutcome]:
        ray = self._ray()
        alive = set(await anyio.to_thread.run_sync(self._alive))
        for h in hosts:
            if h not in alive:
                yield HostOutcome(host=h, status="unreachable", error="not an alive node of "
                                  "the Ray cluster")
        refs = {self._submit(ray, h, batch): h for h in hosts if h in alive}
        t0 = time.perf_counter()
        pending = list(refs)
        try:
            while pending:
                left = self.host_timeout_s - (time.perf_counter() - t0)
                if left <= 0:
                    break
                ready, pending = await anyio.to_thread.run_sync(
                    functools.partial(ray.wait, pending, num_returns=1, timeout=min(left, 0.5)))
                for ref in ready:
                    yield self._collect(ray, ref, refs[ref], t0)
        finally:
            for ref in pending:  # past the deadline, or the run was cancelled
                ray.cancel(ref, force=True)
        wall = round(time.perf_counter() - t0, 6)
        for ref in pending:
            yield HostOutcome(host=refs[ref], status="timed-out", wall_s=wall,
                              error=f"no reply within {self.host_timeout_s:g}s (task cancelled)")

    def _submit(self, ray: Any, host: str, batch: Batch) -> Any:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        task = ray.remote(_work).options(
            num_cpus=1, max_retries=0,
            scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=host, soft=False))
        return task.remote(request(batch, host))

    def _collect(self, ray: Any, ref: Any, host: str, t0: float) -> HostOutcome:
        wall = round(time.perf_counter() - t0, 6)
        try:
            data = ray.get(ref, timeout=0)
        except (ray.exceptions.NodeDiedError, ray.exceptions.TaskUnschedulableError,
                ray.exceptions.WorkerCrashedError) as exc:
            return HostOutcome(host=host, status="unreachable", wall_s=wall,
                               error=f"{type(exc).__name__}: {str(exc)[:300]}")
        except ray.exceptions.RayError as exc:
            return HostOutcome(host=host, status="failed", wall_s=wall,
                               error=f"{type(exc).__name__}: {str(exc)[:300]}")
        return outcome(host, data, b"", 0, wall)
