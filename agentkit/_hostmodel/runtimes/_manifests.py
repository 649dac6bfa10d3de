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
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ._yaml import load_yaml

if TYPE_CHECKING:
    from ..._sandbox._context import RecipeContext
    from .._model import HostModel

ROOTS = ("/etc", "/srv", "/opt")
HOMES = ("/root", "/home/*")  # their hidden directories (caches, toolchains) are not walked
# Kinds whose pod template runs containers (LeaderWorkerSet: multi-node inference), the
# ConfigMaps they read, and List exports of them.
WORKLOAD_KINDS = ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet",
                  "ReplicationController", "Job", "CronJob", "Pod", "LeaderWorkerSet", "List",
                  "ConfigMap")
KIND_LINE = r"^\s*-?\s*[\"']?kind[\"']?:\s*[\"']?(" + "|".join(WORKLOAD_KINDS) + r")\b"
# A kustomization's own top-level fields: one walk finds manifests and kustomizations alike.
KUSTOMIZE_LINE = (r"^(resources|bases|components|patches|patchesStrategicMerge|namePrefix|"
                  r"nameSuffix|configMapGenerator|secretGenerator|images|helmCharts)\s*:")
KUSTOMIZATIONS = ("kustomization.yaml", "kustomization.yml")


@dataclass
class Found:
    files: list[str] = field(default_factory=list)  # YAML files that declare a workload kind
    kustomize_roots: list[str] = field(default_factory=list)  # built, not read file by file
    inside_kustomize: set[str] = field(default_factory=set)  # files kustomize stands for


async def find_manifests(ctx: RecipeContext, model: HostModel, extra: tuple[str, ...]
                         ) -> Found:
    places = [*ROOTS, *(d.rstrip("/") for d in extra), *await _home_dirs(ctx)]
    model.looked_in.append("Kubernetes manifests by content (YAML files declaring a workload "
                           f"under {', '.join((*ROOTS, *HOMES))}, not in hidden directories "
                           "of home directories)")
    got = await ctx.tools([("grep", {"pattern": f"{KIND_LINE}|{KUSTOMIZE_LINE}",
                                     "path": f"{p}/**/*.y*ml" if not p.endswith("/*")
                                     else f"{p}.y*ml", "max_matches": 1000})
                           for p in places])
    found = Found()
    dirs: set[str] = set()
    for place, g in zip(places, got, strict=True):
        if g is None:  # refused by the file tools (a relative --manifests path, say)
            model.problems.append(f"Kubernetes manifests: {place} could not be searched: "
                                  "manifests there are not established")
            continue
        for m in g.get("matches", []):
            name = m["path"].rsplit("/", 1)[-1]
            if name in KUSTOMIZATIONS:
                dirs.add(posixpath.dirname(m["path"]))
            elif not re.match(KUSTOMIZE_LINE, m["text"]):
                found.files.append(m["path"])
        if g.get("files_capped") or g.get("capped"):
            model.problems.append(
                f"Kubernetes manifests: {place} holds more than one search covers "
                f"({g.get('files_searched')} YAML files read): manifests past those were "
                "not searched")
    found.files = sorted(set(found.files))
    found.kustomize_roots = await _roots(ctx, sorted(dirs))
    found.inside_kustomize = {f for f in found.files for d in dirs
                              if f.startswith(d.rstrip("/") + "/")}
    return found


async def _home_dirs(ctx: RecipeContext) -> list[str]:
    """Each home directory's own YAML files (``HOME/*``) and its visible subdirectories: the
    hidden ones hold caches and toolchains (tens of thousands of directories), not
    deployments."""
    listing = await ctx.tool("glob", optional=True, pattern="/home/*")
    homes = ["/root", *(listing or {}).get("paths", [])]
    got = await ctx.tools([("list_dir", {"path": h}) for h in homes])
    out: list[str] = []
    for home, entries in zip(homes, got, strict=True):
        if entries is None:
            continue
        out.append(f"{home}/*")
        out += [f"{home}/{e['name']}" for e in entries.get("entries", [])
                if e["type"] == "dir" and not e["name"].startswith(".")]
    return out


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
