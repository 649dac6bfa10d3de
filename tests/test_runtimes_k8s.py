"""Model servers declared in Kubernetes manifests on the host (no cluster access).

Expected facts, from the Kubernetes API semantics, written before running:
- a container without `command` runs its image's entrypoint (vllm/vllm-openai: `vllm serve`)
  with `args`; `$(TP)` in args is expanded from the container's env;
- env entries win over envFrom; a ConfigMap is looked up in the workload's own namespace;
- a configMapKeyRef to a key the ConfigMap lacks leaves the variable unknown (not empty);
- Secrets are never read;
- `replicas: 0` is a workload scaled to zero: declared, not meant to run;
- a hostPath volume maps the container's mountPath to the host's directory.
"""

from __future__ import annotations

import json
from pathlib import Path

from agentkit import Host

from .test_runtimes_live import investigate

CONFIGMAPS = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: nccl-tuning
  namespace: inference
data:
  NCCL_P2P_LEVEL: "NVL"
  NCCL_PROTO: "Simple"
  NCCL_DEBUG: "INFO"
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: nccl-tuning
  namespace: default
data:
  NCCL_MIN_NCHANNELS: "32"
"""

DEPLOYMENTS = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: vllm-llama
  namespace: inference
spec:
  replicas: 1
  selector: {matchLabels: {app: vllm-llama}}
  template:
    metadata: {labels: {app: vllm-llama}}
    spec:
      nodeSelector:
        nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.11.0
          args: ["--model", "/models/meta-llama/Llama-3.1-70B-Instruct",
                 "--tensor-parallel-size", "$(TP)", "--served-model-name", "$$(literal)"]
          envFrom:
            - configMapRef: {name: nccl-tuning}
          env:
            - name: TP
              value: "4"
            - name: NCCL_PROTO
              value: LL128
            - name: NCCL_ALGO
              valueFrom:
                configMapKeyRef: {name: nccl-tuning, key: NCCL_ALGO_MISSING}
            - name: HF_TOKEN
              valueFrom:
                secretKeyRef: {name: hf, key: token}
          resources:
            limits: {nvidia.com/gpu: 4}
          volumeMounts:
            - {name: models, mountPath: /models}
      volumes:
        - name: models
          hostPath: {path: /data/models}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: vllm-old
  namespace: inference
spec:
  replicas: 0
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.8.5
          command: ["python3", "-m", "vllm.entrypoints.openai.api_server"]
          args: ["--model", "/models/Qwen/Qwen2.5-72B-Instruct", "-tp", "2"]
---
apiVersion: v1
kind: Service
metadata: {name: vllm-llama, namespace: inference}
spec: {ports: [{port: 8000}]}
"""


def _root(tmp_path: Path) -> Path:
    root = tmp_path / "host"
    (root / "opt/llm/k8s").mkdir(parents=True)
    (root / "opt/llm/k8s/configmaps.yaml").write_text(CONFIGMAPS)
    (root / "opt/llm/k8s/vllm.yaml").write_text(DEPLOYMENTS)
    model = root / "data/models/meta-llama/Llama-3.1-70B-Instruct"
    model.mkdir(parents=True)
    (model / "config.json").write_text(json.dumps({"num_hidden_layers": 80}))
    return root


def _line(text: str, needle: str) -> int:
    return next(n for n, ln in enumerate(text.splitlines(), 1) if needle in ln)


def test_a_deployment_in_manifests_serves_with_its_configmap_settings(tmp_path: Path) -> None:
    root = _root(tmp_path)
    out = investigate(Host.at(root), "Is NCCL tuned?", ["service-unit", "nccl-env"])
    unit = out.results["service-unit"]
    host = unit.facts["host"].value
    by_name = {s["name"]: s for s in host["servers"]}
    assert set(by_name) == {"deployment/vllm-llama", "deployment/vllm-old"}
    assert host["current"] == "deployment/vllm-llama", host["decision"]
    cur = by_name["deployment/vllm-llama"]
    assert (cur["engine"], cur["tp"], cur["runtime"], cur["enabled"]) == (
        "vllm", 4, "kubernetes", True)
    assert cur["gpus"] == "4 GPUs (nvidia.com/gpu limit)"
    assert cur["model"] == "/data/models/meta-llama/Llama-3.1-70B-Instruct"
    assert by_name["deployment/vllm-old"]["enabled"] is False
    assert by_name["deployment/vllm-old"]["tp"] == 2
    argv = unit.facts["exec_start"].value["argv"]
    assert argv[:2] == ["vllm", "serve"] and "$(literal)" in argv  # $$ is a literal $
    notes = " ".join(unit.facts["unit"].value["notes"])
    problems = " ".join(unit.facts["unit"].value["problems"])  # an NCCL value not established
    assert "entrypoint" in notes and "NCCL_ALGO" in problems and "Secret" in notes
    rows = out.results["nccl-env"].facts["nccl_tuning"].value
    got = {r["name"]: (r["value"], f"{r['source']}:{r['line']}") for r in rows}
    assert got == {
        "NCCL_P2P_LEVEL": ("NVL", f"/opt/llm/k8s/configmaps.yaml:"
                                  f"{_line(CONFIGMAPS, 'NCCL_P2P_LEVEL')}"),
        "NCCL_PROTO": ("LL128", f"/opt/llm/k8s/vllm.yaml:"
                                f"{_line(DEPLOYMENTS, 'name: NCCL_PROTO')}"),
    }  # not NCCL_MIN_NCHANNELS: that ConfigMap is in another namespace
    assert "HF_TOKEN" not in unit.facts["environment"].value


def test_scaled_to_zero_everywhere_is_not_a_current_server(tmp_path: Path) -> None:
    root = _root(tmp_path)
    text = DEPLOYMENTS.replace("replicas: 1", "replicas: 0")
    (root / "opt/llm/k8s/vllm.yaml").write_text(text)
    out = investigate(Host.at(root), "Is NCCL tuned?", ["service-unit"])
    host = out.results["service-unit"].facts["host"].value
    assert host["current"] is None and sorted(host["ambiguous"]) == [
        "deployment/vllm-llama", "deployment/vllm-old"]


def test_live_host_with_a_manifest_directory_given(tmp_path: Path) -> None:
    # `agentkit ask … --root / --manifests DIR`: a deployment repository checked out anywhere
    import os
    import subprocess
    import sys

    deploy = tmp_path / "deploy-repo/k8s"
    deploy.mkdir(parents=True)
    (deploy / "configmaps.yaml").write_text(CONFIGMAPS)
    (deploy / "vllm.yaml").write_text(DEPLOYMENTS)
    trace = tmp_path / "t.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "agentkit", "ask", "Is NCCL tuned?", "--root", "/",
         "--manifests", str(deploy), "--json", "-q", "--trace", str(trace)],
        capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": os.getcwd()})
    answer = json.loads(done.stdout)
    text = json.dumps(answer)
    assert "deployment/vllm-llama" in text, done.stderr
    assert "NCCL_PROTO=LL128" in text and "NCCL_P2P_LEVEL=NVL" in text
    replay = subprocess.run([sys.executable, "-m", "agentkit", "replay", str(trace)],
                            capture_output=True, text=True, timeout=120,
                            env={**os.environ, "PYTHONPATH": os.getcwd()})
    assert replay.returncode == 0, replay.stderr  # the given directory is in the trace
