"""Engine processes started by hand on a live host (`--root /`): real processes started by the
test, read through /proc by the `serving_processes` tool, then captured into a snapshot.

Expected from the kernel's and the engines' semantics, written before running:
- the process's argv is its /proc/<pid>/cmdline; `vllm serve MODEL --tensor-parallel-size 2`
  is vLLM serving MODEL with TP 2;
- its environment is /proc/<pid>/environ: NCCL_* in it are in effect; a token is never
  returned (HF_TOKEN is withheld by name, a key-looking value is redacted);
- a process started from a shell is running, and nothing restarts it at boot;
- a snapshot serves the same reading offline.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from agentkit import Host, Sandbox
from agentkit._sandbox._paths import Root

from .test_runtimes_live import investigate

SECRET = "hf_" + "Q" * 34


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    # A stand-in named `vllm` (a shell script: /proc shows `/bin/sh …/vllm serve …`), started
    # the way someone starts a server by hand.
    fake = tmp_path / "venv/bin/vllm"
    fake.parent.mkdir(parents=True)
    fake.write_text("#!/bin/sh\nsleep 60\n")
    fake.chmod(0o755)
    env = {"PATH": "/usr/bin:/bin", "NCCL_P2P_LEVEL": "NVL", "NCCL_ALGO": "Ring",
           "NCCL_DEBUG": "INFO", "HF_TOKEN": SECRET, "CUDA_VISIBLE_DEVICES": "0,1",
           "UNRELATED": "x"}
    proc = subprocess.Popen([str(fake), "serve", str(tmp_path / "models/org/Model-7B"),
                             "--tensor-parallel-size", "2", "--api-key", "sk-" + "z" * 40],
                            env=env, cwd=tmp_path, start_new_session=True)
    for _ in range(100):  # until the shell has exec'd and /proc shows its argv
        if b"serve" in Path(f"/proc/{proc.pid}/cmdline").read_bytes():
            break
        time.sleep(0.01)
    yield proc
    proc.kill()
    proc.wait()


def test_the_tool_reads_argv_and_only_the_environment_that_matters(
        engine: subprocess.Popen[bytes], tmp_path: Path) -> None:
    host = Host(root=Root("/", allow=(str(tmp_path),)))
    r = anyio.run(Sandbox(host, task_id="t").call, "serving_processes", {})
    assert r.ok, r.error
    mine = [p for p in r.data["processes"] if p["pid"] == engine.pid]
    assert len(mine) == 1, r.data
    p = mine[0]
    assert p["argv"][1:4] == [str(tmp_path / "venv/bin/vllm"), "serve",
                              str(tmp_path / "models/org/Model-7B")]
    assert p["env"]["NCCL_P2P_LEVEL"] == "NVL" and p["env"]["CUDA_VISIBLE_DEVICES"] == "0,1"
    assert "UNRELATED" not in p["env"] and p["env"]["HF_TOKEN"] == "[withheld]"
    assert p["cwd"] == str(tmp_path) and p["ppid"] == os.getpid()
    assert SECRET not in json.dumps(r.data) and "z" * 40 not in json.dumps(r.data)
    assert SECRET not in json.dumps([e.model_dump(mode="json") for e in r.evidence])


def test_a_process_started_by_hand_is_found_and_answers(engine: subprocess.Popen[bytes],
                                                        tmp_path: Path) -> None:
    host = Host(root=Root("/", allow=(str(tmp_path),)), command_timeout_s=10.0)
    out = investigate(host, "Is NCCL tuned?", ["service-unit", "nccl-env"])
    facts = out.results["service-unit"].facts
    servers = {s["name"]: s for s in facts["host"].value["servers"]}
    me = servers[f"pid {engine.pid}"]
    assert (me["runtime"], me["engine"], me["tp"], me["state"], me["enabled"]) == (
        "process", "vllm", 2, "running", False)
    if len(servers) == 1:  # another engine on this machine would make it a real choice
        assert facts["host"].value["current"] == f"pid {engine.pid}"
        rows = out.results["nccl-env"].facts["nccl_tuning"].value
        assert {r["name"]: r["value"] for r in rows} == {"NCCL_P2P_LEVEL": "NVL",
                                                         "NCCL_ALGO": "Ring"}


def test_a_snapshot_serves_the_processes_it_captured(engine: subprocess.Popen[bytes],
                                                     tmp_path: Path) -> None:
    out = tmp_path / "snap"
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    subprocess.run([sys.executable, "-m", "agentkit", "snapshot", str(out), "--root", "/"],
                   check=True, env=env, capture_output=True, timeout=120)
    manifest = json.loads((out / ".agentkit/snapshot.json").read_text())
    assert manifest["processes"] == "processes.json"
    captured = json.loads((out / ".agentkit/processes.json").read_text())
    assert any(p["pid"] == engine.pid for p in captured)
    assert SECRET not in (out / ".agentkit/processes.json").read_text()
    r = anyio.run(Sandbox(Host.at(out), task_id="t").call, "serving_processes", {})
    assert r.ok and any(p["pid"] == engine.pid for p in r.data["processes"])
    assert r.data["source"].startswith("snapshot ")


def test_a_secret_flags_value_is_withheld_whatever_it_looks_like() -> None:
    # argv holds `--api-key` and its value as two elements: redacted one by one, the value
    # is a bare string no rule recognises (the red team read keys this way)
    from agentkit._sandbox._procs import redact_argv

    argv = ["vllm", "serve", "/m", "--api-key", "plainvalue1", "--ssl-keyfile-password", "pw",
            "--hf-token", "-dash", "--tokenizer", "/m/tok", "--max-num-batched-tokens", "8192",
            "--ssl-keyfile", "/etc/k.pem", "--kv-cache-dtype", "fp8"]
    out = redact_argv(argv)
    assert [out[i] for i in (4, 6, 8)] == ["[withheld]"] * 3
    assert out[9:] == argv[9:]  # tokenizer paths, token counts and key file paths stay


def test_short_secret_words_are_withheld_as_whole_parts_of_a_name() -> None:
    # red team round 2: VLLM_PW, HF_HUB_PWD, SGLANG_PASS came back; NCCL_IB_PCI_* must not go
    from agentkit._sandbox._procs import _SECRET_NAME, redact_argv

    for name in ("VLLM_PW", "HF_HUB_PWD", "SGLANG_PASS", "TORCH_DIST_SALT", "OMP_LICENSE",
                 "VLLM_ADMIN_PIN"):
        assert _SECRET_NAME.search(name), name
    for name in ("NCCL_IB_PCI_RELAXED_ORDERING", "VLLM_SPINNER", "NCCL_P2P_LEVEL",
                 "CUDA_DEVICE_ORDER", "VLLM_PASSTHROUGH_X"):
        assert not _SECRET_NAME.search(name), name
    argv = ["vllm", "serve", "m", "--pw", "Ap1Pw5Xq9Lm3", "--admin-pin", "4711", "--hmac", "h"]
    assert redact_argv(argv)[4] == redact_argv(argv)[6] == redact_argv(argv)[8] == "[withheld]"
