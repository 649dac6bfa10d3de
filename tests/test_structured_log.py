"""Structured logging (issue 25 item 11): ``--log-format json`` writes one JSON object per
line through structlog, the library's own warnings included; structlog is imported only when
a line is written, so a quiet run's start-up does not pay for it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from .conftest import EXAMPLES, REPO

_NO_BWRAP = ("import sys; from agentkit._sandbox import _kernel; "
             "_kernel.BWRAP = '/nonexistent/bwrap'; from agentkit.cli import main; "
             "sys.exit(main(sys.argv[1:]))")


def _ask(tmp_path: Path, *extra: str, head: tuple[str, ...] = ("-m", "agentkit"),
         importtime: bool = False) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *(["-X", "importtime"] if importtime else []), *head, "ask",
         "Which kernel version?", "--root", str(EXAMPLES / "blackwell-kimi"), *extra],
        cwd=REPO, capture_output=True, text=True, timeout=120,
        env={**os.environ, "AGENTKIT_TRACE_DIR": str(tmp_path), "AGENTKIT_CONFIG": "/dev/null",
             "AGENTKIT_SANDBOX": "auto"})


def test_json_lines_are_json_with_event_level_and_time(tmp_path: Path) -> None:
    done = _ask(tmp_path, "-v", "--log-format", "json")
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stderr.splitlines()]
    assert {"plan", "task started", "task finished", "run finished", "trace written"} <= {
        e["event"] for e in events}
    assert all({"event", "level", "timestamp"} <= set(e) for e in events)
    plan = next(e for e in events if e["event"] == "plan")
    assert plan["mode"] == "catalog" and plan["tasks"] == ["software-stack"]


def test_the_library_s_own_warning_is_a_json_line_too(tmp_path: Path) -> None:
    done = _ask(tmp_path, "--log-format", "json", head=("-c", _NO_BWRAP))
    assert done.returncode == 0, done.stderr
    [line] = done.stderr.splitlines()
    warning = json.loads(line)
    assert warning["level"] == "warning" and warning["logger"] == "agentkit.sandbox"
    assert "allowlist-only" in warning["event"] and "agentkit doctor" in warning["event"]


def test_structlog_is_imported_only_when_a_line_is_written(tmp_path: Path) -> None:
    def imported(done: subprocess.CompletedProcess[str]) -> bool:
        return any(line.rstrip().endswith("| structlog") for line in done.stderr.splitlines())

    quiet = _ask(tmp_path, "--log-format", "json", importtime=True)
    assert quiet.returncode == 0 and not imported(quiet)
    console = _ask(tmp_path, "-v", importtime=True)
    assert console.returncode == 0 and not imported(console)
    verbose = _ask(tmp_path, "-v", "--log-format", "json", importtime=True)
    assert verbose.returncode == 0 and imported(verbose)


def test_a_host_string_cannot_forge_a_json_line() -> None:
    import io

    from agentkit.cli._progress import _Lines

    out = io.StringIO()
    log = _Lines(out, 0, stamp=True, fmt="json")
    log.warning("tool refused", error='/etc/x\n{"event": "forged"}\x1b[31m')
    [line] = out.getvalue().splitlines()
    assert json.loads(line)["error"].endswith("\x1b[31m") and "\x1b" not in line
