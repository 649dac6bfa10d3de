"""Kubernetes: workloads whose containers start an inference engine, from manifests on the
host (Deployment, StatefulSet, DaemonSet, ReplicaSet, ReplicationController, Job, Pod, rendered
Helm output, ``kind: List``) and from ``kubectl get … -o json`` when a kubeconfig is present.

The container's environment is built as the kubelet builds it: ``envFrom`` sources in order
(a later one wins), then ``env`` entries (they win over ``envFrom``; a later entry wins), with
``valueFrom.configMapKeyRef`` resolved from a ConfigMap in the same namespace where the
manifests hold it, and ``$(VAR)`` references expanded from variables defined before.
Secrets are never read: such a value is named, not shown.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._command import follow_command
from .._model import HostModel, Server, Setting
from .._state import State
from ._entrypoint import with_entrypoint
from ._given import manifest_dirs
from ._k8senv import container_env, expand
from ._manifests import find_manifests
from ._yaml import load_yaml

if TYPE_CHECKING:
    from ..._sandbox._context import RecipeContext

KUBECONFIGS = ("/etc/kubernetes/admin.conf", "/etc/rancher/k3s/k3s.yaml", "/root/.kube/config")
_ENGINE_WORDS = re.compile(r"vllm|sglang|trtllm|tensorrt", re.I)
_TEMPLATE_KINDS = {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet",
                   "ReplicationController", "Job"}
# The kinds whose spec has `replicas` (the API reference: "Defaults to 1"); a DaemonSet has
# none (one pod per node it admits), a Job counts parallelism, not replicas
_REPLICATED = ("Deployment", "StatefulSet", "ReplicaSet", "ReplicationController")


@dataclass
class Source:
    """Where manifests came from: a file (cited by line) or a kubectl output."""

    name: str
    cite: Any  # (line) -> evidence id


def load_documents(text: str) -> list[dict[str, Any]]:
    """The objects in a manifest text (multi-document YAML or JSON; ``List`` flattened)."""
    out: list[dict[str, Any]] = []
    for doc in load_yaml(text):
        if isinstance(doc, dict):
            out += [i for i in doc.get("items") or [] if isinstance(i, dict)] \
                if str(doc.get("kind", "")).endswith("List") else [doc]
    return out


async def discover(ctx: RecipeContext, model: HostModel) -> list[Server]:
    objects: list[tuple[dict[str, Any], Source]] = []
    objects += await _from_files(ctx, model)
    objects += await _on_this_node(ctx, model, await _from_kubectl(ctx, model))
    configmaps = {(_ns(o), o.get("metadata", {}).get("name")): (o, src) for o, src in objects
                  if o.get("kind") == "ConfigMap"}
    servers: list[Server] = []
    for obj, src in objects:
        for spec, replicas in _pod_specs(obj):
            for c in [c for c in spec.get("containers") or [] if isinstance(c, dict)]:
                server = await _server(ctx, obj, spec, c, replicas, src, configmaps)
                if server is not None:
                    servers.append(server)
    return servers


async def _from_files(ctx: RecipeContext, model: HostModel
                      ) -> list[tuple[dict[str, Any], Source]]:
    found = await find_manifests(ctx, model, manifest_dirs(ctx))
    out: list[tuple[dict[str, Any], Source]] = []
    for d in found.kustomize_roots:
        out += await _kustomized(ctx, model, d)
    for path in found.files:
        if path in found.inside_kustomize:
            continue  # kustomize's output stands for it
        lines = await ctx.read_lines(path, optional=True)
        if lines is None:
            model.problems.append(f"{path} could not be read")
            continue
        if "/templates/" in path and any("{{" in ln for ln in lines):
            # a Helm chart's template: what it deploys is `helm template`'s output, which is
            # not run here (charts run template functions and lookups)
            model.problems.append(f"{path} is a Helm chart template, not rendered here: the "
                                  "workload it declares is not established")
            continue

        def cite(n: int, path: str = path, lines: list[str] = lines) -> str:
            return ctx.cite_file_node(path, lines, n)

        out += [(o, Source(path, cite)) for o in load_documents("\n".join(lines))]
    return out


async def _kustomized(ctx: RecipeContext, model: HostModel, d: str
                      ) -> list[tuple[dict[str, Any], Source]]:
    """The objects ``kubectl apply -k D`` would apply, from ``kubectl kustomize D``."""
    argv = ["kubectl", "kustomize", d]
    got = await ctx.tool("run_command", optional=True, argv=argv)
    model.looked_in.append(f"`{' '.join(argv)}`")
    if got is None or got["exit_code"] != 0:
        why = (got["stderr"].strip()[:200] if got else "kubectl kustomize could not be run "
               "here")
        model.problems.append(f"{d} holds a kustomization whose output could not be built "
                              f"({why}): the workloads it declares (after its patches, name "
                              "prefixes and generated ConfigMaps) are not established")
        return []

    def cite(n: int, got: dict[str, Any] = got) -> str:
        return ctx.cite_output_line(got, n) if n else str(got["evidence_id"])

    return [(o, Source(f"kubectl kustomize {d}", cite)) for o in load_documents(got["stdout"])]


async def _from_kubectl(ctx: RecipeContext, model: HostModel
                        ) -> list[tuple[dict[str, Any], Source]]:
    # A kubeconfig holds client keys: the file tools never read one, and a glob of one is
    # refused too. Its name in its directory's listing is all that is needed: kubectl reads it.
    parents = sorted({p.rsplit("/", 1)[0] for p in KUBECONFIGS})
    listed = await ctx.tools([("list_dir", {"path": d}) for d in parents])
    names = {f"{d}/{e['name']}" for d, got in zip(parents, listed, strict=True) if got
             for e in got.get("entries", [])}
    configs = [p for p in KUBECONFIGS if p in names]
    if not configs:
        return []
    if len(configs) > 1:
        model.problems.append(f"more than one kubeconfig ({', '.join(configs)}): reading the "
                              "cluster through each")
    out: list[tuple[dict[str, Any], Source]] = []
    for config in configs:
        argv = ["kubectl", f"--kubeconfig={config}", "get", "pods,configmaps", "-A", "-o",
                "json"]
        got = await ctx.tool("run_command", optional=True, argv=argv)
        model.looked_in.append(f"`{' '.join(argv)}`")
        if got is None or got["exit_code"] != 0:
            # None: refused, as it always is on a live host (a kubeconfig can name a program
            # kubectl runs; issue 28), or not captured in a snapshot
            model.problems.append(f"`kubectl get` with {config} failed"
                                  + (f": {got['stderr'].strip()[:200]}" if got else
                                     " or was not run (kubectl is never run on a live host; "
                                     "pods come from manifests there)"))
            continue

        def cite(n: int, got: dict[str, Any] = got) -> str:
            return ctx.cite_output_line(got, n) if n else str(got["evidence_id"])

        out += [(o, Source(f"kubectl get pods ({config})", cite))
                for o in load_documents(got["stdout"])]
    return out


async def _on_this_node(ctx: RecipeContext, model: HostModel,
                        objects: list[tuple[dict[str, Any], Source]]
                        ) -> list[tuple[dict[str, Any], Source]]:
    """A cluster's pods run on many nodes: keep those scheduled on this host (by its
    /etc/hostname); when the host's name cannot be read, keep all and say so."""
    pods = [o for o, _ in objects if o.get("kind") == "Pod"]
    if not pods:
        return objects
    lines = await ctx.read_lines("/etc/hostname", optional=True)
    me = (lines or [""])[0].strip()
    if not me:
        model.problems.append("this host's name (/etc/hostname) could not be read: pods on "
                              "every node are counted")
        return objects
    elsewhere = [o for o in pods if (o.get("spec") or {}).get("nodeName") not in (None, me)]
    if elsewhere:
        model.problems.append(f"{len(elsewhere)} pods run on other nodes than {me} and are "
                              "not this host's servers")
    return [(o, s) for o, s in objects if not any(o is e for e in elsewhere)]


def _ns(obj: dict[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("namespace") or "default")


def _pod_specs(obj: dict[str, Any]) -> list[tuple[dict[str, Any], int | None]]:
    kind = obj.get("kind")
    spec = obj.get("spec") or {}
    if kind == "Pod":
        return [(spec, None)]
    if kind == "CronJob":
        spec = ((spec.get("jobTemplate") or {}).get("spec") or {})
        return [((spec.get("template") or {}).get("spec") or {}, None)]
    if kind == "LeaderWorkerSet":  # leaderworkerset.x-k8s.io: a leader pod and its workers
        lwt = spec.get("leaderWorkerTemplate") or {}
        replicas = spec.get("replicas", 1)
        return [((t.get("spec") or {}), replicas if isinstance(replicas, int) else None)
                for t in (lwt.get("leaderTemplate"), lwt.get("workerTemplate"))
                if isinstance(t, dict)]
    if kind in _TEMPLATE_KINDS:
        replicas = spec.get("replicas", 1) if kind in _REPLICATED else None
        return [((spec.get("template") or {}).get("spec") or {},
                 replicas if isinstance(replicas, int) else None)]
    return []


async def _server(ctx: RecipeContext, obj: dict[str, Any], spec: dict[str, Any],
                  c: dict[str, Any], replicas: int | None, src: Source,
                  configmaps: dict[tuple[str, Any], tuple[dict[str, Any], Source]]
                  ) -> Server | None:
    image = str(c.get("image") or "")
    command = [str(a) for a in c.get("command") or []]
    args = [str(a) for a in c.get("args") or []]
    words = " ".join([image, *command, *args])
    if not _ENGINE_WORDS.search(words) and not re.search(r"\.sh\b|python", words):
        return None
    meta = obj.get("metadata") or {}
    kind, ns = str(obj.get("kind")), _ns(obj)
    name = f"{kind.lower()}/{meta.get('name')}" + (
        f":{c.get('name')}" if len(spec.get("containers") or []) > 1 else "")
    env, notes = _environment(c, ns, src, configmaps)
    values = {k: s.value for k, s in env.items()}
    unsure = [n for n in notes if "NCCL_" in n]  # an NCCL setting this reading cannot tell
    notes = [n for n in notes if n not in unsure]
    line = int(c.get("__keys__", {}).get("args") or c.get("__keys__", {}).get("command")
               or c.get("__line__") or 0)
    run, doubts = [*command, *args], []
    if not command:  # args are the image's ENTRYPOINT's arguments (Kubernetes' rule)
        got = with_entrypoint(image, args, f"{src.name}:{line}")
        run, notes, doubts = got.argv, notes + got.notes, got.problems
    argv = [_expand(a, values) for a in run]
    server = Server(name=name, path=src.name, files=[src.name], argv=argv,
                    argv_source=src.name, argv_line=line, argv_evidence=[src.cite(line)],
                    env=env, runtime="kubernetes", notes=notes)
    server.notes.append(f"namespace {ns}")
    server.problems += unsure
    server.argv_problems = doubts
    limits = ((c.get("resources") or {}).get("limits") or {})
    if "nvidia.com/gpu" in limits:
        server.gpus = f"{limits['nvidia.com/gpu']} GPUs (nvidia.com/gpu limit)"
    selector = spec.get("nodeSelector")
    if isinstance(selector, dict):
        server.notes.append("nodeSelector " + ", ".join(
            f"{k}={v}" for k, v in selector.items() if not k.startswith("__")))
    host_dirs = {v.get("name"): (v.get("hostPath") or {}).get("path")
                 for v in spec.get("volumes") or [] if isinstance(v, dict)}
    for m in c.get("volumeMounts") or []:
        if isinstance(m, dict) and host_dirs.get(m.get("name")) and m.get("mountPath"):
            server.mounts[str(host_dirs[m["name"]])] = str(m["mountPath"])
    _state(server, obj, c, replicas, src)
    return server if await follow_command(ctx, server) else None


def _expand(text: str, values: dict[str, str]) -> str:
    """Kubernetes' ``$(VAR)`` in command and args, from the container's final environment."""
    return expand(text, values.get)


def _environment(c: dict[str, Any], ns: str, src: Source,
                 configmaps: dict[tuple[str, Any], tuple[dict[str, Any], Source]]
                 ) -> tuple[dict[str, Setting], list[str]]:
    def data(name: str) -> dict[str, Any] | None:
        found = configmaps.get((ns, name))
        return None if found is None else (found[0].get("data") or {})

    built = container_env(c, data)
    env: dict[str, Setting] = {}
    entries = [e for e in c.get("env") or []]
    for name, var in built.vars.items():
        if var.kind == "env":
            line = int((entries[var.index] or {}).get("__line__") or 0)
            env[name] = Setting(name=name, value=var.value, source=src.name, line=line,
                                evidence=[src.cite(line)], origin="container env")
            continue
        cm, cm_src = configmaps[(ns, var.configmap)]
        line = int(((cm.get("data") or {}).get("__keys__") or {}).get(var.key) or 0)
        origin = (f"ConfigMap {var.configmap} (envFrom)" if var.kind == "envFrom" else
                  f"ConfigMap {var.configmap} key {var.key}")
        env[name] = Setting(name=name, value=var.value, source=cm_src.name, line=line,
                            evidence=[cm_src.cite(line)], origin=origin)
    return env, built.notes


def _state(server: Server, obj: dict[str, Any], c: dict[str, Any], replicas: int | None,
           src: Source) -> None:
    st = server.state = State()
    status = obj.get("status") or {}
    if obj.get("kind") == "Pod" and status:
        cs: dict[str, Any] = next((s for s in status.get("containerStatuses") or []
                   if s.get("name") == c.get("name")), {})
        state = cs.get("state") or {}
        waiting = (state.get("waiting") or {}).get("reason", "")
        st.restarts = int(cs.get("restartCount") or 0)
        if "running" in state:
            st.value = "running"
        elif waiting == "CrashLoopBackOff" or (st.restarts >= 2 and "waiting" in state):
            st.value = "crash-looping"
        elif "terminated" in state:
            code = (state.get("terminated") or {}).get("exitCode", 0)
            st.value = "failed" if code else "stopped"
        st.detail = (f"pod phase {status.get('phase')}, container "
                     f"{next(iter(state), 'unknown')}" + (f" ({waiting})" if waiting else "")
                     + (f", {st.restarts} restarts" if st.restarts else ""))
        # the status's `state` (running, waiting: CrashLoopBackOff), not the `{` opening it
        line = int((cs.get("__keys__") or {}).get("state") or cs.get("__line__") or 0)
        st.evidence = [src.cite(line)]
        st.enabled = True
        st.enabled_detail = "a pod the cluster runs"
        return
    st.detail = "declared in a manifest; whether it runs is not shown here"
    if obj.get("kind") == "DaemonSet":  # no replicas field: one pod on each node it admits
        st.enabled_detail = ("a DaemonSet: one pod on each node its node selector, affinity "
                             "and tolerations admit; whether this node is one is not "
                             "established from the manifest")
    if replicas is not None:
        st.enabled = replicas > 0
        line = int(((obj.get("spec") or {}).get("__keys__") or {}).get("replicas") or 0)
        st.enabled_detail = f"replicas: {replicas}"  # absent: 1, the API's default
        st.enabled_evidence = [src.cite(line)] if line else []
        if replicas > 1 and server.gpus:
            server.notes.append(f"replicas: {replicas}: {replicas} pods, "
                                f"{server.gpus.split(' (')[0]} each; the scheduler places "
                                "them, and only those on this node are this host's")
