"""Reading a trace back: validation with line numbers, versions, and crash-truncated files.

A line that is not JSON, or not a trace event, is an error naming its line. The one
exception is the *last* line when it is cut off without a newline: that is what a crash
leaves, so it is dropped with a note and the rest replays.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from ._trace import TRACE_FORMAT, TRACE_VERSION

# Upgrades from older trace versions, applied in order: {old version: fn(event) -> event}.
# Version 1 is the first; the table is where version 2 will teach readers about version 1.
_UPGRADES: dict[int, Any] = {}


class TraceError(ValueError):
    """A trace that cannot be read; ``line`` says where."""

    def __init__(self, path: str, line: int, message: str) -> None:
        super().__init__(f"{path}: line {line}: {message}")
        self.line = line


class TraceEvent(BaseModel):
    """One line of a trace (see docs/trace-format.md)."""

    model_config = ConfigDict(extra="forbid")
    v: int
    seq: int
    ts: float
    kind: str
    phase: str
    span: str | None
    parent: str | None
    task: str | None
    step: int | None
    data: dict[str, Any]


@dataclass
class TraceFile:
    path: str
    events: list[TraceEvent]
    notes: list[str] = field(default_factory=list)
    truncated: bool = False

    @property
    def complete(self) -> bool:
        return bool(self.events) and self.events[-1].kind == "run" and \
            self.events[-1].phase == "end"

    def first(self, kind: str, phase: str = "event") -> TraceEvent | None:
        return next((e for e in self.events if e.kind == kind and e.phase == phase), None)


def read_trace(path: str | os.PathLike[str]) -> TraceFile:
    name = os.fspath(path)
    try:
        with open(name, encoding="utf-8", errors="strict") as f:
            text = f.read()
    except UnicodeDecodeError as exc:
        raise TraceError(name, text_line(name, exc.start), "not UTF-8 text: not an agentkit "
                         "trace") from None
    except OSError as exc:
        raise TraceError(name, 0, f"cannot read: {exc.strerror}") from None
    lines = text.split("\n")
    ends_clean = text.endswith("\n")
    if ends_clean:
        lines.pop()
    events: list[TraceEvent] = []
    trace = TraceFile(name, events)
    for n, line in enumerate(lines, 1):
        last = n == len(lines)
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            if last and not ends_clean and n > 1:
                trace.truncated = True
                trace.notes.append(f"line {n} is cut off (the run stopped while writing it); "
                                   f"read up to line {n - 1}")
                break
            raise TraceError(name, n, f"not JSON ({exc.msg} at column {exc.colno})") from None
        if n == 1:
            _check_header(name, raw)
        events.append(_event(name, n, raw))
    if not events:
        raise TraceError(name, 1, "empty file: not an agentkit trace")
    if not trace.complete:
        trace.truncated = True
        trace.notes.append("the trace has no end-of-run event: the run was interrupted")
    return trace


def text_line(path: str, offset: int) -> int:
    with open(path, "rb") as f:
        return f.read(offset).count(b"\n") + 1


def _check_header(name: str, raw: Any) -> None:
    data = raw.get("data") if isinstance(raw, dict) else None
    if not (isinstance(data, dict) and raw.get("kind") == "trace"
            and data.get("format") == TRACE_FORMAT):
        raise TraceError(name, 1, "no agentkit trace header: this file was written by another "
                         "program (agentkit traces start with a \"trace\" event)")
    version = raw.get("v")
    if not isinstance(version, int) or version > TRACE_VERSION:
        raise TraceError(name, 1, f"trace version {version!r} is newer than this agentkit "
                         f"reads ({TRACE_VERSION}): upgrade agentkit to replay it")


def _event(name: str, n: int, raw: Any) -> TraceEvent:
    if isinstance(raw, dict):
        for old in range(raw.get("v", TRACE_VERSION) if isinstance(raw.get("v"), int) else 0,
                         TRACE_VERSION):
            raw = _UPGRADES[old](raw)
    try:
        return TraceEvent.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(line)"
        raise TraceError(name, n, f"not a trace event: {where}: {first['msg']}") from None
