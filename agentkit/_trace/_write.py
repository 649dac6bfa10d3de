"""The trace: every event of a run as one JSON line, written as it happens.

Each line is ``{"v", "seq", "ts", "kind", "phase", "span", "parent", "task", "step", "data"}``.
Spans open with ``phase: "start"`` and close with ``phase: "end"`` (same ``span`` id), so a
crash leaves a readable prefix whose open spans show what was in flight. Lines are flushed
one by one; a run killed mid-way loses at most the line being written.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import time
from collections.abc import Callable
from typing import IO, Any

import orjson

from . import _withhold

# 2: a task result's evidence already written earlier in the file is a reference
# ({"ref": id}); readers put the object back (version 1 traces have none).
# 3: a tool end's result identical to an earlier one (a cached call: the same config.json
# parsed for six tasks) is {"data_ref": seq}, and its evidence references too.
TRACE_VERSION = 3
TRACE_FORMAT = "agentkit-trace"
_OPTS = orjson.OPT_APPEND_NEWLINE | orjson.OPT_NON_STR_KEYS
_REF_MIN = 512  # a tool result shorter than this is written again rather than referenced


def _encode(event: dict[str, Any]) -> bytes:
    # orjson: the trace is written on the hot path of every model and tool call, and the
    # stdlib encoder was its largest single cost (docs/benchmarks.md).
    return orjson.dumps(event, default=str, option=_OPTS)


def _gzip(raw: IO[bytes]) -> IO[bytes]:
    """``raw`` written through gzip: a run's JSON lines repeat their keys and paths, and
    compress about tenfold. Each flush is a zlib sync flush, so a crash still leaves a prefix
    that decompresses to whole lines (the reader takes the stream as far as it goes)."""
    import gzip

    return gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9, mtime=0)  # type: ignore[return-value]


class Trace:
    """Appends events to a JSON-lines file (or to a callback, or nowhere).

    >>> seen = []
    >>> trace = Trace(listener=seen.append)
    >>> span = trace.start("task", task="t1")
    >>> trace.end(span, "task", task="t1")
    >>> [(e["kind"], e["phase"]) for e in seen]
    [('task', 'start'), ('task', 'end')]
    """

    def __init__(self, path: str | os.PathLike[str] | None = None,
                 listener: Callable[[dict[str, Any]], None] | None = None, *,
                 exclusive: bool = False) -> None:
        self._file: IO[bytes] | None = None
        if path is not None:
            # exclusive: a new file or an error, never two writers on one trace
            self._file = open(path, "xb" if exclusive else "wb")  # noqa: SIM115 - closed in close()
            if os.fspath(path).endswith(".gz"):
                self._file = _gzip(self._file)
        self._listeners = [listener] if listener else []
        self._seq = itertools.count(1)
        self._span = itertools.count(1)
        self.path = os.fspath(path) if path is not None else None
        self.t0 = time.time()
        self.enabled = bool(self._file or self._listeners)
        self.task_spans: dict[str, str] = {}
        self._flush_pending = False
        self._written: set[str] = set()  # evidence ids written in full to the file
        self._results: dict[bytes, int] = {}  # digest of a tool result written in full: seq
        if self._file is not None:
            from .._version import __version__

            header = {"v": TRACE_VERSION, "seq": 0, "ts": round(self.t0, 6), "kind": "trace",
                      "phase": "event", "span": None, "parent": None, "task": None,
                      "step": None, "data": {"format": TRACE_FORMAT, "agentkit": __version__}}
            self._file.write(_encode(header))
            self._file.flush()

    @classmethod
    def disabled(cls) -> Trace:
        return cls()

    def listen(self, listener: Callable[[dict[str, Any]], None]) -> None:
        self._listeners.append(listener)
        self.enabled = True

    def unlisten(self, listener: Callable[[dict[str, Any]], None]) -> None:
        self._listeners.remove(listener)
        self.enabled = bool(self._file or self._listeners)

    def emit(self, kind: str, *, phase: str = "event", span: str | None = None,
             parent: str | None = None, task: str | None = None, step: int | None = None,
             data: dict[str, Any] | None = None) -> None:
        if not self.enabled:
            return
        if data and _withhold.known():  # the API key, wherever a server or model put it
            data = _withhold.withhold_data(data)
        event = {"v": TRACE_VERSION, "seq": next(self._seq), "ts": round(time.time(), 6),
                 "kind": kind, "phase": phase, "span": span, "parent": parent, "task": task,
                 "step": step, "data": data or {}}
        if self._file is not None:
            self._file.write(_encode(self._once(event)))
            self._schedule_flush()
        for listener in self._listeners:
            listener(event)

    def _once(self, event: dict[str, Any]) -> dict[str, Any]:
        """The event as written to the file: each evidence object in full the first time,
        then as ``{"ref": id}`` (every task of a run carries the host model's evidence, and
        repeating it was most of a trace's size). Listeners get the event whole."""
        data = event["data"]
        if event["kind"] == "tool" and event["phase"] == "end":
            return self._tool_end(event)
        result = data.get("result") if event["kind"] == "task" else None
        if not isinstance(result, dict) or not result.get("evidence"):
            return event
        slim = self._slim(result["evidence"])
        return {**event, "data": {**data, "result": {**result, "evidence": slim}}}

    def _slim(self, evidence: list[Any]) -> list[Any]:
        slim = []
        for ev in evidence:
            ident = ev.get("id") if isinstance(ev, dict) else None
            if ident in self._written:
                slim.append({"ref": ident})
            else:
                slim.append(ev)
                if ident:
                    self._written.add(ident)
        return slim

    def _tool_end(self, event: dict[str, Any]) -> dict[str, Any]:
        """A tool's result as a reference to the same result written earlier (version 3):
        gzip's 32 KiB window cannot see a 40 KB repeat, so this halves a compressed trace."""
        import hashlib

        data = dict(event["data"])
        if data.get("data") is not None:
            blob = orjson.dumps(data["data"], default=str, option=orjson.OPT_NON_STR_KEYS)
            if len(blob) >= _REF_MIN:
                key = hashlib.blake2b(blob, digest_size=16).digest()
                first = self._results.setdefault(key, event["seq"])
                if first != event["seq"]:  # a repeat: its evidence is a repeat too
                    del data["data"]
                    data["data_ref"] = first
                    if isinstance(data.get("evidence"), list):
                        data["evidence"] = self._slim(data["evidence"])
                    return {**event, "data": data}
        for ev in data.get("evidence") or ():  # whole here: later references point to it
            if isinstance(ev, dict) and "id" in ev:
                self._written.add(ev["id"])
        return event

    def _schedule_flush(self) -> None:
        # One flush per event-loop tick rather than per event: every event written in a tick
        # reaches the OS before the loop does anything else, so a crash still leaves a
        # readable prefix, for a fraction of the system calls. Outside a loop: flush now.
        if self._flush_pending:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.flush()
            return
        self._flush_pending = True
        loop.call_soon(self.flush)

    def flush(self) -> None:
        self._flush_pending = False
        if self._file is not None and not self._file.closed:
            self._file.flush()

    def start(self, kind: str, *, parent: str | None = None, task: str | None = None,
              step: int | None = None, data: dict[str, Any] | None = None) -> str:
        span = f"s{next(self._span)}"
        self.emit(kind, phase="start", span=span, parent=parent, task=task, step=step, data=data)
        return span

    def end(self, span: str, kind: str, *, task: str | None = None, step: int | None = None,
            data: dict[str, Any] | None = None) -> None:
        self.emit(kind, phase="end", span=span, task=task, step=step, data=data)

    def close(self) -> None:
        if self._file is not None and not self._file.closed:
            self._file.flush()
            raw = getattr(self._file, "fileobj", None)  # a GzipFile leaves its file open
            self._file.close()
            if raw is not None:
                raw.close()

    def __enter__(self) -> Trace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
