"""What MCP ``replay`` may read: a trace inside the trace directory or an allowed root, read
once through a descriptor (what was checked is what is replayed: a link swapped in after
the check is not followed), and task directories it records only where the server allows.

A trace names the task directories of its run; a replay loads them. A trace written by
someone on the host could name any directory, and the catalog's errors quote what they
read (issue 28): so its task directories must be the server's own or inside an allowed root.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from typing import Any

from ._schema import _inside
from ._trace._read import read_trace

MAX_TRACE = 256 << 20


class ReplayRefused(Exception):
    """A trace (or what it names) that MCP replay does not read; the message says why."""


def private_trace(trace_path: str, roots: Sequence[str], dest_dir: str) -> str:
    """A private copy of the trace at ``trace_path`` (which must lie in ``roots``)."""
    real = os.path.realpath(trace_path)
    if not _inside(real, roots):
        raise ReplayRefused(f"{trace_path} is not in the trace directory or an allowed root")
    try:
        fd = os.open(real, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise ReplayRefused(f"no trace file at {trace_path} ({exc.strerror})") from None
    try:
        st = os.fstat(fd)
        # where the descriptor really is: a directory on the way swapped for a link after
        # the realpath above shows here
        opened = os.path.realpath(f"/proc/self/fd/{fd}")
        if not stat.S_ISREG(st.st_mode) or not _inside(opened, roots):
            raise ReplayRefused(f"no trace file at {trace_path}")
        if st.st_size > MAX_TRACE:
            raise ReplayRefused(f"{trace_path} is larger than {MAX_TRACE >> 20} MiB")
        copy = os.path.join(dest_dir, "trace.jsonl")
        with open(copy, "wb") as out:
            while chunk := os.read(fd, 1 << 20):
                out.write(chunk)
    finally:
        os.close(fd)
    return copy


def check_task_dirs(copy: str, allowed: Sequence[str], served: Sequence[str]) -> None:
    """Refuse a trace whose run loaded task directories the server does not allow."""
    try:
        run = read_trace(copy).first("run", "start")
    except (ValueError, OSError):
        return  # not a trace: replay_trace says so
    cfg: dict[str, Any] = (run.data.get("config") or {}) if run is not None else {}
    for d in cfg.get("task_dirs") or []:
        if not isinstance(d, str) or not (_inside(d, allowed) or _inside(d, served)):
            raise ReplayRefused(f"the trace's run loaded task directory {d!r}, which is "
                                "neither this server's nor in an allowed root; not replayed")
