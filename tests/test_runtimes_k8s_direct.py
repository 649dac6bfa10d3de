"""The Kubernetes runtime (``_hostmodel/runtimes/_kubernetes.py``) called directly on small
snapshots. Expected values from the Kubernetes API reference, written before running:
- pod templates: Deployment/StatefulSet/DaemonSet/ReplicaSet/Job ``spec.template.spec``,
  CronJob ``spec.jobTemplate.spec.template.spec``, a Pod its own ``spec``; LeaderWorkerSet
  (leaderworkerset.x-k8s.io) ``spec.leaderWorkerTemplate.{leader,worker}Template``;
  ``replicas`` of a Deployment or StatefulSet defaults to 1; ``kind: List`` (and typed
  ``…List`` exports) hold objects in ``items``; ``metadata.namespace`` defaults to
  ``default``;
- a container without ``command`` runs its image's ENTRYPOINT with ``args``; ``$(VAR)`` in
  command and args expands from the container's environment, ``$$`` escapes;
- ``resources.limits["nvidia.com/gpu"]``; ``hostPath`` volumes mounted at ``mountPath``;
- Pod status: ``containerStatuses[].state`` is one of running / waiting (with ``reason``,
  e.g. CrashLoopBackOff) / terminated (with ``exitCode``), and ``restartCount``;
- ``spec.nodeName`` is the node a pod runs on.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentkit._hostmodel._model import HostModel, Server
from agentkit._hostmodel.runtimes import _kubernetes

from .runtimes_snap import cited, discover, snapshot

CONTAINER = """\
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.11.0
          args: ["--model", "/models/m"]
"""


def deployment(name: str, extra: str = "", kind: str = "Deployment",
               containers: str = CONTAINER) -> str:
    return (f"apiVersion: apps/v1\nkind: {kind}\nmetadata:\n  name: {name}\n"
            f"spec:\n{extra}  template:\n    spec:\n{containers}")


def k8s(tmp_path: Path, files: dict[str, str],
        commands: list[tuple[list[str], str, int]] | None = None
        ) -> tuple[Any, HostModel, dict[str, Server]]:
    return discover(_kubernetes, snapshot(tmp_path, files, commands))


def test_each_workload_kind_finds_its_pod_template(tmp_path: Path) -> None:
    cron = ("apiVersion: batch/v1\nkind: CronJob\nmetadata:\n  name: nightly\nspec:\n"
            "  schedule: '@daily'\n  jobTemplate:\n    spec:\n      template:\n        spec:\n"
            + CONTAINER.replace("      ", "          ", 1).replace("\n        ", "\n            "))
    pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: solo\nspec:\n" + \
        CONTAINER.replace("      containers", "  containers").replace("\n        ", "\n    ")
    lws = ("apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata:\n"
           "  name: big\nspec:\n  replicas: 2\n  leaderWorkerTemplate:\n    leaderTemplate:\n"
           "      spec:\n        containers:\n          - name: leader\n"
           "            image: vllm/vllm-openai:v0.11.0\n"
           "    workerTemplate:\n      spec:\n        containers:\n          - name: worker\n"
           "            image: vllm/vllm-openai:v0.11.0\n")
    docs = [deployment("d"), deployment("s", kind="StatefulSet"),
            deployment("ds", kind="DaemonSet"), deployment("rs", kind="ReplicaSet"),
            deployment("j", kind="Job"), cron, pod, lws,
            "apiVersion: v1\nkind: Service\nmetadata:\n  name: vllm\nspec:\n  ports: []\n"]
    _, _, servers = k8s(tmp_path, {"opt/k8s/all.yaml": "---\n".join(docs)})
    assert sorted(servers) == ["cronjob/nightly", "daemonset/ds", "deployment/d", "job/j",
                               "leaderworkerset/big", "pod/solo", "replicaset/rs",
                               "statefulset/s"]
    d = servers["deployment/d"]
    assert (d.runtime, d.path, d.files) == ("kubernetes", "/opt/k8s/all.yaml",
                                            ["/opt/k8s/all.yaml"])
    assert d.argv == ["vllm", "serve", "--model", "/models/m"]
    assert d.argv_line == 11  # the args line
    assert "namespace default" in d.notes
    assert any("both run vLLM's OpenAI server" in n for n in d.notes)
    assert (d.state.enabled, d.state.enabled_detail) == (True, "replicas: 1")
    assert servers["statefulset/s"].state.enabled_detail == "replicas: 1"
    assert servers["daemonset/ds"].state.enabled is None
    assert servers["leaderworkerset/big"].state.enabled_detail == "replicas: 2"


def test_two_containers_are_named_apart(tmp_path: Path) -> None:
    two = CONTAINER + ("        - name: sidecar\n          image: lmcache/vllm-openai:1\n"
                       "          command: [\"python3\", \"-m\", \"vllm.entrypoints.openai."
                       "api_server\"]\n")
    _, _, servers = k8s(tmp_path, {"opt/k8s/d.yaml": deployment("d", containers=two)})
    assert sorted(servers) == ["deployment/d:sidecar", "deployment/d:vllm"]
    assert servers["deployment/d:sidecar"].argv == [
        "python3", "-m", "vllm.entrypoints.openai.api_server"]
    assert servers["deployment/d:sidecar"].argv_line == 14  # command, no args


@pytest.mark.parametrize(("replicas", "enabled"), [("0", False), ("3", True)])
def test_replicas_say_whether_it_is_meant_to_run(tmp_path: Path, replicas: str,
                                                 enabled: bool) -> None:
    ctx, _, servers = k8s(tmp_path, {"opt/k8s/d.yaml":
                                     deployment("d", f"  replicas: {replicas}\n")})
    st = servers["deployment/d"].state
    assert (st.value, st.enabled, st.enabled_detail) == ("unknown", enabled,
                                                         f"replicas: {replicas}")
    assert st.detail == "declared in a manifest; whether it runs is not shown here"
    assert cited(ctx, st.enabled_evidence[0]) == ("/opt/k8s/d.yaml:6", f"replicas: {replicas}")


def test_a_list_is_flattened(tmp_path: Path) -> None:
    items = {"apiVersion": "v1", "kind": "DeploymentList", "items": [
        {"kind": "Deployment", "metadata": {"name": "a", "namespace": "ml"},
         "spec": {"template": {"spec": {"containers": [
             {"name": "c", "image": "x", "command": ["vllm", "serve", "/m"]}]}}}}, "junk"]}
    _, _, servers = k8s(tmp_path, {"opt/k8s/list.yaml": "kind: List\n---\n"
                                   + json.dumps(items)})
    assert list(servers) == ["deployment/a"]
    assert "namespace ml" in servers["deployment/a"].notes


def test_only_engine_like_containers_are_read(tmp_path: Path) -> None:
    plain = CONTAINER.replace("vllm/vllm-openai:v0.11.0", "nginx:1").replace(
        '["--model", "/models/m"]', '["-g", "daemon off;"]')
    script = CONTAINER.replace('args: ["--model", "/models/m"]', 'command: ["/start.sh"]')
    _, _, servers = k8s(tmp_path, {"opt/k8s/a.yaml": deployment("web", containers=plain),
                                   "opt/k8s/b.yaml": deployment("s", containers=script)})
    assert "deployment/web" not in servers
    assert "deployment/s" not in servers  # a start script the host does not hold: no engine


def test_environment_expansion_gpus_mounts_and_selector(tmp_path: Path) -> None:
    c = """\
      nodeSelector:
        nvidia.com/gpu.product: H100
      containers:
        - name: vllm
          image: my/own:1
          command: ["vllm", "serve"]
          args: ["$(MODEL)", "-tp", "$(TP)", "--x", "$$(TP)", "$(NOPE)"]
          env:
            - name: TP
              value: "4"
            - name: MODEL
              value: /models/$(TP)
          resources:
            limits: {nvidia.com/gpu: 4, memory: 1Gi}
          volumeMounts:
            - {name: models, mountPath: /models}
            - {name: scratch, mountPath: /tmp}
      volumes:
        - name: models
          hostPath: {path: /data/models}
        - name: scratch
          emptyDir: {}
"""
    ctx, _, servers = k8s(tmp_path, {"opt/k8s/d.yaml": deployment("d", containers=c)})
    s = servers["deployment/d"]
    assert s.argv == ["vllm", "serve", "/models/4", "-tp", "4", "--x", "$(TP)", "$(NOPE)"]
    assert (s.env["TP"].value, s.env["TP"].line, s.env["TP"].origin) == (
        "4", 16, "container env")
    # the item's name and the value below it
    assert cited(ctx, s.env["TP"].evidence[0]) == ("/opt/k8s/d.yaml:16-17",
                                                   '- name: TP\nvalue: "4"')
    assert s.gpus == "4 GPUs (nvidia.com/gpu limit)"
    assert s.mounts == {"/data/models": "/models"}
    assert "nodeSelector nvidia.com/gpu.product=H100" in s.notes


def test_configmaps_in_the_same_namespace(tmp_path: Path) -> None:
    cms = ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: nccl\n  namespace: ml\n"
           "data:\n  NCCL_PROTO: Simple\n  NCCL_ALGO: Tree\n---\n"
           "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: nccl\ndata:\n"
           "  NCCL_PROTO: WRONG\n")
    c = CONTAINER + """\
          envFrom:
            - configMapRef: {name: nccl}
          env:
            - name: NCCL_IB_HCA
              valueFrom:
                configMapKeyRef: {name: nccl, key: NCCL_ALGO}
            - name: NCCL_P2P_LEVEL
              valueFrom:
                configMapKeyRef: {name: nccl, key: MISSING}
"""
    dep = deployment("d", containers=c).replace("  name: d\n", "  name: d\n  namespace: ml\n")
    ctx, _, servers = k8s(tmp_path, {"opt/k8s/cm.yaml": cms, "opt/k8s/d.yaml": dep})
    s = servers["deployment/d"]
    got = {k: (v.value, v.source, v.line, v.origin) for k, v in s.env.items()}
    assert got == {
        "NCCL_PROTO": ("Simple", "/opt/k8s/cm.yaml", 7, "ConfigMap nccl (envFrom)"),
        "NCCL_ALGO": ("Tree", "/opt/k8s/cm.yaml", 8, "ConfigMap nccl (envFrom)"),
        "NCCL_IB_HCA": ("Tree", "/opt/k8s/cm.yaml", 8, "ConfigMap nccl key NCCL_ALGO")}
    assert cited(ctx, s.env["NCCL_PROTO"].evidence[0]) == ("/opt/k8s/cm.yaml:7",
                                                           "NCCL_PROTO: Simple")
    # a key the ConfigMap lacks: the pod does not start (CreateContainerConfigError)
    assert any("NCCL_P2P_LEVEL" in p for p in s.problems)
    assert not any("NCCL_" in n for n in s.notes)


POD_STATUS = """\
status:
  phase: {phase}
  containerStatuses:
    - name: other
      restartCount: 9
      state: {{running: {{}}}}
    - name: vllm
      restartCount: {restarts}
      state: {state}
"""


@pytest.mark.parametrize(("state", "restarts", "value", "detail"), [
    ("{running: {startedAt: x}}", 0, "running", "pod phase Running, container running"),
    ("{waiting: {reason: CrashLoopBackOff}}", 1, "crash-looping",
     "pod phase Running, container waiting (CrashLoopBackOff), 1 restarts"),
    ("{waiting: {reason: ContainerCreating}}", 2, "crash-looping",
     "pod phase Running, container waiting (ContainerCreating), 2 restarts"),
    ("{waiting: {reason: ContainerCreating}}", 1, "unknown",
     "pod phase Running, container waiting (ContainerCreating), 1 restarts"),
    ("{terminated: {exitCode: 137}}", 0, "failed", "pod phase Running, container terminated"),
    ("{terminated: {exitCode: 0}}", 0, "stopped", "pod phase Running, container terminated"),
])
def test_a_pods_container_status(tmp_path: Path, state: str, restarts: int, value: str,
                                 detail: str) -> None:
    pod = ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  nodeName: gpu-07\n"
           + CONTAINER.replace("      containers", "  containers").replace("\n        ",
                                                                           "\n    ")
           + POD_STATUS.format(phase="Running", restarts=restarts, state=state))
    ctx, _, servers = k8s(tmp_path, {"etc/hostname": "gpu-07\n", "opt/k8s/p.yaml": pod})
    st = servers["pod/p"].state
    assert (st.value, st.detail, st.restarts) == (value, detail, restarts)
    assert (st.enabled, st.enabled_detail) == (True, "a pod the cluster runs")
    # cited at the container's state, the line that carries it (issue 25, item 7)
    assert cited(ctx, st.evidence[0]) == ("/opt/k8s/p.yaml:19", f"state: {state}")


def _pod(name: str, node: str | None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "vllm/vllm-openai:v1",
                                            "args": ["--model", f"/models/{name}"]}]}
    if node is not None:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "ml"},
            "spec": spec}


GET = ["kubectl", "--kubeconfig=/etc/kubernetes/admin.conf", "get", "pods,configmaps", "-A",
       "-o", "json"]


def test_kubectl_pods_on_this_node_only(tmp_path: Path) -> None:
    listing = {"apiVersion": "v1", "kind": "List", "items": [
        _pod("here", "gpu-07"), _pod("there", "gpu-08"), _pod("pending", None)]}
    _, model, servers = k8s(tmp_path, {"etc/hostname": "gpu-07\n",
                                         "etc/kubernetes/admin.conf": "x"},
                              [(GET, json.dumps(listing, indent=1), 0)])
    assert sorted(servers) == ["pod/here", "pod/pending"]
    assert servers["pod/here"].path == "kubectl get pods (/etc/kubernetes/admin.conf)"
    assert "1 pods run on other nodes than gpu-07 and are not this host's servers" in \
        model.problems
    assert f"`{' '.join(GET)}`" in model.looked_in


def test_without_a_host_name_every_pod_counts(tmp_path: Path) -> None:
    listing = {"kind": "PodList", "items": [_pod("a", "n1"), _pod("b", "n2")]}
    _, model, servers = k8s(tmp_path, {"etc/kubernetes/admin.conf": "x"},
                            [(GET, json.dumps(listing), 0)])
    assert sorted(servers) == ["pod/a", "pod/b"]
    assert ("this host's name (/etc/hostname) could not be read: pods on every node are "
            "counted") in model.problems


def test_kubectl_failures_are_said(tmp_path: Path) -> None:
    k3s = ["kubectl", "--kubeconfig=/etc/rancher/k3s/k3s.yaml", "get", "pods,configmaps",
           "-A", "-o", "json"]
    _, model, servers = k8s(tmp_path, {"etc/kubernetes/admin.conf": "x",
                                       "etc/rancher/k3s/k3s.yaml": "x"},
                            [(GET, "", 1)])
    assert servers == {}
    assert ("more than one kubeconfig (/etc/kubernetes/admin.conf, /etc/rancher/k3s/k3s.yaml):"
            " reading the cluster through each") in model.problems
    assert any(p.startswith("`kubectl get` with /etc/kubernetes/admin.conf failed")
               for p in model.problems)
    assert ("`kubectl get` with /etc/rancher/k3s/k3s.yaml failed or was not run (kubectl is "
            "never run on a live host; pods come from manifests there)") in model.problems
    assert f"`{' '.join(k3s)}`" in model.looked_in


def test_a_kustomization_is_read_from_kustomize_output(tmp_path: Path) -> None:
    built = deployment("prod-d").replace("metadata:\n", "metadata:\n  namespace: ml\n")
    ctx, model, servers = k8s(tmp_path, {
        "srv/app/kustomization.yaml": "resources:\n  - d.yaml\nnamePrefix: prod-\n",
        "srv/app/d.yaml": deployment("d")},
        [(["kubectl", "kustomize", "/srv/app"], built, 0)])
    assert list(servers) == ["deployment/prod-d"]
    s = servers["deployment/prod-d"]
    assert s.path == "kubectl kustomize /srv/app"
    assert cited(ctx, s.argv_evidence[0])[1] == 'args: ["--model", "/models/m"]'
    assert "`kubectl kustomize /srv/app`" in model.looked_in


def test_a_kustomization_kubectl_cannot_build_is_said(tmp_path: Path) -> None:
    _, model, servers = k8s(tmp_path, {
        "srv/app/kustomization.yaml": "resources:\n  - d.yaml\n",
        "srv/app/d.yaml": deployment("d")},
        [(["kubectl", "kustomize", "/srv/app"], "", 1)])
    assert servers == {}
    assert any(p.startswith("/srv/app holds a kustomization whose output could not be built (")
               and p.endswith("): the workloads it declares (after its patches, name prefixes "
                              "and generated ConfigMaps) are not established")
               for p in model.problems)


def test_a_helm_template_is_named_not_read(tmp_path: Path) -> None:
    _, model, servers = k8s(tmp_path, {"opt/chart/templates/d.yaml": deployment(
        "{{ .Release.Name }}")})
    assert servers == {}
    assert ("/opt/chart/templates/d.yaml is a Helm chart template, not rendered here: the "
            "workload it declares is not established") in model.problems


def test_objects_without_metadata_or_kind_are_read_without_failing(tmp_path: Path) -> None:
    _, _, servers = k8s(tmp_path, {"opt/k8s/a.yaml": (
        "kind: ConfigMap\ndata: {A: b}\n---\nitems: []\n---\n" + deployment("d"))})
    assert list(servers) == ["deployment/d"]


def test_the_argv_citation_and_its_source(tmp_path: Path) -> None:
    ctx, _, servers = k8s(tmp_path, {"opt/k8s/d.yaml": deployment("d")})  # args: last line
    s = servers["deployment/d"]
    assert (s.argv_source, s.argv_line) == ("/opt/k8s/d.yaml", 11)
    assert cited(ctx, s.argv_evidence[0]) == ("/opt/k8s/d.yaml:11",
                                              'args: ["--model", "/models/m"]')
    assert s.state.enabled_evidence == []  # replicas not written: the default, nothing cited


def test_a_container_with_neither_command_nor_args_cites_itself(tmp_path: Path) -> None:
    c = "      containers:\n        - name: vllm\n          image: vllm/vllm-openai:v1\n"
    _, _, servers = k8s(tmp_path, {"opt/k8s/d.yaml": deployment("d", containers=c)})
    s = servers["deployment/d"]
    assert (s.argv, s.argv_line) == (["vllm", "serve"], 9)


def test_two_kustomizations_and_a_plain_file_after_them(tmp_path: Path) -> None:
    _, _, servers = k8s(tmp_path, {
        "opt/a-app/kustomization.yaml": "resources:\n  - d.yaml\n",
        "opt/a-app/d.yaml": deployment("a"),
        "opt/b-app/kustomization.yaml": "resources:\n  - d.yaml\n",
        "opt/b-app/d.yaml": deployment("b"),
        "opt/z/plain.yaml": deployment("z")})
    assert sorted(servers) == ["deployment/a", "deployment/b", "deployment/z"]
    assert servers["deployment/a"].path == "kubectl kustomize /opt/a-app"


@pytest.mark.skipif(__import__("shutil").which("kubectl") is None,
                    reason="kubectl is not installed: kustomize's own error cannot be read")
def test_kustomizes_own_error_is_named(tmp_path: Path) -> None:
    _, model, _ = k8s(tmp_path, {"srv/app/kustomization.yaml": "resources:\n  - gone.yaml\n"})
    said = [p for p in model.problems if p.startswith("/srv/app holds a kustomization")]
    assert len(said) == 1 and "gone.yaml" in said[0]


def test_helm_templates_with_and_without_directives(tmp_path: Path) -> None:
    """Helm renders every file under templates/: one without {{ }} is output as it is, so it
    is read; one with directives is not rendered here. Outside a chart, {{ in a value (a chat
    template) is just text."""
    chat = CONTAINER.replace('["--model", "/models/m"]',
                             '["--model", "/m", "--chat-template", "{{ messages }}"]')
    _, model, servers = k8s(tmp_path, {
        "opt/chart/templates/a.yaml": deployment("{{ .Release.Name }}"),
        "opt/chart/templates/static.yaml": deployment("static"),
        "opt/k8s/chat.yaml": deployment("chat", containers=chat)})
    assert sorted(servers) == ["deployment/chat", "deployment/static"]
    assert [p for p in model.problems if "Helm" in p] == [
        "/opt/chart/templates/a.yaml is a Helm chart template, not rendered here: the workload "
        "it declares is not established"]


def test_one_kubeconfig_is_no_problem_and_two_are_both_read(tmp_path: Path) -> None:
    one = {"kind": "List", "items": [_pod("a", None)]}
    _, model, _ = k8s(tmp_path / "one", {"etc/kubernetes/admin.conf": "x",
                                         "etc/hostname": "gpu-07\n"},
                      [(GET, json.dumps(one), 0)])
    assert model.problems == []
    k3s = ["kubectl", "--kubeconfig=/etc/rancher/k3s/k3s.yaml", "get", "pods,configmaps",
           "-A", "-o", "json"]
    _, _, servers = k8s(tmp_path / "two", {"etc/kubernetes/admin.conf": "x",
                                           "etc/rancher/k3s/k3s.yaml": "x"},
                        [(GET, json.dumps(one), 0),
                         (k3s, json.dumps({"kind": "List", "items": [_pod("b", None)]}), 0)])
    assert sorted(servers) == ["pod/a", "pod/b"]


def test_a_leader_worker_set_runs_both_templates(tmp_path: Path) -> None:
    from .runtimes_snap import discover as run
    lws = ("apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata:\n"
           "  name: big\nspec:\n  leaderWorkerTemplate:\n    leaderTemplate:\n"
           "      spec:\n        containers:\n          - name: leader\n"
           "            image: vllm/vllm-openai:v1\n            args: [\"/models/leader\"]\n"
           "    workerTemplate:\n      spec:\n        containers:\n          - name: worker\n"
           "            image: vllm/vllm-openai:v1\n            args: [\"/models/worker\"]\n")
    host = snapshot(tmp_path, {"opt/k8s/lws.yaml": lws})
    import anyio

    from agentkit._hostmodel._model import HostModel as Model
    ctx, _, _ = run(_kubernetes, host)
    got = anyio.run(_kubernetes.discover, ctx, Model())
    assert [s.argv[-1] for s in got] == ["/models/leader", "/models/worker"]
    # LeaderWorkerSet's replicas default to 1 (leaderworkerset.x-k8s.io API)
    assert {s.state.enabled_detail for s in got} == {"replicas: 1"}


def test_replicas_that_are_not_a_number_are_not_established(tmp_path: Path) -> None:
    _, _, servers = k8s(tmp_path, {
        "opt/k8s/d.yaml": deployment("d", "  replicas: \"2\"\n"),
        "opt/k8s/l.yaml": ("kind: LeaderWorkerSet\nmetadata:\n  name: l\nspec:\n"
                           "  replicas: many\n  leaderWorkerTemplate:\n    leaderTemplate:\n"
                           "      spec:\n        containers:\n          - name: c\n"
                           "            image: vllm/vllm-openai:v1\n")})
    assert servers["deployment/d"].state.enabled is None
    assert servers["leaderworkerset/l"].state.enabled is None


def test_a_deployment_with_a_status_block_is_still_read_as_declared(tmp_path: Path) -> None:
    _, _, servers = k8s(tmp_path, {"opt/k8s/d.yaml": deployment("d", "  replicas: 0\n")
                                   + "status:\n  replicas: 1\n"})
    st = servers["deployment/d"].state
    assert (st.value, st.enabled, st.enabled_detail) == ("unknown", False, "replicas: 0")


def test_a_pod_without_a_status_for_its_container(tmp_path: Path) -> None:
    pod = ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n"
           + CONTAINER.replace("      containers", "  containers").replace("\n        ",
                                                                           "\n    ")
           + "status:\n  phase: Pending\n")
    st = k8s(tmp_path, {"opt/k8s/p.yaml": pod})[2]["pod/p"].state
    assert (st.value, st.detail) == ("unknown", "pod phase Pending, container unknown")


def test_settings_name_their_source_and_selectors_join(tmp_path: Path) -> None:
    c = """\
      nodeSelector:
        a: "1"
        b: "2"
      containers:
        - name: vllm
          image: vllm/vllm-openai:v1
          envFrom:
            - configMapRef: {name: absent}
          env:
            - name: TP
              value: "4"
"""
    _, _, servers = k8s(tmp_path, {"opt/k8s/d.yaml": deployment("d", containers=c)})
    s = servers["deployment/d"]
    assert (s.env["TP"].name, s.env["TP"].source) == ("TP", "/opt/k8s/d.yaml")
    assert "nodeSelector a=1, b=2" in s.notes


def test_a_start_script_on_a_host_path_is_followed(tmp_path: Path) -> None:
    c = """\
      containers:
        - name: app
          image: busybox
          command: ["/bin/sh", "/scripts/start.sh"]
          volumeMounts:
            - {name: s, mountPath: /scripts}
      volumes:
        - name: s
          hostPath: {path: /opt/scripts}
"""
    _, _, servers = k8s(tmp_path, {
        "opt/k8s/d.yaml": deployment("d", containers=c),
        "opt/scripts/start.sh": "#!/bin/sh\nexec vllm serve /models/s\n"})
    assert servers["deployment/d"].script == "/scripts/start.sh"
