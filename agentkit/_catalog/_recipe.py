"""The recipe runner: executes a template's steps through the same sandbox tools an LLM
subagent uses, so evidence and traces have the same shape in both modes.

Expressions (``when``, ``value``) and claim texts are evaluated by jinja2's immutable sandbox
over the task's own facts: template authors get conditions and formatting, file content is
only ever data, never code.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from functools import lru_cache
from typing import Any

from jinja2 import StrictUndefined
from jinja2.sandbox import ImmutableSandboxedEnvironment

from .._sandbox._context import RecipeContext as RecipeContext  # the recipe functions' own
from .._sandbox._context import StepFailed as StepFailed
from .._sandbox._sandbox import Sandbox
from .._types import Finding, TaskResult, TaskSpec, TaskStatus, Usage
from . import _jinja_cache
from ._template import Step, TaskTemplate

RecipeFunction = Callable[..., Awaitable[Any]]
FUNCTIONS: dict[str, RecipeFunction] = {}


def recipe_function(name: str) -> Callable[[RecipeFunction], RecipeFunction]:
    """Register an async function ``fn(ctx: RecipeContext, **args)`` for ``call:`` steps."""

    def wrap(fn: RecipeFunction) -> RecipeFunction:
        FUNCTIONS[name] = fn
        return fn

    return wrap


@lru_cache(maxsize=1)
def _env() -> ImmutableSandboxedEnvironment:
    env = ImmutableSandboxedEnvironment(undefined=StrictUndefined, trim_blocks=True,
                                        lstrip_blocks=True)
    env.filters["pct"] = lambda x: f"{x:+.1f}%"
    env.filters["thousands"] = lambda x: f"{x:,}"
    return env


@lru_cache(maxsize=512)
def _expr(source: str) -> Any:
    return _jinja_cache.compile_expression(_env(), source, undefined_to_none=False)


@lru_cache(maxsize=512)
def _text(source: str) -> Any:
    return _jinja_cache.from_string(_env(), source)


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
    asks: list[list[str]] = []  # each stated finding's answers: words
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
        asks.append(spec.answers)
        if spec.headline and not headline:
            headline = text
    return _asked_first(str(ctx.spec.inputs.get("question") or ""), out, asks), headline


def _asked_first(question: str, found: list[Finding], asks: list[list[str]]) -> list[Finding]:
    """The findings the question asks for by name (``answers:``) first and as headlines, so
    the bottom line answers what was asked, in its own terms, before the task's usual lead.

    >>> f = [Finding(claim="vLLM 0.11", headline=True), Finding(claim="Kernel 6.8")]
    >>> [(x.claim, x.headline) for x in _asked_first("Which kernel?", f, [[], ["kernel"]])]
    [('Kernel 6.8', True), ('vLLM 0.11', True)]
    """
    import re

    norm = question.lower()
    hit = [any(re.search(rf"(?<![a-z0-9]){re.escape(w.lower())}(?![a-z0-9])", norm)
               for w in words) for words in asks]
    first = [f.model_copy(update={"headline": True}) for f, h in zip(found, hit, strict=True)
             if h]
    return first + [f for f, h in zip(found, hit, strict=True) if not h]
