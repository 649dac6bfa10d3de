"""Where Kubernetes manifests are (``_hostmodel/runtimes/_manifests.py``): ``find_manifests``
called directly on small snapshots, so the module's mutation target stays fast.

Expected, written before running, from the Kubernetes API reference and kustomize's
documentation (kubectl.docs.kubernetes.io, "Kustomization File"):
- a manifest is a YAML document with a ``kind``; the workload kinds that run containers are
  Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, CronJob, Pod (and LeaderWorkerSet);
  ``kind: List`` holds objects in ``items`` (each with its own ``kind``); JSON is YAML, so
  ``"kind": "Deployment"`` declares one too (on a line of its own, as ``kubectl -o json``
  writes it: the search is by line, so a one-line JSON document is not found; not pinned).
  A Service, or a Helm values file with a ``resources:`` key, declares no workload.
- a kustomization is a directory with ``kustomization.yaml`` or ``kustomization.yml``;
  ``resources``, ``bases`` (deprecated) and ``components`` name other directories (or files,
  or remote URLs) relative to it. ``kubectl apply -k DIR`` builds DIR with everything it
  includes, so an included directory is not applied by itself: only the kustomizations no
  other one includes are roots. The files under a kustomization are its input, not manifests
  applied one by one.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from agentkit._hostmodel._model import HostModel
from agentkit._hostmodel.runtimes._manifests import Found, find_manifests
from agentkit._sandbox._context import RecipeContext
from agentkit._sandbox._sandbox import Sandbox
from agentkit._types import TaskSpec

from .runtimes_snap import snapshot

DEPLOY = ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  template:\n"
          "    spec:\n      containers:\n        - name: c\n          image: vllm/vllm-openai\n")


def found(tmp_path: Path, files: dict[str, str], extra: tuple[str, ...] = ()
          ) -> tuple[HostModel, Found]:
    host = snapshot(tmp_path, files)
    ctx = RecipeContext(Sandbox(host, task_id="t"), TaskSpec(id="t", title="t", objective="o"))
    model = HostModel()

    async def run() -> Found:
        return await find_manifests(ctx, model, extra)

    return model, anyio.run(run)


@pytest.mark.parametrize(("text", "is_manifest"), [
    *((f"kind: {k}\n", True) for k in ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet",
                                        "Job", "CronJob", "Pod", "LeaderWorkerSet", "List",
                                        "ConfigMap")),
    ("apiVersion: v1\nkind: List\nitems:\n  - kind: Deployment\n", True),
    ('{\n  "apiVersion": "apps/v1",\n  "kind": "Deployment"\n}\n', True),  # kubectl -o json
    ("kind: 'Job'\n", True),
    ("  kind: Pod\n", True),  # a nested object's kind (an item of a List)
    ("kind: Service\n", False),
    ("kind: PodDisruptionBudget\n", False),  # not a Pod: the kind is a whole word
    ("kind: Podman\n", False),
    ("mykind: Deployment\n", False),
    ("resources:\n  limits: {cpu: 1}\n", False),  # a Helm values file
    ("# kind: Deployment\n", False),  # a comment
])
def test_a_manifest_is_a_file_declaring_a_workload_kind(tmp_path: Path, text: str,
                                                         is_manifest: bool) -> None:
    _, got = found(tmp_path, {"opt/app/x.yaml": text})
    assert got.files == (["/opt/app/x.yaml"] if is_manifest else [])


def test_every_root_at_any_depth_and_both_suffixes(tmp_path: Path) -> None:
    files = {"etc/kubernetes/manifests/pod.yaml": DEPLOY, "srv/a/b/c/d/e.yml": DEPLOY,
             "opt/x.yaml": DEPLOY, "root/d.yaml": DEPLOY, "root/work/k8s/d.yaml": DEPLOY,
             "home/ops/d.yml": DEPLOY, "home/ops/deploy/prod/d.yaml": DEPLOY,
             "home/ops/.cache/helm/d.yaml": DEPLOY,  # hidden: not walked
             "root/.kube/cache/d.yaml": DEPLOY,
             "var/lib/d.yaml": DEPLOY,  # not a root
             "data/given/d.yaml": DEPLOY, "opt/notes.txt": DEPLOY}
    model, got = found(tmp_path, files, extra=("/data/given/",))
    assert got.files == ["/data/given/d.yaml", "/etc/kubernetes/manifests/pod.yaml",
                         "/home/ops/d.yml", "/home/ops/deploy/prod/d.yaml", "/opt/x.yaml",
                         "/root/d.yaml", "/root/work/k8s/d.yaml", "/srv/a/b/c/d/e.yml"]
    assert (got.kustomize_roots, got.inside_kustomize) == ([], set())
    assert model.looked_in == [
        "Kubernetes manifests by content (YAML files declaring a workload under /etc, /srv, "
        "/opt, /root, /home/*, not in hidden directories of home directories)"]
    assert model.problems == []


def test_a_root_past_the_search_budget_is_named(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from agentkit._sandbox import _files

    monkeypatch.setattr(_files, "_MAX_FILES", 3)
    files = {f"{d}/junk/{n}.yaml": "a: 1\n" for n in range(5) for d in ("srv", "data/many")}
    model, _ = found(tmp_path, {**files, "opt/x.yaml": DEPLOY}, extra=("/data/many/",))
    said = [p for p in model.problems if p.startswith("Kubernetes manifests: ")]
    assert said == [f"Kubernetes manifests: {d} holds more than one search covers (3 YAML "
                    "files read): manifests past those were not searched"
                    for d in ("/srv", "/data/many")]


def test_kustomizations_and_what_they_include(tmp_path: Path) -> None:
    files = {
        "srv/app/base/kustomization.yaml": "resources:\n  - d.yaml\n",
        "srv/app/base/d.yaml": DEPLOY,
        "srv/app/overlays/prod/kustomization.yaml": (
            "resources:\n  - ../../base\n  - https://github.com/o/r//deploy?ref=v1\n"
            "namePrefix: prod-\n"),
        "srv/app/overlays/prod/patch.yaml": "kind: Deployment\nmetadata:\n  name: d\n",
        "srv/old/kustomization.yml": "bases:\n  - ../shared\n",
        "srv/shared/kustomization.yaml": "resources: [s.yaml]\n",
        "srv/shared/s.yaml": DEPLOY,
        "srv/comp/kustomization.yaml": "components:\n  - ../feature\n",
        "srv/feature/kustomization.yaml": "kind: Component\nresources: [f.yaml]\n",
        "srv/feature/f.yaml": DEPLOY,
        "opt/plain/d.yaml": DEPLOY}
    _, got = found(tmp_path, files)
    assert got.kustomize_roots == ["/srv/app/overlays/prod", "/srv/comp", "/srv/old"]
    assert got.inside_kustomize == {"/srv/app/base/d.yaml", "/srv/app/overlays/prod/patch.yaml",
                                    "/srv/shared/s.yaml", "/srv/feature/f.yaml"}
    assert "/opt/plain/d.yaml" in got.files
    assert "/opt/plain/d.yaml" not in got.inside_kustomize


def test_a_kustomization_that_is_not_a_mapping_includes_nothing(tmp_path: Path) -> None:
    _, got = found(tmp_path, {"srv/a/kustomization.yaml": "- resources\n",
                              "srv/b/kustomization.yaml": "resources: [../a, 7]\n",
                              "srv/c/kustomization.yaml": "resources:\n"})
    assert got.kustomize_roots == ["/srv/b", "/srv/c"]


def test_a_directory_name_that_only_starts_like_a_kustomization(tmp_path: Path) -> None:
    # /srv/app is a kustomization; /srv/app2 is not inside it
    _, got = found(tmp_path, {"srv/app/kustomization.yaml": "resources: [d.yaml]\n",
                              "srv/app/d.yaml": DEPLOY, "srv/app2/d.yaml": DEPLOY})
    assert got.inside_kustomize == {"/srv/app/d.yaml"}
    assert got.files == ["/srv/app/d.yaml", "/srv/app2/d.yaml"]


def test_given_directories_by_their_exact_names(tmp_path: Path) -> None:
    # a directory's name may end in any character: a space, an X
    files = {"data/given /d.yaml": DEPLOY, "data/given/wrong.yaml": DEPLOY,
             "data/modelX/d.yaml": DEPLOY, "data/model/wrong.yaml": DEPLOY}
    model, got = found(tmp_path, files, extra=("/data/given ", "/data/modelX/"))
    assert got.files == ["/data/given /d.yaml", "/data/modelX/d.yaml"]
    assert model.problems == []


def test_a_given_directory_that_cannot_be_searched_is_said(tmp_path: Path) -> None:
    # the file tools refuse a path that climbs out of the root: nothing found is no answer
    model, got = found(tmp_path, {"opt/x.yaml": DEPLOY, "root/d.yaml": DEPLOY},
                       extra=("../k8s",))
    assert got.files == ["/opt/x.yaml", "/root/d.yaml"]  # the places after it still are
    assert model.problems == ["Kubernetes manifests: ../k8s could not be searched: manifests "
                              "there are not established"]


def test_more_matches_than_one_search_returns_is_said(tmp_path: Path) -> None:
    many = "kind: List\nitems:\n" + "  - kind: Pod\n" * 1000  # 1001 matching lines
    model, got = found(tmp_path, {"srv/big/all.yaml": many, "opt/x.yaml": DEPLOY})
    assert got.files == ["/opt/x.yaml", "/srv/big/all.yaml"]
    assert model.problems == ["Kubernetes manifests: /srv holds more than one search covers "
                              "(1 YAML files read): manifests past those were not searched"]


def test_homes_past_one_that_cannot_be_listed(tmp_path: Path) -> None:
    # no /root here: the home directories after it are still walked
    _, got = found(tmp_path, {"home/a/d.yaml": DEPLOY, "home/b/k8s/d.yaml": DEPLOY})
    assert got.files == ["/home/a/d.yaml", "/home/b/k8s/d.yaml"]


def test_kustomization_edges(tmp_path: Path) -> None:
    files = {
        # unreadable YAML: kustomize cannot build it either; it includes nothing
        "srv/broken/kustomization.yaml": "resources: [\n",
        # a remote resource is fetched, never a local directory of that spelling
        "srv/app/kustomization.yaml": "resources:\n  - https://github.com/o/r\n",
        "srv/app/https:/github.com/o/r/kustomization.yaml": "resources: [d.yaml]\n",
        # kustomizations whose directory names end in X or a space: what is under them
        "srv/appX/kustomization.yaml": "resources: [d.yaml]\n", "srv/appX/d.yaml": DEPLOY,
        "srv/sp /kustomization.yaml": "resources: [d.yaml]\n", "srv/sp /d.yaml": DEPLOY,
        "srv/app/d.yaml": DEPLOY}
    _, got = found(tmp_path, files)
    assert got.kustomize_roots == ["/srv/app", "/srv/app/https:/github.com/o/r", "/srv/appX",
                                   "/srv/broken", "/srv/sp "]
    assert got.inside_kustomize == {"/srv/app/d.yaml", "/srv/appX/d.yaml", "/srv/sp /d.yaml"}
