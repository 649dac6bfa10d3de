"""One subagent's sandbox: the tools it may call, the evidence it saw, the trace of each call.

Identical calls from different subagents of one run share a :class:`ToolCache`, so a file read
by five tasks is read once.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
import orjson

from .._errors import RunAborted, TaskIncomplete
from .._trace import Trace
from .._types import Evidence
from ._commands import run_command
from ._configs import parse_config
from ._files import glob, grep, list_dir, read_file
from ._gpu import gpu_info
from ._host import Host
from ._procs import serving_processes
from ._redact import may_hold_secret, redact
from ._tool import Tool, ToolContext, ToolError, ToolOutput
from ._withheld import collect, with_notices

_KEY_OPTS = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS

BUILTIN_TOOLS: dict[str, Tool] = {
    t.name: t for t in (read_file, list_dir, glob, grep, run_command, parse_config, gpu_info,
                serving_processes)
}


@dataclass
class ToolCall:
    """The outcome of one call as the caller sees it.

    >>> ToolCall("read_file", {"path": "/x"}, ok=False, error="no such file").for_model()
    '{"error": "no such file"}'
    """

    name: str
    args: dict[str, Any]
    ok: bool
    data: dict[str, Any] = field(default_factory=dict)
    error: str = ""
    evidence: list[Evidence] = field(default_factory=list)
    cached: bool = False

    def for_model(self) -> str:
        if not self.ok:
            return json.dumps({"error": self.error})
        try:
            return orjson.dumps(self.data, default=str, option=orjson.OPT_NON_STR_KEYS).decode()
        except TypeError:
            # orjson refuses integers past 64 bits and lone surrogates (a host file's bytes
            # that are not UTF-8); the stdlib encoder takes both, escaped
            return json.dumps(self.data, default=str)


class ToolCache:
    """Per-run results keyed by (tool, canonical args); concurrent twins wait for the first."""

    def __init__(self) -> None:
        self._done: dict[str, ToolOutput | ToolError] = {}
        self._pending: dict[str, anyio.Event] = {}
        self.hits = 0
        self.misses = 0

    async def get(self, key: str,
                  run: Callable[[], Awaitable[ToolOutput]]) -> tuple[ToolOutput, bool]:
        while key in self._pending:
            await self._pending[key].wait()
        if key in self._done:
            self.hits += 1
            got = self._done[key]
            if isinstance(got, ToolError):
                raise got
            return got, True
        self.misses += 1
        event = self._pending[key] = anyio.Event()
        try:
            out = await run()
            self._done[key] = out
            return out, False
        except ToolError as exc:
            self._done[key] = exc
            raise
        finally:
            del self._pending[key]
            event.set()


Executor = Callable[[Tool, ToolContext, dict[str, Any], str, int, int], Awaitable[ToolOutput]]


async def _execute(tool: Tool, ctx: ToolContext, args: dict[str, Any], task: str, step: int,
                   index: int) -> ToolOutput:
    return await tool.run(ctx, args)


class Sandbox:
    """The tools one subagent may use, over a shared :class:`Host`.

    >>> box = Sandbox(Host.at("/"), task_id="t1", allowed=["read_file", "grep"])
    >>> sorted(box.tools)
    ['grep', 'read_file']
    """

    def __init__(
        self,
        host: Host,
        *,
        task_id: str,
        tools: Mapping[str, Tool] | None = None,
        allowed: list[str] | None = None,
        cache: ToolCache | None = None,
        trace: Trace | None = None,
        parent_span: str | None = None,
        executor: Executor | None = None,
        shared: dict[str, Any] | None = None,
    ) -> None:
        self.host = host
        self.task_id = task_id
        self.offered = tools if tools is not None else BUILTIN_TOOLS
        self.tools = dict(self.offered)
        # run-scoped values that a run's tasks build once and share (see RecipeContext.shared)
        self.shared = shared if shared is not None else {}
        if allowed is not None:
            self.tools = {n: t for n, t in self.tools.items() if n in allowed}
        self.cache = cache
        self.trace = trace or Trace.disabled()
        self.parent_span = parent_span
        self.executor = executor or _execute
        self.evidence: dict[str, Evidence] = {}
        self.calls = 0
        self._ctx = ToolContext(host=host)

    def sibling(self, task_id: str) -> Sandbox:
        """A sandbox for work done once on behalf of all of a run's tasks: every offered
        tool, the same host, cache, trace and executor, its own evidence and replay key."""
        return Sandbox(self.host, task_id=task_id, tools=self.offered, cache=self.cache,
                       trace=self.trace, executor=self.executor, shared=self.shared)

    def schemas(self) -> list[Tool]:
        return list(self.tools.values())

    def evidence_list(self) -> list[Evidence]:
        """Everything seen, in a stable order (by id): concurrent calls finish in any order,
        and a replay must produce the same result byte for byte."""
        return [self.evidence[k] for k in sorted(self.evidence)]

    def add_evidence(self, ev: Evidence) -> Evidence:
        self.evidence.setdefault(ev.id, ev)
        return ev

    async def call(self, name: str, args: dict[str, Any], *, step: int = 0,
                   index: int = 0) -> ToolCall:
        """Run one tool call; a refusal or failure becomes ``ok=False`` with the reason."""
        self.calls += 1
        span = self.trace.start("tool", parent=self.parent_span, task=self.task_id, step=step,
                                data={"tool": name, "args": args, "index": index})
        try:
            result = await self._call(name, args, step, index)
        except TaskIncomplete as exc:  # the span still closes, saying why
            self.trace.end(span, "tool", task=self.task_id, step=step, data={
                "tool": name, "index": index, "ok": False, "error": str(exc), "data": {},
                "cached": False, "evidence": []})
            raise
        except BaseException:  # cancelled (a deadline, an abandoned stream): close it, shielded
            with anyio.CancelScope(shield=True):
                self.trace.end(span, "tool", task=self.task_id, step=step, data={
                    "tool": name, "index": index, "ok": False, "error": "cancelled",
                    "data": {}, "cached": False, "evidence": []})
            raise
        for ev in result.evidence:
            self.add_evidence(ev)
        if result.ok:  # the limits in force, for the answer's notes (_withheld.run_notes)
            collect(self.shared, result.data)
        self.trace.end(span, "tool", task=self.task_id, step=step, data={
            "tool": name, "index": index, "ok": result.ok, "error": result.error,
            "data": result.data, "cached": result.cached,
            "evidence": [e.model_dump() for e in result.evidence]})
        return result

    async def _call(self, name: str, args: dict[str, Any], step: int, index: int) -> ToolCall:
        tool = self.tools.get(name)
        if tool is None:
            return ToolCall(name, args, ok=False, error=(
                f"tool {name!r} is not available to this task; available: "
                f"{', '.join(sorted(self.tools))}"))
        async def run() -> ToolOutput:
            # Scrubbed before it is cached: a cache hit is served clean without redoing it.
            out = await self.executor(tool, self._ctx, args, self.task_id, step, index)
            return ToolOutput(data=with_notices(_scrub(out.data), out.withheld),
                              evidence=out.evidence)

        try:  # Tool.run validates the arguments before the tool sees them
            if self.cache is not None and tool.read_only:
                key = name + orjson.dumps(args, default=str, option=_KEY_OPTS).decode()
                out, cached = await self.cache.get(key, run)
            else:
                out, cached = await run(), False
        except ToolError as exc:
            return ToolCall(name, args, ok=False, error=redact(str(exc)))
        except (RunAborted, TaskIncomplete):
            raise
        except Exception as exc:  # a tool bug must not take the subagent down
            return ToolCall(name, args, ok=False,
                            error=redact(f"internal error in {name}: {type(exc).__name__}: {exc}"))
        return ToolCall(name, args, ok=True, data=out.data, evidence=list(out.evidence),
                        cached=cached)


def _scrub(value: Any) -> Any:
    """Redact every string in a tool's data: the built-in tools already redact what they read,
    this is the net under them and under tools added with ``@tool``.

    Most data holds no secret: its ASCII strings are checked together, in one pass of the
    trigger net (a GPU reading is some forty short strings, each its own pass before), and
    redacted one by one only when the net fires.
    """
    texts: dict[str, str] = {}
    _strings(value, texts)
    plain = [t for t in texts if t.isascii()]
    clean = set(plain) if plain and not may_hold_secret("\n".join(plain)) else set()
    for t in texts:
        texts[t] = t if t in clean else redact(t)
    return _rebuild(value, texts)


def _strings(value: Any, out: dict[str, str]) -> None:
    if isinstance(value, str):
        out[value] = value
    elif isinstance(value, dict):
        for v in value.values():
            _strings(v, out)
    elif isinstance(value, list | tuple):
        for v in value:
            _strings(v, out)


def _rebuild(value: Any, texts: dict[str, str]) -> Any:
    """A copy of ``value`` with its strings replaced (a tool's own objects are not handed on)."""
    if isinstance(value, str):
        return texts[value]
    if isinstance(value, dict):
        return {k: _rebuild(v, texts) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_rebuild(v, texts) for v in value]
    return value
