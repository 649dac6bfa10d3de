"""Static checks of a task template, at load time: every claim and argument parses as a
Jinja template, every condition and value as a Jinja expression, every filter and test they
use exists, every ``call:`` names a registered recipe function and every tool a template
uses is one it lists. A mistake is reported with the file, the field and the line inside the
field, before anything runs.

Parsing, not compiling: compiling every expression of the catalog was a third of the time of
``agentkit ask``; a step is compiled when it first runs (and cached), and the only thing the
compiler adds to the parser's checks is that filters and tests exist, which is checked here
on the syntax tree."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from jinja2 import Environment, TemplateSyntaxError, nodes
from jinja2.parser import Parser

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
            _names(env, env.parse(source))
        except TemplateSyntaxError as exc:
            out.append(f"field '{field}' line {exc.lineno}: {exc.message}")

    def expr(field: str, source: str) -> None:
        try:
            _names(env, _parse_expression(env, source))
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


def _parse_expression(env: Environment, source: str) -> nodes.Node:
    # What Environment.compile_expression does before it compiles.
    parser = Parser(env, source, state="variable")
    expr = parser.parse_expression()
    if not parser.stream.eos:
        raise TemplateSyntaxError("chunk after expression", parser.stream.current.lineno)
    return expr


def _names(env: Environment, tree: nodes.Node) -> None:
    # find_all yields descendants only; an expression may be a filter or test itself
    for node in [tree, *tree.find_all((nodes.Filter, nodes.Test))]:
        if not isinstance(node, nodes.Filter | nodes.Test):
            continue
        known = env.filters if isinstance(node, nodes.Filter) else env.tests
        if node.name not in known:
            kind = "filter" if isinstance(node, nodes.Filter) else "test"
            raise TemplateSyntaxError(f"No {kind} named {node.name!r}.", node.lineno)
