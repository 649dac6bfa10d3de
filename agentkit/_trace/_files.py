"""Where runs are traced when no file is named: a directory of ``run-*.jsonl.gz`` files
(gzip; older runs ``run-*.jsonl``) that keeps the newest runs, bounded by count
(``AGENTKIT_TRACE_KEEP``) and by size (``AGENTKIT_TRACE_MAX_MB``). The CLI and the MCP
server both name their traces here.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

# A run's trace is written gzip-compressed (".jsonl.gz"); older runs are plain ".jsonl".
SUFFIXES = (".jsonl.gz", ".jsonl")


class TraceDirError(ValueError):
    """No trace file can be made: the message says why and what to set."""


def new_trace_path() -> str:
    """A new trace file in the trace directory: a unique name (two runs in the same second
    never share one), and only the newest ``AGENTKIT_TRACE_KEEP`` (default 200) of the runs
    kept there, in at most ``AGENTKIT_TRACE_MAX_MB`` (default 100); older ones are removed."""
    import secrets
    import time

    base = trace_dir()
    try:
        os.makedirs(base, exist_ok=True)
    except OSError as exc:
        raise TraceDirError(
            f"cannot create the trace directory {base}: {exc.strerror}; set "
            "AGENTKIT_TRACE_DIR to a writable directory or pass --trace FILE") from None
    name = time.strftime("run-%Y%m%d-%H%M%S") + f"-{secrets.token_hex(3)}.jsonl.gz"
    prune_traces(base, _keep(), _max_bytes())
    return os.path.join(base, name)


def trace_dir() -> str:
    """The trace directory: ``$AGENTKIT_TRACE_DIR``, else ``$XDG_STATE_HOME/agentkit/traces``
    (``~/.local/state`` when unset); it may not exist yet."""
    return os.environ.get("AGENTKIT_TRACE_DIR") or os.path.join(
        os.environ.get("XDG_STATE_HOME") or os.path.expanduser("~/.local/state"),
        "agentkit", "traces")


def _keep() -> int:
    raw = os.environ.get("AGENTKIT_TRACE_KEEP", "200")
    try:
        keep = int(raw)
    except ValueError:
        keep = -1
    if keep < 1:
        raise TraceDirError(
            f"AGENTKIT_TRACE_KEEP={raw!r} must be a whole number of runs, at least 1")
    return keep


def _max_bytes() -> int:
    raw = os.environ.get("AGENTKIT_TRACE_MAX_MB", "100")
    try:
        mb = float(raw)
    except ValueError:
        mb = -1.0
    if not mb > 0 or mb == float("inf"):
        raise TraceDirError(
            f"AGENTKIT_TRACE_MAX_MB={raw!r} must be a positive number of megabytes")
    return int(mb * 1_000_000)


def prune_traces(base: str, keep: int, max_bytes: int | None = None) -> list[str]:
    """Remove the oldest run traces until ``keep - 1`` are left (the run about to start is
    the keep-th) and, given ``max_bytes``, until those left take less than it (room for the
    new run); only files named here (``run-*.jsonl``, ``run-*.jsonl.gz``) are touched."""
    import contextlib

    files = trace_files(base)
    total = sum(f.size for f in files)
    gone: list[str] = []
    for n, f in enumerate(files):
        left = len(files) - n
        if left <= keep - 1 and (max_bytes is None or total < max_bytes):
            break
        with contextlib.suppress(OSError):
            os.unlink(f.path)
        total -= f.size
        gone.append(f.name)
    return gone


@dataclass(frozen=True)
class TraceFile:
    """A run's trace in the trace directory."""

    path: str
    name: str
    size: int
    mtime: float


def trace_files(base: str) -> list[TraceFile]:
    """The run traces (``run-*.jsonl`` and ``run-*.jsonl.gz``) in ``base``, oldest first (by
    name: it starts with the run's time)."""
    try:
        names = sorted(n for n in os.listdir(base)
                       if n.startswith("run-") and n.endswith(SUFFIXES))
    except OSError:
        return []
    out = []
    for n in names:
        path = os.path.join(base, n)
        try:
            st = os.stat(path)
        except OSError:
            continue  # removed meanwhile
        out.append(TraceFile(path, n, st.st_size, st.st_mtime))
    return out
