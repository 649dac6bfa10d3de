"""The benchmarks run and report what they promise (their numbers are read by people, not
asserted here: the machines are shared and noisy)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

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


def test_mock_server_gives_every_subagent_and_step_its_own_tool_arguments() -> None:
    # The issue: every subagent sent the same echo arguments, so a tool cache answered all
    # but K of the N x K calls. Each call now names its subagent and step.
    from benchmarks.mock_server import _reply

    def args(body: bytes) -> str:
        msg = json.loads(_reply(body, 3))["choices"][0]["message"]
        return str(msg["tool_calls"][0]["function"]["arguments"])

    seen = {args(b'{"content": "subagent-%d: go"}' % i + b'{"role":"tool"}' * step)
            for i in range(5) for step in range(3)}
    assert len(seen) == 15
    assert "subagent-4 step 2" in args(b'"subagent-4: go"' + b'{"role":"tool"}' * 2)


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_the_harness_runs_end_to_end_and_the_table_is_the_results_file(tmp_path: Path) -> None:
    # Tiny N, one rep: the floor, agentkit through its public API, a peer when installed,
    # and a runner that cannot run. Every row is written; the failure is a row with its
    # error and costs the others nothing; the rendered ratios are computed from the file.
    from benchmarks import render

    out = tmp_path / "r.jsonl"
    runners = ["floor", "agentkit:default", "no-such-runner"]
    if importlib.util.find_spec("agents") and importlib.util.find_spec("openai"):
        runners.insert(2, "openai-agents:best")
    done = subprocess.run([sys.executable, "-m", "benchmarks.fanout", "--n", "2", "--reps",
                           "1", "--tools", "async", "--runners", *runners, "--out", str(out)],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    rows = _rows(out)
    assert rows[0]["kind"] == "session" and rows[-1]["kind"] == "end"
    runs = {r["runner"]: r for r in rows if r["kind"] == "run"}
    assert set(runs) == set(runners)
    for name in runners[:-1]:
        assert runs[name]["status"] == "ok", runs[name]
        assert runs[name]["server_requests"] == 2 * 4
        assert runs[name]["tool_body_calls"] == 2 * 3  # every call ran: distinct arguments
    ak = runs["agentkit:default"]
    assert ak["cache_hits"] == 0 and ak["trace_bytes_per_subagent"] > 0
    assert ak["request_kib_per_call"] > runs["floor"]["request_kib_per_call"]  # built-ins
    assert runs["no-such-runner"]["status"] == "failed"
    assert "unknown runner" in runs["no-such-runner"]["error"]

    text = render.render(out)
    ratio = ak["wall_s"] / runs["floor"]["wall_s"]
    assert f"| agentkit, as shipped, `async def` tool | {ratio:.2f} |" in text
    assert f"| agentkit, as shipped, `async def` tool | {ak['cpu_ms_per_call']:.2f} |" in text
    assert "| **floor** (plain aiohttp loop) | 1.00 |" in text
    assert "failed [1]" in text and "unknown runner" in text


def test_a_runner_past_its_limit_is_a_row_and_is_not_retried_at_larger_n(
        tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    done = subprocess.run([sys.executable, "-m", "benchmarks.fanout", "--n", "2", "4",
                           "--reps", "1", "--runners", "floor", "--timeout", "0.01",
                           "--out", str(out)],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    runs = [r for r in _rows(out) if r["kind"] == "run"]
    assert [(r["n"], r["status"]) for r in runs] == [(2, "timeout"), (4, "skipped")]
    assert "timeout at N=2" in runs[1]["error"]


def test_the_doc_shows_exactly_what_the_committed_results_file_holds(tmp_path: Path) -> None:
    from benchmarks import render

    doc = REPO / "docs" / "benchmarks.md"
    results = REPO / "benchmarks" / "results" / "fanout.jsonl"
    assert render.main([str(results), "--doc", str(doc), "--check"]) == 0, (
        "docs/benchmarks.md is stale: run python -m benchmarks.render --doc docs/benchmarks.md")
    # ... and the check can fail: one figure typed by hand inside the section
    edited = tmp_path / "benchmarks.md"
    text = doc.read_text()
    start = text.index(render.BEGIN) + len(render.BEGIN)
    i = text.index("| 1.00", start)
    edited.write_text(text[:i] + "| 0.99" + text[i + 6:])
    assert render.main([str(results), "--doc", str(edited), "--check"]) == 1


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
