"""Fuzzing the trace reader and what reads its result (issue 12, item 6): any bytes, and any
change to a real trace's events, give a TraceFile that `trace show`, the report and replay's
index read without error, or a TraceError naming a line; nothing else, and never a hang."""

from __future__ import annotations

import contextlib
import io
import json
import tempfile
from pathlib import Path
from typing import Any

import anyio
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console

from agentkit._replay import Recording, ReplayDiverged, _recorded_settings, replay_trace
from agentkit._trace._read import TraceError, TraceFile, read_trace
from agentkit._trace._report import render_report
from agentkit._trace._show import render_show

from .conftest import EXAMPLES as EXAMPLE_DIR
from .fuzzing import FUZZ, TEXT, VALUES, dumps, nested

# read back, so that evidence a task end references is whole in it (not {"ref": id})
_TRACE = [e.model_dump() for e in
          read_trace(EXAMPLE_DIR / "traces" / "hopper-deepseek.jsonl").events]
_LLM = [  # the example is a catalog run: model calls as an LLM run writes them
    {**_TRACE[1], "seq": 900, "kind": "llm", "phase": "start", "span": "s900",
     "task": "plan", "step": 1, "data": {"purpose": "plan", "request_hash": "h", "tools": []}},
    {**_TRACE[1], "seq": 901, "kind": "llm", "phase": "end", "span": "s900", "task": "plan",
     "step": 1, "data": {"response": {"text": "t", "tool_calls": [
         {"id": "c", "name": "glob", "arguments": "{}"}], "usage": {"input_tokens": 1}}}}]


def _base() -> list[dict[str, Any]]:
    """The first event of each kind and phase, in order, and two model calls: one of
    everything the reader checks, small enough to read thousands of times."""
    seen: set[tuple[str, str]] = set()
    out = []
    for e in _TRACE:
        if (e["kind"], e["phase"]) not in seen:
            seen.add((e["kind"], e["phase"]))
            out.append(e)
    return [*out[:3], *_LLM, *out[3:]]


BASE = [json.dumps(e) for e in _base()]


def _paths(value: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [at]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*at, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*at, i))
    return out


def _get(event: Any, path: tuple[Any, ...]) -> Any:
    for k in path:
        event = event[k]
    return event


def _like(value: Any) -> st.SearchStrategy[Any]:
    """Another value of the same JSON type, within the limits: what a reader must take."""
    if isinstance(value, bool):
        return st.booleans()
    if isinstance(value, int):
        return st.integers(-(2**63) + 1, 2**63 - 1) | st.integers(-3, 3)
    if isinstance(value, float):
        return st.floats(0, 7e9) | st.floats(0, 2e9)
    if isinstance(value, str):
        return TEXT
    if isinstance(value, list):
        return st.lists(VALUES, max_size=3) | st.just([])
    if isinstance(value, dict):
        return st.just({}) | st.dictionaries(TEXT, VALUES, max_size=3)
    return st.none()


def _set(event: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    cur = event
    for k in path[:-1]:
        cur = cur[k]
    cur[path[-1]] = value
    return event


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    """A real trace with some values replaced, lines dropped or raw text put in."""
    lines = list(BASE)
    for _ in range(draw(st.integers(1, 3))):
        n = draw(st.integers(0, len(lines) - 1))
        how = draw(st.sampled_from(["same"] * 6 + ["value"] * 2 + ["drop", "raw", "nested",
                                                                   "cut"]))
        if how in ("same", "value") and lines[n] in BASE:  # not yet made into raw text
            event = json.loads(lines[n])
            path = draw(st.sampled_from(_paths(event)))
            new = draw(_like(_get(event, path)) if how == "same" else VALUES)
            lines[n] = dumps(_set(event, path, new))
        elif how == "drop":
            del lines[n]
        elif how == "raw":
            lines[n] = draw(TEXT)
        elif how == "nested":
            lines[n] = draw(nested())
        else:
            lines[n] = lines[n][:draw(st.integers(0, len(lines[n])))]
        if not lines:
            break
    end = draw(st.sampled_from(["\n", ""]))
    return ("\n".join(lines) + end).encode("utf-8", "surrogatepass")


def _read(data: bytes) -> TraceFile | None:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "t.jsonl"
        path.write_bytes(data)
        try:
            tf = read_trace(path)
        except TraceError as exc:
            assert exc.line >= 0 and str(exc).startswith(f"{path}: line {exc.line}: ")
            assert "\n" not in str(exc) and "\x1b" not in str(exc)  # one line, inert
            return None
    return tf


def _views(tf: TraceFile) -> None:
    """Everything `trace show`, `report` and replay read before running anything."""
    render_show(tf, Console(file=io.StringIO(), width=120, highlight=False))
    render_report(tf)
    with contextlib.suppress(TraceError, ReplayDiverged):  # no run start; bad settings
        _recorded_settings(tf, Recording(tf).run)


@FUZZ
@given(mutated())
def test_fuzz_mutated_traces(data: bytes) -> None:
    tf = _read(data)
    if tf is not None:
        _views(tf)


@FUZZ
@given(st.binary(max_size=2000) | TEXT.map(lambda t: t.encode("utf-8", "surrogatepass")))
def test_fuzz_bytes_after_a_header(tail: bytes) -> None:
    tf = _read(BASE[0].encode() + b"\n" + tail)
    if tf is not None:
        _views(tf)


@FUZZ
@given(mutated())
def test_fuzz_replay(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "t.jsonl"
        path.write_bytes(data)
        with contextlib.suppress(TraceError, ReplayDiverged):
            anyio.run(lambda: replay_trace(path))
