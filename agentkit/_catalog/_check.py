"""Static checks of a task template, at load time: every claim and argument compiles as a
Jinja template, every condition and value as a Jinja expression, every ``call:`` names a
registered recipe function and every tool a template uses is one it lists. A mistake is
reported with the file, the field and the line inside the field, before anything runs."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from jinja2 import TemplateSyntaxError

if TYPE_CHECKING:
    from ._template import TaskTemplate


def problems(tpl: TaskTemplate, tools: Iterable[str] | None = None) -> list[str]:
    """Every mistake in ``tpl``, as "field 'x.y' …: what"; ``tools``: the tool names the
    orchestrator offers (None: not checked here)."""
    from ._recipe import FUNCTIONS, _env

    env = _env()
    out: list[str] = []

    def text(field: str, source: str) -> None:
        try:
            env.parse(source)
        except TemplateSyntaxError as exc:
            out.append(f"field '{field}' line {exc.lineno}: {exc.message}")

    def expr(field: str, source: str) -> None:
        try:
            env.compile_expression(source)
        except TemplateSyntaxError as exc:
            out.append(f"field '{field}': expression {source!r} does not parse: {exc.message}")

    for i, step in enumerate(tpl.steps):
        where = f"steps.{i}"
        if step.call and step.call not in FUNCTIONS:
            out.append(f"field '{where}.call': no recipe function {step.call!r} (known: "
                       f"{', '.join(sorted(FUNCTIONS))})")
        if step.tool and step.tool not in tpl.tools:
            out.append(f"field '{where}.tool': {step.tool!r} is not in the template's tools "
                       f"({', '.join(tpl.tools)})")
        for name, value in step.args.items():
            for k, v in _strings(value, f"{where}.args.{name}"):
                if "{{" in v or "{%" in v:
                    text(k, v)
        for key in ("when", "value"):
            if getattr(step, key):
                expr(f"{where}.{key}", getattr(step, key))
    for i, f in enumerate(tpl.findings):
        text(f"findings.{i}.claim", f.claim)
        if f.when:
            expr(f"findings.{i}.when", f.when)
    if tpl.verdict is not None:
        expr("verdict.value", tpl.verdict.value)
    if tools is not None:
        known = set(tools)
        out += [f"field 'tools': no tool {t!r} (offered: {', '.join(sorted(known))})"
                for t in tpl.tools if t not in known]
    return out


def _strings(value: Any, field: str) -> list[tuple[str, str]]:
    if isinstance(value, str):
        return [(field, value)]
    if isinstance(value, list):
        return [x for i, v in enumerate(value) for x in _strings(v, f"{field}.{i}")]
    if isinstance(value, dict):
        return [x for k, v in value.items() for x in _strings(v, f"{field}.{k}")]
    return []
