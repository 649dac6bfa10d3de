"""Replay: re-run a recorded investigation from its trace.

*Exact* replay answers every model call and every tool call from the trace, keyed by task and
step (never by arrival order: subagents interleave), so it makes no connection, starts no
process and produces the same answer byte for byte. A request the trace never recorded stops
the replay with "diverged at task X step N".

*Drift* replay (``live_tools``) keeps the recorded model answers but runs the tools against
today's system (or another root), then lists the evidence that changed and the findings that
rest on it.
"""

from __future__ import annotations

import os
from typing import Any

import anyio
from pydantic import ValidationError

from .._api import build_orchestrator
from .._catalog._planner import NoMatchingTask
from .._catalog._template import TemplateError
from .._config import Settings
from .._errors import RunAborted, TaskIncomplete
from .._llm._messages import ModelError, ModelRequest, ModelResponse
from .._llm._traced import request_hash
from .._orchestrator import Limits, UnknownTask
from .._sandbox._host import Host
from .._sandbox._paths import Root
from .._sandbox._tool import Tool, ToolContext, ToolError, ToolOutput
from .._trace import Trace
from .._trace._read import TraceError, TraceFile, read_trace
from .._types import Answer, Evidence, TaskResult
from ._result import Drift, ReplayResult
from ._untrusted import redacted_result


class ReplayDiverged(RunAborted):
    """The code asked for something the trace never recorded."""


class NotRecorded(TaskIncomplete):
    """A call past the end of an interrupted trace: that task stays incomplete."""


class Recording:
    """The trace indexed by (task, step) for model calls and (task, step, index) for tools."""

    def __init__(self, trace: TraceFile) -> None:
        self.trace = trace
        self.llm: dict[tuple[str, int], dict[str, Any]] = {}
        self.llm_hash: dict[tuple[str, int], str] = {}
        self.tools: dict[tuple[str, int, int], dict[str, Any]] = {}
        self.tool_args: dict[tuple[str, int, int], Any] = {}
        self.results: dict[str, TaskResult] = {}
        # tasks the recorded run cancelled (a run deadline cut them): their unfinished calls
        # are never answered in a replay, so the replay's own deadline cuts them the same way
        self.cut: set[str] = set()
        for e in trace.events:
            task, step = e.task or "", e.step or 0
            if e.kind == "llm" and e.phase == "start":
                self.llm_hash[(task, step)] = e.data.get("request_hash", "")
            elif e.kind == "llm" and e.phase == "end" and not e.data.get("cancelled"):
                self.llm[(task, step)] = e.data  # a cancelled call was never answered
            elif e.kind == "tool" and e.phase == "start":
                self.tool_args[(task, step, e.data["index"])] = (e.data["tool"], e.data["args"])
            elif e.kind == "tool" and e.phase == "end":
                self.tools[(task, step, e.data["index"])] = e.data
            elif e.kind == "task" and e.phase == "end" and "result" in e.data:
                self.results[e.task or ""] = TaskResult.model_validate(e.data["result"])
            elif e.kind == "task" and e.phase == "end" and e.data.get("cancelled"):
                self.cut.add(e.task or "")
        run = trace.first("run", "start")
        if run is None:
            raise ReplayDiverged(f"{trace.path}: the trace has no run-start event; nothing to "
                                 "replay")
        self.run = run.data
        end = trace.first("run", "end")
        self.status = str(end.data.get("status")) if end else "interrupted"
        # cut tasks wait for the replay's own deadline only when a deadline cut them in a run
        # that went on to answer; a run cancelled from outside has nothing to wait for
        self.deadline_cut = self.status == "ok" and bool(
            (self.run.get("limits") or {}).get("deadline_s"))
        synth = trace.first("synthesize", "end")
        self.answer = Answer.model_validate(synth.data["answer"]) if synth else None

    def missing(self, what: str) -> Exception:
        if self.status == "cancelled":
            return NotRecorded(f"{what} is not in the trace: the recorded run was cancelled "
                               "first")
        if self.trace.truncated:
            return NotRecorded(f"{what} is not in the trace: the recorded run stopped first")
        return ReplayDiverged(f"diverged at {what}: the trace never recorded it")


class ReplayModel:
    """Answers each model call with the recorded one for the same task and step."""

    def __init__(self, recording: Recording, *, strict: bool = True) -> None:
        self.rec = recording
        self.strict = strict
        self.stale: list[str] = []  # steps whose request changed but whose answer was reused

    async def complete(self, request: ModelRequest) -> ModelResponse:
        key = (request.task, request.step)
        where = f"task {request.task} step {request.step}"
        data = self.rec.llm.get(key)
        if data is None and request.task in self.rec.cut and self.rec.deadline_cut:
            await anyio.sleep_forever()  # it never answered in the recording either
        if data is None:
            raise self.rec.missing(f"{where} (model call)")
        if self.rec.llm_hash.get(key) not in ("", request_hash(request)):
            if self.strict:
                raise ReplayDiverged(f"diverged at {where}: the model request differs from the "
                                     "recorded one (prompt, tool results or tools changed)")
            self.stale.append(where)
        if "error" in data:
            raise ModelError(data["error"].split(": ", 1)[-1])
        return ModelResponse.from_json(data["response"])


def replay_executor(recording: Recording) -> Any:
    async def execute(tool: Tool, ctx: ToolContext, args: dict[str, Any], task: str, step: int,
                      index: int) -> ToolOutput:
        key = (task, step, index)
        where = f"task {task} step {step} (tool call #{index}, {tool.name})"
        data = recording.tools.get(key)
        if data is None and task in recording.cut and recording.deadline_cut:
            await anyio.sleep_forever()  # cut by the run deadline in the recording
        if data is None:
            raise recording.missing(where)
        if recording.tool_args.get(key) != (tool.name, args):
            raise ReplayDiverged(f"diverged at {where}: recorded "
                                 f"{recording.tool_args.get(key)!r}, now {(tool.name, args)!r}")
        if not data["ok"]:
            raise ToolError(data["error"])
        return ToolOutput(data=data["data"],
                          evidence=[Evidence.model_validate(e) for e in data["evidence"]])

    return execute


async def replay_trace(path: str | os.PathLike[str], *, live_tools: bool = False,
                       root: str | None = None, trace_out: str | None = None) -> ReplayResult:
    """Replay a trace exactly, or with live tools (``live_tools``) to see what drifted."""
    tf = read_trace(path)
    from ._fleet import is_fleet, replay_fleet

    if is_fleet(tf):  # a fleet run: its hosts' outcomes are folded again, offline
        if live_tools:
            raise FileNotFoundError("--live-tools re-runs one host's tools; a fleet trace is "
                                    "replayed exactly (run the question on the fleet again)")
        return redacted_result(replay_fleet(tf))
    rec = Recording(tf)
    run = rec.run
    settings, limits = _recorded_settings(tf, run)
    host = _host(run, live_tools, root)
    trace = Trace(trace_out) if trace_out else Trace()
    results: dict[str, TaskResult] = {}

    def collect(ev: dict[str, Any]) -> None:
        if ev["kind"] == "task" and ev["phase"] == "end" and "result" in ev["data"]:
            results[ev["task"]] = TaskResult.model_validate(ev["data"]["result"])

    trace.listen(collect)
    llm = run.get("mode") == "llm"
    model = ReplayModel(rec, strict=not live_tools) if llm else None
    try:
        orch = build_orchestrator(settings, host, trace=trace, model=model, catalog_only=not llm)
    except TemplateError as exc:  # the recorded task_dirs: missing here, or not task files
        trace.close()
        raise TraceError(tf.path, _line_of(tf, "run", "start"), f"recorded config: {exc}"
                         ) from None
    if not live_tools:
        orch.executor = replay_executor(rec)
        orch.cache_tools = False
    notes = list(tf.notes)
    answer: Answer | None = None
    try:
        answer = await orch.investigate(run["question"], tasks=run.get("tasks"), limits=limits)
    except (UnknownTask, NoMatchingTask) as exc:  # the recorded question or tasks are not
        # ones this catalog answers: the trace's to answer for
        raise TraceError(tf.path, _line_of(tf, "run", "start"), str(exc)) from None
    except NotRecorded as exc:
        notes.append(f"no answer: {exc}")
    finally:
        trace.close()
    # judged identical on the strings as recorded, shown redacted: the file is untrusted
    return redacted_result(_result(rec, results, answer, notes, live_tools, model))


def _host(run: dict[str, Any], live_tools: bool, root: str | None) -> Host:
    if live_tools:
        where = root or run["root"]
        if not os.path.isdir(where):
            raise FileNotFoundError(f"the root {where!r} does not exist here: pass --root DIR "
                                    "to re-run the tools against another one")
        return Host.at(where, manifest_dirs=tuple(run.get("manifest_dirs") or ()))
    # an exact replay reads nothing, so the recorded root need not exist here
    return Host(root=Root(run["root"]), manifest_dirs=tuple(run.get("manifest_dirs") or ()))


def _result(rec: Recording, results: dict[str, TaskResult], answer: Answer | None,
            notes: list[str], live_tools: bool, model: ReplayModel | None) -> ReplayResult:
    """The replay's answer beside the recorded one: identical or not (exact), or what
    drifted (live tools)."""
    incomplete = sorted(t for t, r in results.items()
                        if any("not in the trace" in e for e in r.errors))
    if incomplete:
        notes.append(f"incomplete when the recorded run stopped: {', '.join(incomplete)}")
    identical = False
    if answer is not None and rec.answer is not None and not live_tools:
        answer.usage = rec.answer.usage  # the recorded run's cost, not the replay's
        identical = answer.model_dump_json() == rec.answer.model_dump_json()
    drift = _drift(rec, results, answer) if live_tools else None
    if drift is not None and model is not None:
        drift.stale_steps = list(model.stale)
        if model.stale:
            notes.append("recorded model answers reused although what the model was shown has "
                         f"changed (stale): {'; '.join(model.stale)}")
    return ReplayResult(answer=answer, recorded=rec.answer, identical=identical, notes=notes,
                        tasks={t: r.status for t, r in results.items()}, incomplete=incomplete,
                        drift=drift)


def _line_of(tf: TraceFile, kind: str, phase: str) -> int:
    # events are read one a line from line 1, so an event's index says its line
    return next((n for n, e in enumerate(tf.events, 1) if e.kind == kind and e.phase == phase),
                0)


def _recorded_settings(tf: TraceFile, run: dict[str, Any]) -> tuple[Settings, Limits]:
    """The run's recorded settings and limits; values no run could have had are an error
    naming the run-start line, not a validation traceback."""
    cfg = run.get("config") or {}
    try:
        settings = Settings(**{k: v for k, v in cfg.items() if k in (
            "task_dirs", "max_tasks", "max_steps", "task_deadline_s", "concurrency", "model",
            "provider") and v is not None})
        return settings, Limits(**(run.get("limits") or {}))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(value)"
        raise TraceError(tf.path, _line_of(tf, "run", "start"),
                         f"run start event: recorded {where}: {first['msg']}") from None


def _drift(rec: Recording, results: dict[str, TaskResult], answer: Answer | None) -> Drift:
    old = {e.id: e for r in rec.results.values() for e in r.evidence}
    new = {e.id: e for r in results.values() for e in r.evidence}
    drift = Drift(
        changed=[(old[i], new[i]) for i in sorted(old.keys() & new.keys())
                 if old[i].sha256 != new[i].sha256],
        gone=[old[i] for i in sorted(old.keys() - new.keys())],
        new=[new[i] for i in sorted(new.keys() - old.keys())])
    touched = {o.id for o, _ in drift.changed} | {e.id for e in drift.gone}
    # The answer's claims, and each task's own findings (an LLM answer may merge or drop them).
    claims: list[tuple[str, list[str]]] = []
    if rec.answer is not None:
        claims += [(c.text, c.evidence) for c in rec.answer.bottom_line]
        claims += [(c.text, c.evidence) for s in rec.answer.sections for c in s.claims]
    claims += [(f"[{r.task_id}] {f.claim}", f.evidence) for r in rec.results.values()
               for f in r.findings]
    seen: set[str] = set()
    for text, evidence in claims:
        if touched & set(evidence) and text not in seen:
            seen.add(text)
            drift.findings.append(text)
    _ = answer
    return drift
