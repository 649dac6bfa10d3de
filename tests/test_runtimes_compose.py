"""Docker Compose files read offline (no container CLI captures), from Compose's documented
rules, written before running:
- the container name is `<project>-<service>-1`, the project the directory's name;
- `environment` wins over `env_file`; an override file in the same directory is merged over
  the main file, `environment` by key;
- `${VAR}` / `${VAR:-default}` in the file come from the project's `.env`;
- a list entry without `=` takes the shell's value when compose ran: unknown here;
- a service on the vllm/vllm-openai image without `entrypoint` runs `vllm serve` + command;
- a bind mount maps the container's /models to the host's directory;
- when the container itself was inspected, the compose file adds no second server.
"""

from __future__ import annotations

import json
from pathlib import Path

from agentkit import Host

from .test_runtimes_live import investigate

COMPOSE = """\
services:
  vllm:
    image: vllm/vllm-openai:v0.11.0
    command: >-
      --model /models/org/Model-70B --tensor-parallel-size 2
      --kv-cache-dtype ${KV_DTYPE:-auto}
    env_file:
      - nccl.env
    environment:
      - NCCL_P2P_LEVEL=NVL
      - NCCL_PROTO
      - NCCL_ALGO=${ALGO}
    volumes:
      - /data/models:/models:ro
    ipc: host
    restart: unless-stopped
    deploy:
      resources:
        reservations:
          devices:
            - driver: nvidia
              count: 2
              capabilities: [gpu]
  redis:
    image: redis:7
"""


def _root(tmp_path: Path) -> Path:
    root = tmp_path / "host"
    d = root / "opt/llm"
    d.mkdir(parents=True)
    (d / "compose.yaml").write_text(COMPOSE)
    (d / "compose.override.yaml").write_text(
        "services:\n  vllm:\n    environment:\n      NCCL_P2P_LEVEL: SYS\n")
    (d / "nccl.env").write_text("NCCL_PROTO=Simple\nNCCL_MIN_NCHANNELS=4\n")
    (d / ".env").write_text("ALGO=Tree\nKV_DTYPE=fp8\n")
    model = root / "data/models/org/Model-70B"
    model.mkdir(parents=True)
    (model / "config.json").write_text(json.dumps({"num_hidden_layers": 80}))
    return root


def test_a_compose_service_is_read_with_compose_s_own_rules(tmp_path: Path) -> None:
    out = investigate(Host.at(_root(tmp_path)), "Is NCCL tuned?",
                      ["service-unit", "nccl-env", "serve-flags"])
    facts = out.results["service-unit"].facts
    host = facts["host"].value
    assert [s["name"] for s in host["servers"]] == ["llm-vllm-1"]
    s = host["servers"][0]
    assert (s["runtime"], s["engine"], s["tp"], s["state"], s["enabled"], s["gpus"]) == (
        "compose", "vllm", 2, "unknown", True, "2 GPUs")
    assert s["model"] == "/data/models/org/Model-70B"
    assert out.results["serve-flags"].facts["kv_cache_dtype"].value == "fp8"
    rows = out.results["nccl-env"].facts["nccl_tuning"].value
    assert {r["name"]: r["value"] for r in rows} == {
        "NCCL_P2P_LEVEL": "SYS", "NCCL_ALGO": "Tree", "NCCL_MIN_NCHANNELS": "4"}
    notes = " ".join(facts["unit"].value["notes"])
    assert "NCCL_PROTO takes its value from the shell" in notes
    assert "vllm serve" in notes  # the image's entrypoint, assumed and said


def test_an_inspected_container_is_not_counted_twice(tmp_path: Path) -> None:
    root = _root(tmp_path)
    cap = root / ".agentkit"
    (cap / "commands").mkdir(parents=True)
    ps = {"Command": "\"vllm serve --model /models/org/Model-70B\"", "ID": "a" * 64,
          "Image": "vllm/vllm-openai:v0.11.0", "Names": "llm-vllm-1", "State": "running"}
    inspect = [{"Id": "a" * 64, "Name": "/llm-vllm-1", "Path": "vllm",
                "Args": ["serve", "--model", "/models/org/Model-70B",
                         "--tensor-parallel-size", "2"],
                "State": {"Status": "running", "Running": True, "ExitCode": 0},
                "RestartCount": 0, "HostConfig": {"RestartPolicy": {"Name": "unless-stopped"},
                                                  "IpcMode": "host"},
                "Mounts": [], "Config": {"Env": ["NCCL_P2P_LEVEL=SYS"], "Labels": {
                    "com.docker.compose.project": "llm",
                    "com.docker.compose.service": "vllm",
                    "com.docker.compose.project.config_files": "/opt/llm/compose.yaml"}}}]
    (cap / "commands/ps.txt").write_text(json.dumps(ps) + "\n")
    (cap / "commands/inspect.txt").write_text(json.dumps(inspect, indent=4))
    (cap / "snapshot.json").write_text(json.dumps({"format": "agentkit-snapshot", "commands": [
        {"argv": ["docker", "ps", "--all", "--no-trunc", "--format", "{{json .}}"],
         "stdout": "commands/ps.txt"},
        {"argv": ["docker", "inspect", "--type", "container", "llm-vllm-1"],
         "stdout": "commands/inspect.txt"}]}))
    out = investigate(Host.at(root), "Is NCCL tuned?", ["service-unit"])
    host = out.results["service-unit"].facts["host"].value
    assert [(s["name"], s["state"]) for s in host["servers"]] == [("llm-vllm-1", "running")]
