"""``kubectl kustomize DIR``: what ``kubectl apply -k DIR`` applies, built offline in the
sandbox, and nothing more (kubectl's own rules, `kubectl kustomize --help`):

- plugins, exec KRM functions and Helm charts run only with ``--enable-alpha-plugins``,
  ``--enable-exec``, ``--enable-helm``; the sandbox accepts no option at all, so they stay off;
- the load restrictor (files only from inside the kustomization root) stays at its default;
- no network: a remote base fails instead of being fetched;
- generated Secrets come out redacted, as every command's output does.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import anyio
import pytest

from agentkit import Host, Sandbox
from agentkit._sandbox._kernel import needs_of

KUBECTL = shutil.which("kubectl")
needs_kubectl = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed: the "
                                   "build cannot run here (the rules are still tested)")


def run(host: Host, argv: list[str]) -> object:
    return anyio.run(Sandbox(host, task_id="t").call, "run_command", {"argv": argv})


def _tree(root: Path) -> None:
    base = root / "srv/app/base"
    prod = root / "srv/app/overlays/prod"
    base.mkdir(parents=True)
    prod.mkdir(parents=True)
    (base / "kustomization.yaml").write_text("resources: [cm.yaml]\n")
    (base / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: nccl}\n"
                                  "data: {NCCL_PROTO: LL}\n")
    (prod / "kustomization.yaml").write_text(
        "namePrefix: prod-\nresources: [../../base]\n"
        "secretGenerator:\n- name: hf\n  literals: [token=hf_SECRETVALUE123456789]\n")


@pytest.mark.parametrize("argv", [
    ["kubectl", "kustomize", "--enable-alpha-plugins", "/srv/app"],
    ["kubectl", "kustomize", "--enable-helm", "/srv/app"],
    ["kubectl", "kustomize", "--enable-exec", "/srv/app"],
    ["kubectl", "kustomize", "--load-restrictor=LoadRestrictionsNone", "/srv/app"],
    ["kubectl", "kustomize", "/srv/app", "-o", "/tmp/x"],
    ["kubectl", "kustomize", "srv/app"],
    ["kubectl", "kustomize", "https://github.com/x/y"],
    ["kubectl", "kustomize"],
])
def test_anything_but_one_directory_is_refused(tmp_path: Path, argv: list[str]) -> None:
    r = run(Host.at(tmp_path), argv)
    assert not r.ok and "refused" in r.error  # type: ignore[attr-defined]


def test_kustomize_gets_no_network_nor_kubeconfig() -> None:
    needs = needs_of("kustomize", [], live=True)
    assert not needs.network and not needs.unmasked
    # nor does kubectl itself: it is never run live (a kubeconfig can name a program it runs)
    assert needs_of("kubectl", [], live=True) == needs_of("cat", [], live=True)


@needs_kubectl
def test_builds_an_overlay_on_a_snapshot_with_secrets_redacted(tmp_path: Path) -> None:
    _tree(tmp_path)
    r = run(Host.at(tmp_path), ["kubectl", "kustomize", "/srv/app/overlays/prod"])
    assert r.ok, r.error  # type: ignore[attr-defined]
    out = r.data["stdout"]  # type: ignore[attr-defined]
    assert "name: prod-nccl" in out and "NCCL_PROTO: LL" in out  # the base, through ../
    assert "kind: Secret" in out
    assert "aGZfU0VDUkVUVkFMVUUxMjM0NTY3ODk" not in out  # base64 of the token, redacted
    assert str(tmp_path) not in out + r.data["stderr"]  # type: ignore[attr-defined]


@needs_kubectl
def test_a_directory_outside_the_snapshot_is_refused(tmp_path: Path) -> None:
    _tree(tmp_path / "elsewhere")
    (tmp_path / "snap").mkdir()
    (tmp_path / "snap/srv").symlink_to(tmp_path / "elsewhere/srv")
    r = run(Host.at(tmp_path / "snap"), ["kubectl", "kustomize", "/srv/app/overlays/prod"])
    assert not r.ok or "prod-nccl" not in r.data["stdout"]  # type: ignore[attr-defined]


@needs_kubectl
@pytest.mark.parametrize("generator", [
    "configMapGenerator:\n- name: c\n  envs: [vllm.env]\n",
    "configMapGenerator:\n- name: c\n  files: [vllm.env]\n",
    "secretGenerator:\n- name: s\n  files: [vllm.env]\n",
])
def test_generated_data_gets_no_secret_through(tmp_path: Path, generator: str) -> None:
    """A generator turns a file into data: its secrets are redacted as the file's are."""
    from tests.security.test_kernel_layer import PEM_BODY, SECRET

    app = tmp_path / "srv/app"
    app.mkdir(parents=True)
    (app / "vllm.env").write_text(
        f"VLLM_API_KEY={SECRET}\nHF_TOKEN={SECRET[::-1]}\nAWS_SECRET={SECRET[3:]}\n"
        f"TLS_KEY=-----BEGIN PRIVATE KEY-----{PEM_BODY}-----END PRIVATE KEY-----\n")
    (app / "kustomization.yaml").write_text(generator)
    r = run(Host.at(tmp_path), ["kubectl", "kustomize", "/srv/app"])
    assert r.ok, r.error  # type: ignore[attr-defined]
    shown = f"{r.data}{r.error}"  # type: ignore[attr-defined]
    for secret in (SECRET, SECRET[::-1], SECRET[3:], PEM_BODY):
        fragments = {secret[i:i + 12] for i in range(len(secret) - 11)}
        assert not [f for f in fragments if f in shown], shown


@pytest.mark.parametrize("live", [True, False])
def test_allowlist_only_refuses_kustomize_and_says_why(tmp_path: Path, live: bool) -> None:
    """A kustomization can name a remote base that kustomize fetches with git: without the
    kernel layer (no network, no kubeconfig) kustomize is not run at all (issue 28)."""
    from agentkit._sandbox._paths import Root

    _tree(tmp_path)
    root = "/" if live else str(tmp_path)
    target = str(tmp_path / "srv/app/overlays/prod") if live else "/srv/app/overlays/prod"
    r = run(Host(root=Root(root), sandbox="allowlist"), ["kubectl", "kustomize", target])
    assert not r.ok and "kernel layer" in r.error  # type: ignore[attr-defined]
