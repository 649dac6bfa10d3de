"""How many pods a Kubernetes workload asks for, by kind, from the API reference (written
before running; kubernetes.io/docs/reference/kubernetes-api/workload-resources/):
- ReplicaSetSpec.replicas (apps/v1) and ReplicationControllerSpec.replicas (core v1): "the
  number of desired replicas ... a pointer to distinguish between explicit zero and
  unspecified. Defaults to 1." Both run ``spec.template`` (a PodTemplateSpec), like a
  Deployment (DeploymentSpec.replicas: "Defaults to 1") and a StatefulSet.
- DaemonSetSpec has no ``replicas``: a DaemonSet runs one pod on each node its node selector,
  affinity and tolerations admit, so whether it runs here is not established from the
  manifest; a ``replicas:`` written into one is no field of it (the API server drops or
  refuses it) and says nothing.
- ``replicas: 0``: declared, scaled to zero, not meant to run.
- ``nvidia.com/gpu`` in a container's limits is per pod: N replicas are N pods each with that
  many GPUs, placed by the scheduler (those on other nodes are not this host's).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .test_runtimes_k8s_direct import deployment, k8s

GPU_CONTAINER = """\
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.11.0
          args: ["--model", "/models/m", "--tensor-parallel-size", "8"]
          resources:
            limits:
              nvidia.com/gpu: 8
"""


def _rc(extra: str = "") -> str:
    return deployment("rc", extra, kind="ReplicationController").replace(
        "apiVersion: apps/v1", "apiVersion: v1")


@pytest.mark.parametrize(("kind", "extra", "enabled", "detail"), [
    ("ReplicaSet", "  replicas: 0\n", False, "replicas: 0"),
    ("ReplicaSet", "  replicas: 3\n", True, "replicas: 3"),
    ("ReplicaSet", "", True, "replicas: 1"),
    ("ReplicationController", "  replicas: 0\n", False, "replicas: 0"),
    ("ReplicationController", "  replicas: 2\n", True, "replicas: 2"),
    ("ReplicationController", "", True, "replicas: 1"),
    ("Deployment", "", True, "replicas: 1"),
])
def test_replicas_of_each_kind_with_its_default(tmp_path: Path, kind: str, extra: str,
                                                enabled: bool, detail: str) -> None:
    text = _rc(extra) if kind == "ReplicationController" else deployment("w", extra, kind=kind)
    _, _, servers = k8s(tmp_path, {"opt/k8s/w.yaml": text})
    name = f"{kind.lower()}/{'rc' if kind == 'ReplicationController' else 'w'}"
    assert list(servers) == [name]
    st = servers[name].state
    assert (st.enabled, st.enabled_detail.split(" (")[0]) == (enabled, detail)
    if extra:  # the replicas line is cited
        assert st.enabled_evidence


def test_a_daemonset_has_no_replicas_and_its_node_is_not_established(tmp_path: Path) -> None:
    text = deployment("ds", "  replicas: 4\n", kind="DaemonSet")
    _, _, servers = k8s(tmp_path, {"opt/k8s/ds.yaml": text})
    st = servers["daemonset/ds"].state
    assert st.enabled is None
    assert "replicas: 4" not in st.enabled_detail
    assert "each node" in st.enabled_detail and "not established" in st.enabled_detail


def test_gpus_are_per_pod_and_replicas_multiply_pods_not_this_host(tmp_path: Path) -> None:
    text = deployment("rs", "  replicas: 2\n", kind="ReplicaSet", containers=GPU_CONTAINER)
    _, _, servers = k8s(tmp_path, {"opt/k8s/rs.yaml": text})
    s = servers["replicaset/rs"]
    assert s.gpus.startswith("8 GPUs")
    said = " ".join(s.notes)
    assert "2 pods" in said and "8 GPUs each" in said
    assert "scheduler" in said
