"""Kubernetes manifests found by content wherever they are under /etc, /srv, /opt, /root and
the home directories, within a walk budget that is named when reached.

Expected, written before running: a Deployment whose container runs vLLM is a server wherever
its file is (a depth no fixed pattern covered, a file name with no k8s/deploy in its path);
a YAML file without a workload kind (a Helm values file with ``resources:``) is no manifest;
hidden directories of a home directory are not walked, and the answer says so; a root with
more YAML than one search reads is named as not fully searched.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agentkit import Host

from .test_runtimes_k8s import DEPLOYMENTS
from .test_runtimes_live import investigate


def _host(tmp_path: Path) -> Path:
    root = tmp_path / "host"
    deep = root / "home/ops/work/clusters/gpu-pool/apps/llm"
    deep.mkdir(parents=True)
    (deep / "serving.yaml").write_text(DEPLOYMENTS)
    (root / "srv/charts/llm").mkdir(parents=True)
    (root / "srv/charts/llm/values.yaml").write_text("resources:\n  limits: {cpu: 1}\n")
    hidden = root / "home/ops/.cache/helm/llm"
    hidden.mkdir(parents=True)
    (hidden / "old.yaml").write_text(DEPLOYMENTS.replace("vllm-llama", "vllm-cached"))
    return root


def test_a_deployment_anywhere_under_the_roots_is_found(tmp_path: Path) -> None:
    out = investigate(Host.at(_host(tmp_path)), "Is NCCL tuned?", ["service-unit"])
    host = out.results["service-unit"].facts["host"].value
    names = {s["name"] for s in host["servers"]}
    assert names == {"deployment/vllm-llama", "deployment/vllm-old"}  # not the cached copy
    assert host["current"] == "deployment/vllm-llama"


def test_hidden_home_directories_are_said_not_searched(tmp_path: Path) -> None:
    root = _host(tmp_path)
    (root / "home/ops/work").rename(root / "home/ops/.work")  # the only copy is hidden now
    out = investigate(Host.at(root), "Is NCCL tuned?", ["service-unit"])
    result = out.results["service-unit"]
    assert result.facts["host"].value["servers"] == []
    text = " ".join(result.errors)
    assert "not in hidden directories of home directories" in text


def test_a_root_past_the_budget_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                         ) -> None:
    from agentkit._sandbox import _files

    root = _host(tmp_path)
    for n in range(6):
        (root / f"opt/junk/{n}").mkdir(parents=True)
        (root / f"opt/junk/{n}/x.yaml").write_text("a: 1\n")
    monkeypatch.setattr(_files, "_MAX_FILES", 4)
    out = investigate(Host.at(root), "Is NCCL tuned?", ["service-unit"])
    host = out.results["service-unit"].facts["host"].value
    assert any("/opt holds more than one search covers" in p for p in host["problems"])


def test_a_helm_template_is_named_not_read(tmp_path: Path) -> None:
    root = tmp_path / "host"
    tpl = root / "srv/charts/llm/templates"
    tpl.mkdir(parents=True)
    (tpl / "deployment.yaml").write_text(
        DEPLOYMENTS.replace('"4"', '"{{ .Values.tp }}"', 1))
    out = investigate(Host.at(root), "Is NCCL tuned?", ["service-unit"])
    host = out.results["service-unit"].facts["host"].value
    assert host["servers"] == []
    assert any("Helm chart template, not rendered" in p for p in host["problems"])
