"""The recipe runner: executes a template's steps through the same sandbox tools an LLM
subagent uses, so evidence and traces have the same shape in both modes.

Expressions (``when``, ``value``) and claim texts are evaluated by jinja2's immutable sandbox
over the task's own facts: template authors get conditions and formatting, file content is
only ever data, never code.
"""

from __future__ import annotations

import re
import time
from collections.abc import Awaitable, Callable
from functools import lru_cache
from typing import Any, TypeVar, cast

import anyio
from jinja2 import StrictUndefined
from jinja2.sandbox import ImmutableSandboxedEnvironment

from .._sandbox._sandbox import Sandbox
from .._types import (
    Evidence,
    EvidenceKind,
    Fact,
    Finding,
    TaskResult,
    TaskSpec,
    TaskStatus,
    Usage,
)
from ._template import Step, TaskTemplate

RecipeFunction = Callable[..., Awaitable[Any]]
T = TypeVar("T")
FUNCTIONS: dict[str, RecipeFunction] = {}


def recipe_function(name: str) -> Callable[[RecipeFunction], RecipeFunction]:
    """Register an async function ``fn(ctx: RecipeContext, **args)`` for ``call:`` steps."""

    def wrap(fn: RecipeFunction) -> RecipeFunction:
        FUNCTIONS[name] = fn
        return fn

    return wrap


class StepFailed(Exception):
    """A step could not establish what it needed; the message says what and why."""


@lru_cache(maxsize=1)
def _env() -> ImmutableSandboxedEnvironment:
    env = ImmutableSandboxedEnvironment(undefined=StrictUndefined, trim_blocks=True,
                                        lstrip_blocks=True)
    env.filters["pct"] = lambda x: f"{x:+.1f}%"
    env.filters["thousands"] = lambda x: f"{x:,}"
    return env


@lru_cache(maxsize=512)
def _expr(source: str) -> Any:
    return _env().compile_expression(source, undefined_to_none=False)


@lru_cache(maxsize=512)
def _text(source: str) -> Any:
    return _env().from_string(source)


class _Shared:
    def __init__(self) -> None:
        self.done = anyio.Event()
        self.value: Any = None
        self.error = ""
        self.evidence: list[Evidence] = []


class RecipeContext:
    """What a recipe function sees: tools (through the sandbox), facts so far, citations."""

    def __init__(self, box: Sandbox, spec: TaskSpec) -> None:
        self.box = box
        self.spec = spec
        self.facts: dict[str, Fact] = {}
        self.vars: dict[str, Any] = {}
        self.errors: list[str] = []
        self.alerts: list[Finding] = []
        self.step = 0
        self._index = 0

    async def tool(self, name: str, optional: bool = False, **args: Any) -> dict[str, Any] | None:
        """Call a sandbox tool; a failure raises :class:`StepFailed` unless ``optional``."""
        self._index += 1
        result = await self.box.call(name, args, step=self.step, index=self._index)
        if result.ok:
            return result.data
        if optional:
            return None
        raise StepFailed(f"{name}({_short(args)}) failed: {result.error}")

    async def tools(self, calls: list[tuple[str, dict[str, Any]]]
                    ) -> list[dict[str, Any] | None]:
        """Independent optional tool calls at once (None for one that fails). Indexes are
        given in list order before any runs, so a replay finds each one where it was."""
        results: list[dict[str, Any] | None] = [None] * len(calls)
        first = self._index + 1
        self._index += len(calls)

        async def one(i: int, name: str, args: dict[str, Any]) -> None:
            got = await self.box.call(name, args, step=self.step, index=first + i)
            results[i] = got.data if got.ok else None

        async with anyio.create_task_group() as tg:
            for i, (name, args) in enumerate(calls):
                tg.start_soon(one, i, name, args)
        return results

    async def read_lines(self, path: str, optional: bool = False) -> list[str] | None:
        """A file's lines through ``read_file`` (its line numbers taken off); None when an
        optional read fails."""
        data = await self.tool("read_file", optional=optional, path=path)
        if data is None:
            return None
        return [ln.split(": ", 1)[1] if ": " in ln else "" for ln in data["text"].split("\n")
                if re.match(r"^\d+:( |$)", ln)]

    def cite_output_line(self, out: dict[str, Any], n: int) -> str:
        """Line ``n`` of a command's output (a ``run_command`` result) as its own evidence."""
        lines = out["stdout"].splitlines()
        line = lines[n - 1] if 0 < n <= len(lines) else ""
        return self.cite("command", f"$ {' '.join(out['argv'])} [exit {out['exit_code']}] "
                         f"line {n}", line.strip(), line)

    def cite(self, kind: EvidenceKind, locator: str, excerpt: str, content: str) -> str:
        """Register evidence derived from what a tool returned (e.g. one line of a file)."""
        ev = Evidence.of(kind, locator, excerpt[:400], content)
        self.box.add_evidence(ev)
        return ev.id

    def fact(self, name: str, value: Any, evidence: list[str] | None = None) -> Fact:
        f = Fact(value=value, evidence=sorted(set(evidence or [])))
        self.facts[name] = f
        return f

    async def shared(self, key: str, build: Callable[[RecipeContext], Awaitable[T]]) -> T:
        """``build`` once per run, in a sandbox of its own named ``key`` (so a replay answers
        its calls from the same place whichever task asked first); every task that asks gets
        the value and the evidence behind it."""
        memo = self.box.shared
        entry = memo.get(key)
        if entry is None:
            entry = memo[key] = _Shared()
            box = self.box.sibling(key)
            try:
                entry.value = await build(RecipeContext(box, self.spec))
                entry.evidence = box.evidence_list()
            except BaseException as exc:  # the waiters must not wait forever
                entry.error = f"{type(exc).__name__}: {exc}"
                raise
            finally:
                entry.done.set()
        else:
            await entry.done.wait()
        if entry.error:
            raise StepFailed(f"{key} could not be built: {entry.error}")
        for ev in entry.evidence:
            self.box.add_evidence(ev)
        return cast(T, entry.value)

    def alert(self, claim: str, evidence: list[str]) -> None:
        """A finding any task must lead with, whatever its template says (the server is
        down, the host does not decide which unit serves)."""
        if all(a.claim != claim for a in self.alerts):
            self.alerts.append(Finding(claim=claim, evidence=sorted(set(evidence)),
                                       headline=True))

    def need(self, name: str, producer: str) -> Fact:
        if name not in self.facts:
            raise StepFailed(f"needs fact {name!r}: add a `call: {producer}` step before this one")
        return self.facts[name]

    def scope(self) -> dict[str, Any]:
        return {"facts": self.facts, "vars": self.vars, "inputs": self.spec.inputs}


def _short(args: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in args.items())[:200]


class RecipeRunner:
    """Runs catalog tasks (``TaskSpec.template``) without any model call."""

    def __init__(self, catalog: dict[str, TaskTemplate]) -> None:
        self.catalog = catalog

    async def run(self, spec: TaskSpec, box: Sandbox) -> TaskResult:
        t0 = time.perf_counter()
        tpl = self.catalog[spec.template or ""]
        ctx = RecipeContext(box, spec)
        status: TaskStatus = "ok"
        for n, step in enumerate(tpl.steps, 1):
            ctx.step = n
            try:
                if step.when and not _expr(step.when)(**ctx.scope()):
                    continue
                await _run_step(ctx, step)
            except StepFailed as exc:
                ctx.errors.append(f"step {n} ({_step_name(step)}): {exc}")
                if not step.optional:
                    status = "partial"
                    break
        findings, headline = _findings(tpl, ctx, quiet=status != "ok")
        if not findings and status == "ok":
            status = "partial"
        if tpl.verdict is not None:
            _verdict(tpl, ctx, headline, findings)
        if ctx.alerts:
            ctx.fact("alerts", len(ctx.alerts), [e for a in ctx.alerts for e in a.evidence])
        findings = ctx.alerts + findings
        usage = Usage(tool_calls=box.calls, wall_s=round(time.perf_counter() - t0, 6))
        summary = (ctx.alerts[0].claim if ctx.alerts else headline) or (
            ctx.errors[0] if ctx.errors else tpl.title)
        return TaskResult(task_id=spec.id, status=status, summary=summary, findings=findings,
                          facts=ctx.facts, evidence=box.evidence_list(),
                          errors=ctx.errors, usage=usage)


def _step_name(step: Step) -> str:
    return step.call or step.tool or f"fact {step.fact}"


async def _run_step(ctx: RecipeContext, step: Step) -> None:
    scope = ctx.scope()
    if step.call:
        fn = FUNCTIONS[step.call]
        args = {k: _render_value(v, scope) for k, v in step.args.items()}
        out = await fn(ctx, **args)
    elif step.tool:
        args = {k: _render_value(v, scope) for k, v in step.args.items()}
        out = await ctx.tool(step.tool, optional=step.optional, **args)
    else:
        assert step.fact and step.value
        value = _expr(step.value)(**scope)
        out = ctx.fact(step.fact, value, _cited(ctx, step.cite))
    if step.save:
        ctx.vars[step.save] = out


def _cited(ctx: RecipeContext, names: list[str]) -> list[str]:
    """Evidence of the named facts, or of the named saved tool results (their evidence_id)."""
    out: list[str] = []
    for name in names:
        if name in ctx.facts:
            out += ctx.facts[name].evidence
        elif isinstance(ctx.vars.get(name), dict) and "evidence_id" in ctx.vars[name]:
            out.append(ctx.vars[name]["evidence_id"])
        else:
            raise StepFailed(f"cite names {name!r}, which is neither a fact nor a saved tool "
                             "result")
    return out


def _verdict(tpl: TaskTemplate, ctx: RecipeContext, headline: str,
             findings: list[Finding]) -> None:
    """Record the task's answer to a yes/no question about its subject, with the claim that
    carries it; a condition over facts the recipe never established is "undetermined"."""
    assert tpl.verdict is not None
    try:
        raw = _expr(tpl.verdict.value)(**ctx.scope())
    except Exception:  # a fact it needs was not established
        raw = None
    if isinstance(raw, str):
        label = raw
    else:
        label = "undetermined" if raw is None else ("yes" if raw else "no")
    if not headline:
        label = "undetermined"
    claim = next((f for f in findings if f.claim == headline), None)
    ctx.fact("verdict", {"answer": label, "about": tpl.verdict.about, "claim": headline},
             claim.evidence if claim else [])


def _render_value(value: Any, scope: dict[str, Any]) -> Any:
    if isinstance(value, str) and "{{" in value:
        return _text(value).render(**scope)
    if isinstance(value, list):
        return [_render_value(v, scope) for v in value]
    return value


def _findings(tpl: TaskTemplate, ctx: RecipeContext, quiet: bool) -> tuple[list[Finding], str]:
    """The template's findings whose conditions hold. A finding over a missing fact is a
    template bug worth reporting, unless the recipe stopped early (``quiet``)."""
    out: list[Finding] = []
    headline = ""
    scope = ctx.scope()
    for spec in tpl.findings:
        try:
            if spec.when and not _expr(spec.when)(**scope):
                continue
            if any(name not in ctx.facts for name in spec.cite):
                continue
            text = " ".join(_text(spec.claim).render(**scope).split())
        except Exception as exc:  # a claim over a missing fact is skipped, and said
            if not quiet:
                ctx.errors.append(f"finding {spec.claim[:40]!r} not stated: {exc}")
            continue
        evidence = sorted({e for name in spec.cite for e in ctx.facts[name].evidence})
        out.append(Finding(claim=text, evidence=evidence, headline=spec.headline))
        if spec.headline and not headline:
            headline = text
    return out, headline
