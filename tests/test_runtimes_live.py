"""Model servers in containers on a live host (`--root /`): a fake `docker` executable in a
trusted directory answers `ps` and `inspect` with outputs shaped as Docker prints them, and
the investigation must find the container, read its environment and decide which serves.

Expected facts come from Docker's semantics, written before running:
- `inspect` Path+Args is what runs (the image's entrypoint joined with its command);
- Config.Env is the process environment; NCCL_DEBUG is not tuning;
- State.Status running → running; exited with a non-zero code → failed;
- restart policy always/unless-stopped → started again by the daemon at boot ("enabled");
- a bind mount maps the container's /models to the host's directory;
- a container without --ipc=host and with Docker's default 64 MiB /dev/shm is a problem for a
  multi-GPU server (NCCL and the workers share memory through /dev/shm).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from agentkit import Host, Orchestrator
from agentkit._sandbox._host import TRUSTED_BIN_DIRS
from agentkit._sandbox._paths import Root

from .scenarios.runner import Outcome, _Capture


def _container(name: str, path: str, args: list[str], env: list[str], status: str,
               exit_code: int, policy: str, ipc: str, shm: int, models: str,
               labels: dict[str, str] | None = None, gpus: list[str] | None = None,
               restarts: int = 0) -> dict[str, Any]:
    cid = (name.encode().hex() * 8)[:64]
    return {
        "Id": cid, "Created": "2026-11-19T08:12:44.123456789Z", "Path": path, "Args": args,
        "State": {"Status": status, "Running": status == "running", "Paused": False,
                  "Restarting": status == "restarting", "OOMKilled": False, "Dead": False,
                  "Pid": 48213 if status == "running" else 0, "ExitCode": exit_code,
                  "Error": "", "StartedAt": "2026-11-19T08:12:45.0Z",
                  "FinishedAt": "0001-01-01T00:00:00Z"},
        "Image": "sha256:" + "ab" * 32, "Name": "/" + name, "RestartCount": restarts,
        "HostConfig": {"RestartPolicy": {"Name": policy, "MaximumRetryCount": 0},
                       "IpcMode": ipc, "ShmSize": shm, "Runtime": "runc",
                       "DeviceRequests": [{"Driver": "", "Count": -1 if gpus is None else 0,
                                           "DeviceIDs": gpus, "Capabilities": [["gpu"]],
                                           "Options": {}}], "Devices": []},
        "Mounts": [{"Type": "bind", "Source": models, "Destination": "/models", "Mode": "ro",
                    "RW": False, "Propagation": "rprivate"}],
        "Config": {"Hostname": cid[:12], "User": "", "Env": env, "Cmd": [path, *args],
                   "Image": "lmsysorg/sglang:v0.5.5-cu126", "Entrypoint": None,
                   "Labels": labels or {}},
    }


@pytest.fixture
def docker_host(tmp_path: Path) -> Host:
    models = tmp_path / "data/models"
    cfg = models / "deepseek-ai/DeepSeek-V3"
    cfg.mkdir(parents=True)
    (cfg / "config.json").write_text(json.dumps({"architectures": ["DeepseekV3ForCausalLM"],
                                                 "num_hidden_layers": 61}))
    sglang = _container(
        "sglang-dsv3-sglang-1", "python3",
        ["-m", "sglang.launch_server", "--model-path", "/models/deepseek-ai/DeepSeek-V3",
         "--tp-size", "8", "--host", "0.0.0.0", "--port", "30000", "--trust-remote-code"],
        ["NCCL_P2P_LEVEL=NVL", "NCCL_IB_DISABLE=1", "NCCL_DEBUG=WARN",
         "PATH=/usr/local/nvidia/bin:/usr/local/cuda/bin:/usr/bin:/bin", "HOME=/root",
         "HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz0123456789"],
        "running", 0, "unless-stopped", "host", 67108864, str(models),
        labels={"com.docker.compose.project": "sglang-dsv3",
                "com.docker.compose.project.config_files": "/opt/sglang-dsv3/compose.yaml",
                "com.docker.compose.service": "sglang"})
    old = _container(
        "vllm-old", "vllm", ["serve", "/models/deepseek-ai/DeepSeek-V3",
                             "--tensor-parallel-size", "2"],
        ["NCCL_PROTO=LL", "PATH=/usr/bin:/bin"], "exited", 1, "no", "private", 67108864,
        str(models), gpus=["0", "1"])
    bindir = tmp_path / "bin"
    bindir.mkdir()
    # The fake's data lies beside it: the kernel sandbox mounts the program's own directory,
    # not the rest of /tmp, which it empties.
    (bindir / "ps.jsonl").write_text("".join(json.dumps(r) + "\n" for r in (
        {"Command": "\"python3 -m sglang.launch_server --model-path /models/deepseek-ai/"
                    "DeepSeek-V3 --tp-size 8\"", "ID": sglang["Id"], "Image":
         "lmsysorg/sglang:v0.5.5-cu126", "Names": "sglang-dsv3-sglang-1", "State": "running"},
        {"Command": "\"vllm serve /models/deepseek-ai/DeepSeek-V3\"", "ID": old["Id"],
         "Image": "vllm/vllm-openai:v0.11.0", "Names": "vllm-old", "State": "exited"},
        {"Command": "\"docker-entrypoint.sh redis-server\"", "ID": "c" * 64,
         "Image": "redis:7", "Names": "cache", "State": "running"})))
    for c in (sglang, old):
        (bindir / f"inspect-{c['Name'][1:]}.json").write_text(json.dumps([c], indent=4) + "\n")
    fake = bindir / "docker"
    # No file may be written under run_command (RLIMIT_FSIZE is 0), so the fake says what it
    # was asked by failing: any other call than these is an error. (`cache` may be inspected:
    # its entrypoint is a shell script, which could start a server; it answers as Docker does
    # for a container it does not know.)
    fake.write_text(f"""#!/bin/sh
case "$*" in
  "ps --all --no-trunc --format {{{{json .}}}}") cat {bindir}/ps.jsonl ;;
  "inspect --type container "*)
    f={bindir}/inspect-$4.json
    if [ -f "$f" ] && [ $# -eq 4 ]; then cat "$f"; else
      echo "[]"; echo "Error: No such container: $4" >&2; exit 1; fi ;;
  logs) echo "[2026-11-19 08:13:02] server_args=ServerArgs(kv_cache_dtype='auto')" ;;
  *) echo "unexpected: $*" >&2; exit 2 ;;
esac
""")
    fake.chmod(0o755)
    return Host(root=Root("/", allow=(str(tmp_path),)), command_timeout_s=10.0,
                trusted_bin_dirs=(str(bindir), *TRUSTED_BIN_DIRS))


def investigate(host: Host, question: str, tasks: list[str]) -> Outcome:
    orch = Orchestrator.catalog(host)
    cap = _Capture()
    orch.synthesizer = cap
    answer = anyio.run(lambda: orch.investigate(question, tasks=tasks))
    return Outcome(answer, {r.task_id: r for r in cap.results})


def test_the_running_container_serves_with_its_own_environment(docker_host: Host) -> None:
    out = investigate(docker_host, "Is NCCL tuned for this topology?",
                      ["service-unit", "nccl-env"])
    unit = out.results["service-unit"]
    host = unit.facts["host"].value
    by_name = {s["name"]: s for s in host["servers"]}
    assert set(by_name) == {"sglang-dsv3-sglang-1", "vllm-old"}  # redis is not a server
    assert host["current"] == "sglang-dsv3-sglang-1" and not host["ambiguous"]
    cur = by_name["sglang-dsv3-sglang-1"]
    assert (cur["engine"], cur["tp"], cur["state"], cur["enabled"], cur["runtime"]) == (
        "sglang", 8, "running", True, "compose")
    assert cur["gpus"] == "all GPUs"
    assert cur["model"].endswith("/data/models/deepseek-ai/DeepSeek-V3")  # the host's path
    old = by_name["vllm-old"]
    assert (old["state"], old["enabled"], old["tp"], old["gpus"]) == ("failed", False, 2,
                                                                      "GPUs 0,1")
    nccl = out.results["nccl-env"].facts["nccl_tuning"].value
    assert {r["name"]: r["value"] for r in nccl} == {"NCCL_P2P_LEVEL": "NVL",
                                                     "NCCL_IB_DISABLE": "1"}
    assert all(r["source"] == "docker inspect sglang-dsv3-sglang-1, Config.Env" for r in nccl)
    text = json.dumps([r.model_dump(mode="json") for r in out.results.values()])
    assert "hf_abcdefghijklmnopqrstuvwxyz" not in text  # a token in Config.Env never leaks


def test_a_private_64_mib_shm_is_a_problem_for_a_multi_gpu_container(docker_host: Host,
                                                                      tmp_path: Path) -> None:
    data = json.loads((tmp_path / "bin" / "inspect-vllm-old.json").read_text())
    data[0]["State"].update(Status="running", Running=True, ExitCode=0)
    (tmp_path / "bin" / "inspect-vllm-old.json").write_text(json.dumps(data, indent=4))
    rows = (tmp_path / "bin" / "ps.jsonl").read_text().splitlines()
    kept = "\n".join(r for r in rows if "sglang" not in r)
    (tmp_path / "bin" / "ps.jsonl").write_text(kept + "\n")
    out = investigate(docker_host, "Which server runs?", ["service-unit"])
    alerts = " ".join(c.claim for r in out.results.values() for c in r.findings)
    assert "vllm-old" in alerts
    facts = out.results["service-unit"].facts
    assert facts["unit"].value["name"] == "vllm-old"
    assert any("/dev/shm is 64 MiB" in p for p in facts["unit"].value.get("problems", [])), \
        facts["unit"].value


def test_a_container_inspect_cannot_read_is_still_found_from_ps(docker_host: Host,
                                                                 tmp_path: Path) -> None:
    (tmp_path / "bin" / "inspect-sglang-dsv3-sglang-1.json").unlink()  # e.g. not in a snapshot
    out = investigate(docker_host, "Which server runs?", ["service-unit"])
    host = out.results["service-unit"].facts["host"].value
    by_name = {s["name"]: s for s in host["servers"]}
    sg = by_name["sglang-dsv3-sglang-1"]
    assert (sg["engine"], sg["tp"], sg["state"]) == ("sglang", 8, "running")
    assert host["current"] == "sglang-dsv3-sglang-1"  # the other one exited
    notes = " ".join(out.results["service-unit"].facts["unit"].value["notes"])
    assert "environment (NCCL settings), mounts and restart policy are unknown" in notes


def test_without_docker_the_answer_names_where_it_looked(tmp_path: Path) -> None:
    host = Host(root=Root("/", allow=(str(tmp_path),)), command_timeout_s=10.0,
                trusted_bin_dirs=(str(tmp_path / "nothing"),))
    out = investigate(host, "Is NCCL tuned?", ["service-unit"])
    r = out.results["service-unit"]
    assert r.status != "ok"
    why = " ".join(r.errors)
    assert "no model server found" in why
    assert "`docker ps` (not available here)" in why and "systemd units (5 unit directories" in why


def test_a_snapshot_of_the_live_host_answers_the_same_offline(docker_host: Host,
                                                              tmp_path: Path) -> None:
    from agentkit._snapshot import take_snapshot

    snap = tmp_path / "snap"
    anyio.run(take_snapshot, docker_host, snap)
    manifest = json.loads((snap / ".agentkit/snapshot.json").read_text())
    argvs = [c["argv"] for c in manifest["commands"]]
    assert ["docker", "inspect", "--type", "container", "sglang-dsv3-sglang-1"] in argvs
    assert "hf_abcdefghijklmnopqrstuvwxyz" not in "".join(
        p.read_text() for p in (snap / ".agentkit/commands").iterdir())
    live = investigate(docker_host, "Is NCCL tuned?", ["service-unit", "nccl-env"])
    offline = investigate(Host.at(snap), "Is NCCL tuned?", ["service-unit", "nccl-env"])
    for out in (live, offline):
        assert out.results["service-unit"].facts["host"].value["current"] == \
            "sglang-dsv3-sglang-1"
    rows = [{r["name"]: r["value"] for r in o.results["nccl-env"].facts["nccl_tuning"].value}
            for o in (live, offline)]
    assert rows[0] == rows[1] == {"NCCL_P2P_LEVEL": "NVL", "NCCL_IB_DISABLE": "1"}
