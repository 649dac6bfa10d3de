"""Reading a trace back: validation with line numbers, versions, and crash-truncated files.

A line that is not JSON, or not a trace event, is an error naming its line. The one
exception is the *last* line when it is cut off without a newline: that is what a crash
leaves, so it is dropped with a note and the rest replays.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    ValidationError,
)

from .._render import visible_controls
from .._types import Answer, Evidence, Plan, TaskResult
from ._gz import GZIP_MAGIC, NotGzip, gunzip
from ._write import TRACE_FORMAT, TRACE_VERSION

# Limits (docs/trace-format.md, "Limits"): what agentkit writes is far inside them; past them a
# file is damaged or crafted, and reading it must not crash, hang or allocate without bound.
MAX_TRACE_BYTES = 256 << 20
MAX_LINE_BYTES = 16 << 20  # a tool's output is capped at 512 KiB of text, ~3 MiB as JSON
MAX_DEPTH = 128  # events are ~10 deep; host data inside them is cut at 64 by the parsers
MAX_INT = 2**63 - 1  # what orjson, the writer, can write
TS_MAX = 7_258_118_400.0  # 2200-01-01: a larger time makes timelines of absurd length

# Upgrades from older trace versions, applied in order: {old version: fn(event) -> event}.
# 1 → 2: version 2 only adds evidence references, which a version 1 trace never holds.
# 2 → 3: version 3 only adds tool result references, which a version 2 trace never holds.
_UPGRADES: dict[int, Any] = {1: lambda raw: raw, 2: lambda raw: raw}


class TraceError(ValueError):
    """A trace that cannot be read; ``line`` says where."""

    def __init__(self, path: str, line: int, message: str) -> None:
        # one line, and nothing that drives a terminal: a key or value quoted from a crafted
        # trace may hold a newline or an escape sequence
        super().__init__(visible_controls(f"{path}: line {line}: {message}").replace(
            "\n", "\\n"))
        self.line = line


class TraceEvent(BaseModel):
    """One line of a trace (see docs/trace-format.md)."""

    model_config = ConfigDict(extra="forbid")
    v: int
    seq: int
    ts: float = Field(ge=0, le=TS_MAX)
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
    data = _read_bytes(name)
    if not data.strip():
        raise TraceError(name, 1, "empty file: not an agentkit trace")
    lines = data.split(b"\n")
    ends_clean = data.endswith(b"\n")
    if ends_clean:
        lines.pop()
    events: list[TraceEvent] = []
    evidence: dict[str, dict[str, Any]] = {}  # by id, as first written
    results: dict[int, Any] = {}  # tool results by the seq of the line that holds them
    trace = TraceFile(name, events)
    for n, line in enumerate(lines, 1):
        last = n == len(lines)
        try:
            raw = _parse_line(name, n, line)
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
        _same_result(name, n, event, results)
        _check_data(name, n, event)
        events.append(event)
    if not events:
        raise TraceError(name, 1, "empty file: not an agentkit trace")
    if not trace.complete:
        trace.truncated = True
        trace.notes.append("the trace has no end-of-run event: the run was interrupted")
    return trace


def _read_bytes(name: str) -> bytes:
    try:
        with open(name, "rb") as f:
            data = f.read(MAX_TRACE_BYTES + 1)
            if data.startswith(GZIP_MAGIC):
                data = gunzip(data, f, MAX_TRACE_BYTES)
    except FileNotFoundError:
        raise TraceError(name, 0, "no such file") from None
    except NotGzip as exc:
        raise TraceError(name, 1, f"not a gzip stream agentkit wrote ({exc})") from None
    except OSError as exc:
        raise TraceError(name, 0, f"cannot read: {exc.strerror}") from None
    if len(data) > MAX_TRACE_BYTES:
        raise TraceError(name, data.count(b"\n") + 1, f"the trace is larger than "
                         f"{MAX_TRACE_BYTES >> 20} MiB: not a trace agentkit wrote")
    return data


class _Limit(Exception):
    """A value past the limits of docs/trace-format.md ("Limits")."""


def _parse_int(text: str) -> int:
    # before int(): a long digit string costs CPU (and past 4300 digits raises ValueError)
    if len(text.lstrip("-")) > 19 or not -MAX_INT <= (value := int(text)) <= MAX_INT:
        raise _Limit(f"integer {text[:24]}{'…' if len(text) > 24 else ''} is out of range "
                     f"(at most {MAX_INT} in size)")
    return value


def _no_constant(text: str) -> Any:
    raise _Limit(f"{text} is not a JSON number (agentkit never writes it)")


def _parse_line(name: str, n: int, line: bytes) -> Any:
    if len(line) > MAX_LINE_BYTES:
        raise TraceError(name, n, f"line is longer than {MAX_LINE_BYTES >> 20} MiB "
                         f"({len(line)} bytes): not a line agentkit wrote")
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        raise TraceError(name, n, "not UTF-8 text: not an agentkit trace") from None
    try:
        raw = json.loads(text, parse_int=_parse_int, parse_constant=_no_constant)
        _check_values(raw)
    except RecursionError:
        raise TraceError(name, n, f"nested deeper than {MAX_DEPTH} levels") from None
    except _Limit as exc:
        raise TraceError(name, n, str(exc)) from None
    return raw


def _check_values(raw: Any) -> None:
    """Nesting and numbers within the limits, walked without recursion."""
    stack: list[tuple[Any, int]] = [(raw, 0)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            value = value.values()
        elif isinstance(value, float):
            if not math.isfinite(value):
                raise _Limit(f"number {value} is out of range")
            continue
        elif not isinstance(value, list):
            continue
        if depth >= MAX_DEPTH:
            raise RecursionError
        stack.extend((v, depth + 1) for v in value)


def _same_result(name: str, n: int, event: TraceEvent, results: dict[int, Any]) -> None:
    """A tool result written once and referenced after (``"data_ref": seq``, version 3) is
    put back whole; a reference to a line that held none is an error naming the line."""
    if event.kind != "tool" or event.phase != "end":
        return
    if "data_ref" not in event.data:
        if "data" in event.data:
            results[event.seq] = event.data["data"]
        return
    ref = event.data.pop("data_ref")
    if type(ref) is not int or ref not in results:
        raise TraceError(name, n, f"tool result {ref!r} is referenced before it is written")
    event.data["data"] = results[ref]


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


class _Data(BaseModel):
    """The types of the fields views and replay read from an event's data (more may be
    there); checked here so that a wrong type is an error naming its line, not a crash."""

    model_config = ConfigDict(extra="allow")


class _RunStart(_Data):
    question: StrictStr
    root: StrictStr
    mode: StrictStr = ""
    tasks: list[StrictStr] | None = None
    limits: dict[str, Any] | None = None
    config: dict[str, Any] | None = None
    manifest_dirs: list[StrictStr] | None = None


class _RunEnd(_Data):
    status: StrictStr = "?"


class _TaskStart(_Data):
    title: StrictStr = ""


class _TaskEnd(_Data):
    result: TaskResult | None = None
    cancelled: StrictBool = False


class _LlmStart(_Data):
    purpose: StrictStr = "model"
    request_hash: StrictStr = ""


class _Call(_Data):
    id: StrictStr
    name: StrictStr
    arguments: StrictStr


class _Usage(BaseModel):
    model_config = ConfigDict(extra="forbid")  # ModelResponse.from_json takes these alone
    input_tokens: StrictInt = 0
    output_tokens: StrictInt = 0


class _Response(_Data):
    text: StrictStr = ""
    tool_calls: list[_Call] = []
    usage: _Usage = _Usage()
    finish_reason: StrictStr = ""
    model: StrictStr = ""


class _LlmEnd(_Data):
    response: _Response | None = None
    error: StrictStr | None = None


class _ToolStart(_Data):
    tool: StrictStr
    args: Any
    index: StrictInt


class _ToolEnd(_ToolStart):
    args: Any = None
    ok: StrictBool
    error: StrictStr | None = None
    evidence: list[Evidence]


class _SynthEnd(_Data):
    answer: Answer


_SHAPES: dict[tuple[str, str], type[BaseModel]] = {
    ("run", "start"): _RunStart, ("run", "end"): _RunEnd, ("plan", "event"): Plan,
    ("task", "start"): _TaskStart, ("task", "end"): _TaskEnd, ("llm", "start"): _LlmStart,
    ("llm", "end"): _LlmEnd, ("tool", "start"): _ToolStart, ("tool", "end"): _ToolEnd,
    ("synthesize", "end"): _SynthEnd}


def _check_data(name: str, n: int, event: TraceEvent) -> None:
    shape = _SHAPES.get((event.kind, event.phase))
    if shape is None:
        return
    try:
        shape.model_validate(event.data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(data)"
        raise TraceError(name, n, f"{event.kind} {event.phase} event: data.{where}: "
                         f"{first['msg']}") from None


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
    given = set(event.data) | ({"data"} if "data_ref" in event.data else set())  # version 3
    missing = [k for k in _REQUIRED.get((event.kind, event.phase), ()) if k not in given]
    if event.kind == "llm" and event.phase == "end" and not (
            "response" in event.data or "error" in event.data
            or event.data.get("cancelled") is True):  # stopped before it was answered
        missing.append("response")
    if missing:
        raise TraceError(name, n, f"{event.kind} {event.phase} event without "
                         f"{', '.join(missing)} in its data")
    return event
