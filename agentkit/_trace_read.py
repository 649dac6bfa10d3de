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
# 1 → 2: version 2 only adds evidence references, which a version 1 trace never holds.
_UPGRADES: dict[int, Any] = {1: lambda raw: raw}


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
    except FileNotFoundError:
        raise TraceError(name, 0, "no such file") from None
    except OSError as exc:
        raise TraceError(name, 0, f"cannot read: {exc.strerror}") from None
    if not text.strip():
        raise TraceError(name, 1, "empty file: not an agentkit trace")
    lines = text.split("\n")
    ends_clean = text.endswith("\n")
    if ends_clean:
        lines.pop()
    events: list[TraceEvent] = []
    evidence: dict[str, dict[str, Any]] = {}  # by id, as first written
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
        event = _event(name, n, raw)
        _rehydrate(name, n, event, evidence)
        events.append(event)
    if not events:
        raise TraceError(name, 1, "empty file: not an agentkit trace")
    if not trace.complete:
        trace.truncated = True
        trace.notes.append("the trace has no end-of-run event: the run was interrupted")
    return trace


def _rehydrate(name: str, n: int, event: TraceEvent, seen: dict[str, dict[str, Any]]) -> None:
    """Evidence written once and referenced after (``{"ref": id}``) is put back whole."""
    if event.kind == "tool" and event.phase == "end":
        items = event.data.get("evidence")
    elif event.kind == "task" and event.phase == "end" and isinstance(
            event.data.get("result"), dict):
        items = event.data["result"].get("evidence")
    else:
        return
    if not isinstance(items, list):
        return
    for i, ev in enumerate(items):
        if not isinstance(ev, dict):
            continue
        ref = ev.get("ref")
        if ref is None:
            if isinstance(ev.get("id"), str):
                seen.setdefault(ev["id"], ev)
        elif isinstance(ref, str) and ref in seen:
            items[i] = seen[ref]
        else:
            raise TraceError(name, n, f"evidence {ref!r} is referenced before it is written")


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
    if isinstance(version, int) and version > TRACE_VERSION:
        raise TraceError(name, 1, f"trace version {version!r} is newer than this agentkit "
                         f"reads ({TRACE_VERSION}): upgrade agentkit to replay it")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise TraceError(name, 1, f"trace version {version!r} is not a version agentkit ever "
                         "wrote: the file is damaged")


# What replay reads from each event's data: an event without them is damaged, and says so
# by line instead of failing later with a KeyError.
_REQUIRED: dict[tuple[str, str], tuple[str, ...]] = {
    ("run", "start"): ("question", "root"),
    ("tool", "start"): ("tool", "args", "index"),
    ("tool", "end"): ("tool", "index", "ok", "data", "evidence"),
    ("llm", "end"): (),
    ("synthesize", "end"): ("answer",),
}


def _event(name: str, n: int, raw: Any) -> TraceEvent:
    if isinstance(raw, dict):
        version = raw.get("v")
        if not isinstance(version, int) or isinstance(version, bool) or not (
                1 <= version <= TRACE_VERSION):
            raise TraceError(name, n, f"trace version {version!r} is not one this agentkit "
                             f"reads (1 to {TRACE_VERSION})")
        for old in range(version, TRACE_VERSION):
            raw = _UPGRADES[old](raw)
    try:
        event = TraceEvent.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(line)"
        raise TraceError(name, n, f"not a trace event: {where}: {first['msg']}") from None
    missing = [k for k in _REQUIRED.get((event.kind, event.phase), ()) if k not in event.data]
    if event.kind == "llm" and event.phase == "end" and not (
            "response" in event.data or "error" in event.data):
        missing.append("response")
    if missing:
        raise TraceError(name, n, f"{event.kind} {event.phase} event without "
                         f"{', '.join(missing)} in its data")
    return event
