"""Each host's outcome in the trace, and outcomes read back for an offline replay.

A fleet of identical hosts returns identical task results; each distinct result (usage
aside) is written once and later hosts name it by digest (``{"same": digest}``), so a trace
of a thousand uniform hosts is not a thousand copies. The reader puts them back.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

import orjson

from .._trace import Trace
from .._types import TaskResult, Usage
from ._names import check_name
from ._outcome import HostOutcome

HOST_EVENT = "host"  # kind of the trace event that records one host's outcome


class Recorder:
    """Writes outcomes to ``trace`` as ``host`` events under the run's span."""

    def __init__(self, trace: Trace, parent: str | None) -> None:
        self.trace = trace
        self.parent = parent
        self._written: set[str] = set()

    def __call__(self, outcome: HostOutcome) -> None:
        if not self.trace.enabled:
            return
        results = [self._result(r) for r in outcome.results]
        self.trace.emit(HOST_EVENT, parent=self.parent, data={
            "host": outcome.host, "status": outcome.status, "error": outcome.error,
            "wall_s": outcome.wall_s, "results": results})

    def _result(self, r: TaskResult) -> dict[str, Any]:
        body = r.model_dump(mode="json", exclude={"usage"})
        digest = hashlib.blake2b(orjson.dumps(body, option=orjson.OPT_SORT_KEYS),
                                 digest_size=12).hexdigest()
        usage = r.usage.model_dump(mode="json")
        if digest in self._written:
            return {"same": digest, "usage": usage}
        self._written.add(digest)
        return {"digest": digest, "result": body, "usage": usage}


def read_outcomes(events: Iterable[Any]) -> list[HostOutcome]:
    """The outcomes recorded by :class:`Recorder`, in the order written (``events``: a
    trace file's events). A reference to a result never written is a ValueError."""
    seen: dict[str, dict[str, Any]] = {}
    out: list[HostOutcome] = []
    for e in events:
        if e.kind != HOST_EVENT:
            continue
        results = []
        for item in e.data.get("results") or ():
            if "same" in item:
                body = seen.get(item["same"])
                if body is None:
                    raise ValueError(f"host {e.data.get('host')!r} names a result "
                                     f"{item['same']} the trace never wrote")
            else:
                body = seen[item["digest"]] = item["result"]
            results.append(TaskResult.model_validate(
                {**body, "usage": Usage.model_validate(item.get("usage") or {})}))
        check_name(str(e.data.get("host")))  # a tampered name is a broken record, named
        out.append(HostOutcome.model_validate({**{k: e.data[k] for k in (
            "host", "status", "error", "wall_s") if k in e.data}, "results": results}))
    return out
