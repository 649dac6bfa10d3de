"""The benchmarks run and report what they promise (their numbers are read by people, not
asserted here: the machines are shared and noisy)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from .conftest import REPO


def test_quick_fanout_prints_one_json_line() -> None:
    done = subprocess.run([sys.executable, "-m", "benchmarks.fanout", "--quick"], cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 1
    got = json.loads(lines[0])
    assert set(got) >= {"ratio_to_floor", "cpu_ms_per_call", "floor_cpu_ms_per_call"}
    assert got["n"] == 128 and got["k"] == 3
    assert got["ratio_to_floor"] > 0 and got["cpu_ms_per_call"] > 0


def test_mock_server_scripts_tool_calls_then_the_answer() -> None:
    from benchmarks.mock_server import _reply

    first = json.loads(_reply(b'{"messages": []}', 3))
    assert first["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "echo"
    done = b'{"messages": [' + b'{"role":"tool"},' * 3 + b'], "submit_result"}'
    last = json.loads(_reply(done, 3))["choices"][0]["message"]
    assert last["tool_calls"][0]["function"]["name"] == "submit_result"
    plain = json.loads(_reply(b'{"role": "tool"}' * 3, 3))["choices"][0]["message"]
    assert plain["content"] == "done"


def test_a_big_host_still_finds_its_server_without_reading_every_unit(tmp_path: Path) -> None:
    # 600 units (more than one listing holds), a tenth of them Python services: the serving
    # unit is found, and no unit that cannot start an engine is parsed.
    from benchmarks.host_cost import build
    from tests.scenarios.runner import investigate

    root = build(tmp_path, units=600, models=5, packages=10)
    out = investigate(root, "Is NCCL tuned?", ["service-unit"])
    host = out.results["service-unit"].facts["host"].value
    assert host["current"] == "vllm-kimi.service"
    read = {e.locator.split(":")[0] for e in out.results["service-unit"].evidence}
    assert not [p for p in read if "/svc" in p], sorted(read)  # no other unit was parsed
