"""The runs in the trace directory, one line each: name, question, when, status, size.

Read from each file's first and last lines only (its header, the run's start and end), so
listing 200 runs does not parse 200 traces; a file that is not a readable trace is listed
with the reason instead of stopping the list.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ._files import TraceFile, trace_files
from ._read import TraceError, _read_bytes


@dataclass(frozen=True)
class RunSummary:
    name: str
    path: str
    question: str
    when: float | None  # the run's start (epoch seconds), None when unreadable
    status: str  # ok, error, cancelled, interrupted (no end event), unreadable
    size: int


def list_runs(base: str) -> list[RunSummary]:
    """Every run trace in ``base``, newest first."""
    return [summarize(f) for f in reversed(trace_files(base))]


def summarize(f: TraceFile) -> RunSummary:
    try:
        lines = _read_bytes(f.path).rstrip(b"\n").split(b"\n")
    except TraceError as exc:
        return RunSummary(f.name, f.path, f"({exc})", None, "unreadable", f.size)
    first = [_event(line) for line in lines[:3]]
    start = next((e for e in first if e.get("kind") == "run" and e.get("phase") == "start"),
                 None)
    if start is None:
        return RunSummary(f.name, f.path, "(not an agentkit run trace)", None, "unreadable",
                          f.size)
    data: dict[str, Any] = start["data"] if isinstance(start.get("data"), dict) else {}
    last = _event(lines[-1])
    status = "interrupted"
    if last.get("kind") == "run" and last.get("phase") == "end":
        end: dict[str, Any] = last["data"] if isinstance(last.get("data"), dict) else {}
        status = str(end.get("status") or "ok")
    ts = start.get("ts")
    return RunSummary(f.name, f.path, " ".join(str(data.get("question") or "").split()),
                      float(ts) if isinstance(ts, int | float) else None, status, f.size)


def _event(line: bytes) -> dict[str, Any]:
    try:
        raw = json.loads(line)
    except ValueError:  # a line cut off by a crash
        return {}
    return raw if isinstance(raw, dict) else {}
