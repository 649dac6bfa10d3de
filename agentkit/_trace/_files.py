"""Where runs are traced when no file is named: a directory of ``run-*.jsonl`` files that
keeps the newest runs. The CLI and the MCP server both name their traces here.
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
    kept there; older ones are removed."""
    import secrets
    import time

    base = trace_dir()
    try:
        os.makedirs(base, exist_ok=True)
    except OSError as exc:
        raise TraceDirError(
            f"cannot create the trace directory {base}: {exc.strerror}; set "
            "AGENTKIT_TRACE_DIR to a writable directory or pass --trace FILE") from None
    name = time.strftime("run-%Y%m%d-%H%M%S") + f"-{secrets.token_hex(3)}.jsonl"
    prune_traces(base, _keep())
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


def prune_traces(base: str, keep: int) -> list[str]:
    """Remove all but the newest ``keep - 1`` run traces (the run about to start is the
    keep-th); only files named here (``run-*.jsonl``) are touched."""
    import contextlib

    try:
        names = sorted(n for n in os.listdir(base)
                       if n.startswith("run-") and n.endswith(".jsonl"))
    except OSError:
        return []
    gone = names[: max(0, len(names) - (keep - 1))]
    for n in gone:
        with contextlib.suppress(OSError):
            os.unlink(os.path.join(base, n))
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
