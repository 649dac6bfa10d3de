"""Where Kubernetes manifests are on a host: found by content, not by path.

People keep manifests anywhere (a kustomize checkout in ``/srv/k8s/<app>/``, a Helm output in
``/root/deploy``, a static Pod in ``/etc/kubernetes/manifests``): every YAML file under the
usual roots whose text declares a workload kind is read, within a budget (directories walked
and files searched per root, as the file tools bound them); a root the budget did not cover is
said, never silently skipped.

A directory with a ``kustomization.yaml`` is not applied as its files say: ``kubectl apply -k``
applies kustomize's output (patches, ``namePrefix``, generated ConfigMaps). Its output is built
with ``kubectl kustomize DIR`` (no plugins, no exec functions, no Helm: kubectl runs none of
them without the flags that enable them, and the sandbox allows no flags), for each
kustomization no other one includes; its files are not read one by one. Where kubectl cannot
build it, the workloads under it are not established, and that is said.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ._yaml import load_yaml

if TYPE_CHECKING:
    from ..._catalog._recipe import RecipeContext
    from .._model import HostModel

ROOTS = ("/etc", "/srv", "/opt", "/root", "/home")
# Kinds whose pod template runs containers (LeaderWorkerSet: multi-node inference), the
# ConfigMaps they read, and List exports of them.
WORKLOAD_KINDS = ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "CronJob",
                  "Pod", "LeaderWorkerSet", "List", "ConfigMap")
KIND_LINE = r"^\s*-?\s*[\"']?kind[\"']?:\s*[\"']?(" + "|".join(WORKLOAD_KINDS) + r")\b"
KUSTOMIZATIONS = ("kustomization.yaml", "kustomization.yml", "Kustomization")


@dataclass
class Found:
    files: list[str] = field(default_factory=list)  # YAML files that declare a workload kind
    kustomize_roots: list[str] = field(default_factory=list)  # built, not read file by file
    inside_kustomize: set[str] = field(default_factory=set)  # files kustomize stands for


async def find_manifests(ctx: RecipeContext, model: HostModel, extra: tuple[str, ...]
                         ) -> Found:
    roots = (*ROOTS, *(d.rstrip("/") for d in extra))
    model.looked_in.append("Kubernetes manifests by content (YAML files declaring a workload "
                           f"under {', '.join(roots)})")
    calls: list[tuple[str, dict[str, Any]]] = []
    for root in roots:
        # two walks per root: YAML files with a workload kind, and kustomizations
        calls += [("grep", {"pattern": KIND_LINE, "path": f"{root}/**/*.y*ml",
                            "max_matches": 1000}),
                  ("glob", {"pattern": f"{root}/**/[kK]ustomization*", "max_results": 200})]
    got = await ctx.tools(calls)
    found = Found()
    dirs: set[str] = set()
    for n, root in enumerate(roots):
        grep, listing = got[2 * n] or {}, got[2 * n + 1] or {}
        found.files += [m["path"] for m in grep.get("matches", [])]
        if grep.get("files_capped") or grep.get("capped") or listing.get("capped"):
            model.problems.append(
                f"Kubernetes manifests: {root} holds more than one search covers "
                f"({grep.get('files_searched')} YAML files read): manifests past those were "
                "not searched")
        dirs |= {posixpath.dirname(p) for p in listing.get("paths", [])
                 if p.rsplit("/", 1)[-1] in KUSTOMIZATIONS}
    found.files = sorted(set(found.files))
    found.kustomize_roots = await _roots(ctx, sorted(dirs))
    found.inside_kustomize = {f for f in found.files for d in dirs
                              if f == d or f.startswith(d.rstrip("/") + "/")}
    return found


async def _roots(ctx: RecipeContext, dirs: list[str]) -> list[str]:
    """The kustomizations no other one includes (through resources, bases or components):
    those are what ``kubectl apply -k`` is run on."""
    included: set[str] = set()
    for d in dirs:
        for name in KUSTOMIZATIONS:
            lines = await ctx.read_lines(f"{d}/{name}", optional=True)
            if lines is None:
                continue
            docs = load_yaml("\n".join(lines))
            spec = docs[0] if docs and isinstance(docs[0], dict) else {}
            for key in ("resources", "bases", "components"):
                for ref in spec.get(key) or []:
                    if isinstance(ref, str) and "://" not in ref:
                        included.add(posixpath.normpath(posixpath.join(d, ref)))
            break
    return [d for d in dirs if d not in included]
