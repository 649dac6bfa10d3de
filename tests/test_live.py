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
    assert "catalog mode · 9/9 tasks done" in screen
    for task in ("nccl-env", "kv-cache-dtype-support", "model-diff", "software-stack"):
        assert re.search(rf"{task}\s+ok\s+\d+\.\d\ds", screen), task
    assert "Bottom line" in screen and "## Bottom line" not in screen  # rendered Markdown


def test_plain_lines_when_not_a_tty(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "agentkit", "ask", REFERENCE_QUESTION, "--root",
                           str(EXAMPLES / "blackwell-kimi"), "--trace", str(tmp_path / "t.jsonl")],
                          capture_output=True, text=True, timeout=60, cwd=REPO)
    assert done.returncode == 0
    assert "task finished" in done.stderr and "\x1b[" not in done.stderr
    assert done.stdout.startswith("# Do previous optimizations")
    quiet = subprocess.run([sys.executable, "-m", "agentkit", "ask", REFERENCE_QUESTION,
                            "--root", str(EXAMPLES / "blackwell-kimi"), "-q", "--trace",
                            str(tmp_path / "q.jsonl")],
                           capture_output=True, text=True, timeout=60, cwd=REPO)
    assert quiet.returncode == 0 and quiet.stderr == ""
