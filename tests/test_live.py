"""Live progress and Markdown rendering on a real terminal (a pty), plain lines elsewhere."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
import time
from pathlib import Path

from .conftest import EXAMPLES, REFERENCE_QUESTION, REPO

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def test_live_display_on_a_tty(tmp_path: Path) -> None:
    master, slave = pty.openpty()
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "180", "LINES": "60"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentkit", "ask", REFERENCE_QUESTION, "--root",
         str(EXAMPLES / "blackwell-kimi"), "--trace", str(tmp_path / "t.jsonl")],
        stdin=slave, stdout=slave, stderr=slave, cwd=REPO, env=env, close_fds=True)
    os.close(slave)
    chunks: list[bytes] = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            data = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=30)
    os.close(master)
    screen = ANSI.sub("", b"".join(chunks).decode("utf-8", "replace"))
    assert proc.returncode == 0, screen[-2000:]
    assert re.search(r"catalog mode · (\d+)/\1 tasks done", screen), screen[-3000:]
    for task in ("nccl-env", "kv-cache-dtype-support", "model-diff", "software-stack"):
        assert re.search(rf"{task}\s+ok\s+\d+\.\d\ds", screen), task
    assert "Bottom line" in screen and "## Bottom line" not in screen  # rendered Markdown


def test_plain_lines_when_not_a_tty(tmp_path: Path) -> None:
    # Quiet by default where no one watches (CI logs, scripts): nothing on stderr, not even
    # where the trace went; -v gives the event log, plain lines without escape sequences.
    def ask(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "agentkit", "ask", REFERENCE_QUESTION,
                               "--root", str(EXAMPLES / "blackwell-kimi"), *extra],
                              capture_output=True, text=True, timeout=60, cwd=REPO,
                              env={**os.environ, "AGENTKIT_TRACE_DIR": str(tmp_path)})
    done = ask()
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert done.stdout.startswith("# Do previous optimizations")
    verbose = ask("-v")
    assert verbose.returncode == 0
    assert "task finished" in verbose.stderr and "\x1b[" not in verbose.stderr
    assert "trace written to" in verbose.stderr
    assert "[warning" not in verbose.stderr  # absent optional paths are not warnings
    quiet = ask("-q", "--trace", str(tmp_path / "q.jsonl"))
    assert quiet.returncode == 0 and quiet.stderr == ""
