"""The shape of a run, read from its trace: the plan, one row per task with its model and tool
calls in time, and the answer. Shared by ``agentkit trace show`` and the HTML report."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ._read import TraceFile


@dataclass
class Call:
    kind: str  # "llm" or "tool"
    name: str
    start: float
    end: float | None
    ok: bool = True
    detail: str = ""
    step: int = 0
    cancelled: bool = False  # stopped before it was answered (a deadline, a stopped run)


@dataclass
class Row:
    id: str
    title: str
    start: float
    end: float | None = None
    status: str = "running"
    calls: list[Call] = field(default_factory=list)
    summary: str = ""


@dataclass
class Timeline:
    question: str
    root: str
    mode: str
    status: str
    duration: float
    plan_end: float
    synth: tuple[float, float | None] | None
    rows: list[Row]
    plan: dict[str, Any] | None
    answer: dict[str, Any] | None
    notes: list[str]

    @property
    def outcome(self) -> str:
        """How the run ended for the person who asked: the run's own status unless it
        finished, then whether its answer established anything."""
        if self.status != "ok":
            return self.status
        fleet = (self.answer or {}).get("fleet")
        if fleet:  # no subagent rows here: each host ran the batch; its bucket says how
            return _fleet_outcome(fleet, (self.answer or {}).get("tasks") or {})
        claims = [c.get("text", "") for c in (self.answer or {}).get("bottom_line", [])]
        if not self.rows or all(r.status not in ("ok", "partial") for r in self.rows) or (
                claims and all(c.startswith("Not established") for c in claims)):
            return "finished, nothing established"
        if any(r.status != "ok" for r in self.rows) or any(
                c.startswith("Not established") for c in claims):
            return "finished, partly established"
        return "finished, answered"


def _fleet_outcome(fleet: dict[str, Any], tasks: dict[str, str]) -> str:
    """A fleet run answered where its hosts did: "ok" and "differs" hosts answered (a
    difference is an answer), the other buckets did not."""
    counts = fleet.get("counts") or {}
    answered = counts.get("ok", 0) + counts.get("differs", 0)
    if answered == 0 or all(s == "failed" for s in tasks.values()):
        return "finished, nothing established"
    if answered < sum(counts.values()) or any(s != "ok" for s in tasks.values()):
        return "finished, partly established"
    return "finished, answered"


def _short(args: Any) -> str:
    text = ", ".join(f"{k}={v!r}" for k, v in args.items()) if isinstance(args, dict) else ""
    return text if len(text) <= 90 else text[:89] + "…"


def build(tf: TraceFile) -> Timeline:
    t0 = next((e.ts for e in tf.events if e.kind == "run"), tf.events[0].ts)
    rows: dict[str, Row] = {}
    open_calls: dict[str, Call] = {}
    plan = answer = None
    plan_end = 0.0
    synth: tuple[float, float | None] | None = None
    status, end_ts = "interrupted", tf.events[-1].ts
    run: dict[str, Any] = {}
    for e in tf.events:
        t = e.ts - t0
        if e.kind == "run" and e.phase == "start":
            run = e.data
        elif e.kind == "run" and e.phase == "end":
            status, end_ts = e.data.get("status", "?"), e.ts
        elif e.kind == "plan":
            plan, plan_end = e.data, t
        elif e.kind == "task" and e.phase == "start":
            rows[e.task or ""] = Row(e.task or "", e.data.get("title", ""), t)
        elif e.kind == "task" and e.phase == "end" and e.task in rows:
            row = rows[e.task]
            row.end = t
            result = e.data.get("result")
            row.status = result["status"] if result else (
                "cancelled" if e.data.get("cancelled") else "aborted")
            row.summary = result["summary"] if result else ""
        elif e.kind in ("llm", "tool") and e.phase == "start" and e.span:
            name = e.data.get("tool") or e.data.get("purpose", "model")
            detail = _short(e.data.get("args")) if e.kind == "tool" else ""
            call = Call(e.kind, name, t, None, detail=detail, step=e.step or 0)
            open_calls[e.span] = call
            if e.task in rows:
                rows[e.task].calls.append(call)
        elif e.kind in ("llm", "tool") and e.phase == "end" and e.span in open_calls:
            call = open_calls.pop(e.span)
            call.end = t
            call.cancelled = bool(e.data.get("cancelled"))
            call.ok = bool(e.data.get("ok", "error" not in e.data)) and not call.cancelled
            if not call.ok:
                call.detail = (e.data.get("error") or "")[:120]
        elif e.kind == "synthesize" and e.phase == "start":
            synth = (t, None)
        elif e.kind == "synthesize" and e.phase == "end":
            synth = (synth[0] if synth else t, t)
            answer = e.data.get("answer")
    return Timeline(question=run.get("question", ""), root=run.get("root", ""),
                    mode=run.get("mode", ""), status=status, duration=end_ts - t0,
                    plan_end=plan_end, synth=synth, rows=list(rows.values()), plan=plan,
                    answer=answer, notes=list(tf.notes))
