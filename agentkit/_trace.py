"""The trace: every event of a run as one JSON line, written as it happens.

Each line is ``{"v", "seq", "ts", "kind", "phase", "span", "parent", "task", "step", "data"}``.
Spans open with ``phase: "start"`` and close with ``phase: "end"`` (same ``span`` id), so a
crash leaves a readable prefix whose open spans show what was in flight. Lines are flushed
one by one; a run killed mid-way loses at most the line being written.
"""

from __future__ import annotations

import itertools
import json
import os
import time
from collections.abc import Callable
from typing import IO, Any

TRACE_VERSION = 1
TRACE_FORMAT = "agentkit-trace"


class Trace:
    """Appends events to a JSON-lines file (or to a callback, or nowhere)."""

    def __init__(self, path: str | os.PathLike[str] | None = None,
                 listener: Callable[[dict[str, Any]], None] | None = None) -> None:
        self._file: IO[str] | None = None
        if path is not None:
            self._file = open(path, "w", encoding="utf-8")  # noqa: SIM115 - closed in close()
        self._listeners = [listener] if listener else []
        self._seq = itertools.count(1)
        self._span = itertools.count(1)
        self.path = os.fspath(path) if path is not None else None
        self.t0 = time.time()
        self.enabled = bool(self._file or self._listeners)
        self.task_spans: dict[str, str] = {}
        if self._file is not None:
            from . import __version__

            header = {"v": TRACE_VERSION, "seq": 0, "ts": round(self.t0, 6), "kind": "trace",
                      "phase": "event", "span": None, "parent": None, "task": None,
                      "step": None, "data": {"format": TRACE_FORMAT, "agentkit": __version__}}
            self._file.write(json.dumps(header) + "\n")
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
        event = {"v": TRACE_VERSION, "seq": next(self._seq), "ts": round(time.time(), 6),
                 "kind": kind, "phase": phase, "span": span, "parent": parent, "task": task,
                 "step": step, "data": data or {}}
        if self._file is not None:
            self._file.write(json.dumps(event, ensure_ascii=False, default=str) + "\n")
            self._file.flush()
        for listener in self._listeners:
            listener(event)

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
            self._file.close()

    def __enter__(self) -> Trace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
