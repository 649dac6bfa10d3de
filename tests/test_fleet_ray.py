"""The Ray transport on a real local cluster (``ray.cluster_utils.Cluster``: a head and three
nodes; issue 14, tier 2). Ray's semantics: a task with hard node affinity runs on that node or
not at all; a removed node is not alive; a stopped raylet does not fail its tasks, they wait,
so only agentkit's deadline ends them."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import anyio
import pytest

ray = pytest.importorskip("ray")

from agentkit import Orchestrator  # noqa: E402
from agentkit._fleet._ray import RayTransport  # noqa: E402
from benchmarks._fleet_hosts import write_host  # noqa: E402

from .conftest import REPO  # noqa: E402

pytestmark = pytest.mark.ray


def test_one_task_per_node_removed_unreachable_frozen_timed_out(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ray.cluster_utils import Cluster

    monkeypatch.setenv("PYTHONPATH", str(REPO))  # the workers import this checkout
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    nodes = [cluster.add_node(num_cpus=1) for _ in range(3)]
    stopped = None
    try:
        ray.init(address=cluster.address, log_to_driver=False)
        cluster.wait_for_nodes()
        t = RayTransport(cluster.address, host_timeout_s=8, root=str(tmp_path / "{host}"))
        ids = anyio.run(t.discover)
        assert len(ids) == 4 and len(set(ids)) == 4
        for i in ids:
            write_host(tmp_path, i)
        answer = anyio.run(lambda: Orchestrator.fleet(t, hosts=ids).investigate(
            "q", tasks=["gpu-inventory"]))
        assert answer.fleet is not None and answer.fleet.counts["ok"] == 4
        removed, frozen = nodes[0], nodes[1]
        removed_id, frozen_id = removed.node_id, frozen.node_id
        cluster.remove_node(removed)
        stopped = frozen.all_processes["raylet"][0].process.pid
        os.kill(stopped, signal.SIGSTOP)
        answer = anyio.run(lambda: Orchestrator.fleet(t, hosts=ids).investigate(
            "q", tasks=["gpu-inventory"]))
        assert answer.fleet is not None
        assert answer.fleet.counts["unreachable"] == 1 and answer.fleet.counts["timed-out"] == 1
        assert answer.fleet.buckets["unreachable"] == removed_id
        assert answer.fleet.buckets["timed-out"] == frozen_id
        assert answer.fleet.counts["ok"] == 2
    finally:
        if stopped is not None:
            os.kill(stopped, signal.SIGCONT)
        ray.shutdown()
        cluster.shutdown()
