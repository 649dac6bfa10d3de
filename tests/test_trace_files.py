"""Traces that do not fill the disk (issue 25 item 5): the trace directory keeps its runs
gzip-compressed, bounded by count and by size; every command reads old (plain) and new
(compressed) traces alike, a crash-cut compressed trace too; ``trace list`` shows them."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agentkit._trace import Trace
from agentkit._trace._read import read_trace

from .conftest import EXAMPLES, REFERENCE_QUESTION, REPO


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agentkit", *args], cwd=REPO, timeout=120,
                          capture_output=True, text=True,
                          env={**os.environ, "AGENTKIT_CONFIG": "/dev/null", **(env or {})})


def test_the_reference_run_takes_at_most_a_fifth_and_every_command_reads_it(
        tmp_path: Path) -> None:
    traces = tmp_path / "traces"
    root = str(EXAMPLES / "blackwell-kimi")
    plain = tmp_path / "plain.jsonl"
    assert _cli("ask", REFERENCE_QUESTION, "--root", root, "--trace", str(plain)).returncode == 0
    assert _cli("ask", REFERENCE_QUESTION, "--root", root,
                env={"AGENTKIT_TRACE_DIR": str(traces)}).returncode == 0
    [kept] = list(traces.iterdir())
    assert kept.name.endswith(".jsonl.gz")
    assert gzip.decompress(kept.read_bytes()).startswith(b'{"v":')  # gzip, not a format of
    assert kept.stat().st_size * 5 <= plain.stat().st_size, (kept.stat().st_size,  # its own
                                                              plain.stat().st_size)
    for trace in (kept, plain):
        show = _cli("trace", "show", str(trace))
        assert show.returncode == 0 and "Plan" in show.stdout, show.stderr
        again = _cli("replay", str(trace))
        assert again.returncode == 0 and "answer identical" in again.stderr, again.stderr
        report = _cli("report", str(trace), "-o", str(tmp_path / "r.html"))
        assert report.returncode == 0 and "<html" in (tmp_path / "r.html").read_text()


def test_committed_plain_traces_are_still_read() -> None:
    for name in ("blackwell-kimi.jsonl", "hopper-deepseek.jsonl"):
        show = _cli("trace", "show", str(EXAMPLES / "traces" / name))
        assert show.returncode == 0, show.stderr


def test_a_crash_cut_compressed_trace_reads_up_to_where_it_stopped(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl.gz"
    t = Trace(str(path))
    run = t.start("run", data={"question": "q?", "root": "/"})
    for i in range(50):
        t.emit("note", data={"i": i, "pad": "x" * 100})
    t.flush()
    cut = tmp_path / "cut.jsonl.gz"
    shutil.copy(path, cut)  # what a killed process leaves: no gzip trailer, no run end
    t.end(run, "run", data={"status": "ok"})
    t.close()
    whole = read_trace(str(path))
    assert whole.complete and len(whole.events) == 53
    got = read_trace(str(cut))
    assert got.truncated and len(got.events) == 52
    assert "interrupted" in " ".join(got.notes)


def test_a_small_file_cannot_decompress_past_the_limit(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from agentkit._trace import _read
    from agentkit._trace._read import TraceError

    monkeypatch.setattr(_read, "MAX_TRACE_BYTES", 1 << 20)
    bomb = tmp_path / "bomb.jsonl.gz"
    bomb.write_bytes(gzip.compress(b"\n" * (64 << 20)))
    assert bomb.stat().st_size < 100_000
    with pytest.raises(TraceError, match="larger than"):
        read_trace(str(bomb))


def _run_file(base: Path, name: str, size: int) -> Path:
    p = base / name
    p.write_bytes(b"x" * size)
    return p


def test_retention_is_bounded_by_size_as_well_as_count(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from agentkit._trace._files import TraceDirError, new_trace_path

    tmp_path = tmp_path / "traces"
    tmp_path.mkdir()
    monkeypatch.setenv("AGENTKIT_TRACE_DIR", str(tmp_path))
    monkeypatch.setenv("AGENTKIT_TRACE_KEEP", "100")
    monkeypatch.setenv("AGENTKIT_TRACE_MAX_MB", "1")
    for i in range(6):  # 6 × 300 kB, old plain and new compressed mixed
        _run_file(tmp_path, f"run-2026010{i}-000000-aaaaaa.jsonl" + (".gz" if i % 2 else ""),
                  300_000)
    (tmp_path / "mine.txt").write_bytes(b"x" * 5_000_000)  # not a run: never counted, kept
    new_trace_path()
    left = sorted(p.name for p in tmp_path.iterdir())
    # the newest runs that fit under 1 MB with room for the next: 3 × 300 kB
    assert left == ["mine.txt", "run-20260103-000000-aaaaaa.jsonl.gz",
                    "run-20260104-000000-aaaaaa.jsonl", "run-20260105-000000-aaaaaa.jsonl.gz"]
    monkeypatch.setenv("AGENTKIT_TRACE_MAX_MB", "none")
    with pytest.raises(TraceDirError, match="AGENTKIT_TRACE_MAX_MB"):
        new_trace_path()


def test_trace_list_names_question_time_status_and_size(tmp_path: Path) -> None:
    traces = tmp_path / "traces"
    env = {"AGENTKIT_TRACE_DIR": str(traces)}
    assert _cli("ask", "Which GPUs?", "--root", str(EXAMPLES / "hopper-deepseek"),
                env=env).returncode == 0
    shutil.copy(EXAMPLES / "traces" / "blackwell-kimi.jsonl",
                traces / "run-20200101-000000-aaaaaa.jsonl")  # an old, plain one
    t = Trace(str(traces / "run-20200102-000000-bbbbbb.jsonl.gz"))
    t.start("run", data={"question": "cut short?", "root": "/"})
    t.flush()  # never closed: interrupted
    done = _cli("trace", "list", env=env)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["name", "when", "status", "size", "question"]
    assert "Which GPUs?" in lines[1] and " ok " in lines[1]  # newest first
    assert "cut short?" in lines[2] and "interrupted" in lines[2]
    assert "run-20200101-000000-aaaaaa.jsonl" in lines[3] and "Do previous" in lines[3]
    assert lines[-1].startswith("3 runs,")
    runs = json.loads(_cli("trace", "list", "--json", env=env).stdout)
    assert [r["status"] for r in runs] == ["ok", "interrupted", "ok"]
    assert all(r["size"] == os.path.getsize(r["path"]) for r in runs)


def test_a_file_that_only_starts_like_gzip_is_one_error(tmp_path: Path) -> None:
    from agentkit._trace._read import TraceError

    bad = tmp_path / "bad.jsonl.gz"
    bad.write_bytes(b"\x1f\x8b" + b"not deflate at all" * 10)
    with pytest.raises(TraceError, match="line 1: not a gzip stream agentkit wrote"):
        read_trace(str(bad))
    done = _cli("trace", "show", str(bad))
    assert done.returncode == 2 and "Traceback" not in done.stderr
