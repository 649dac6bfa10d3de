"""Compiled Jinja code and load-time check results kept on disk between runs.

Parsing and compiling the catalog's expressions and claims was the largest piece of one-time
work in ``agentkit ask`` (about 0.1 s of CPU on the reference example, every run, for the same
texts). Jinja's own bytecode cache serves only templates loaded by name, so this does the same
for strings: the code object of each source, marshalled, under a key that covers everything
the code depends on (the source, Jinja's version, the bytecode format, the environment's
class, options, filters and tests). A changed source is a new key; nothing is ever stale.

It is code loaded from disk, so it is loaded only from a directory and files owned by the user
and writable by no one else, never through a link (``agentkit._cachefiles``, which also says
where the cache is and how to turn it off); anything else is compiled afresh.
"""

from __future__ import annotations

import hashlib
import marshal
import sys
from types import CodeType
from typing import Any

import jinja2
from jinja2 import Environment, nodes
from jinja2.environment import TemplateExpression
from jinja2.parser import Parser

from .._cachefiles import read_marshalled, write

__all__ = ["compile_expression", "from_string", "key"]

_MAGIC = sys.implementation.cache_tag or "none"


def _fingerprint(env: Environment) -> str:
    return "\0".join([jinja2.__version__, _MAGIC, sys.version, type(env).__qualname__,
                      repr((env.trim_blocks, env.lstrip_blocks, env.undefined.__name__)),
                      ",".join(sorted(env.filters)), ",".join(sorted(env.tests))])


def key(env: Environment, kind: str, source: str) -> str:
    text = f"{_fingerprint(env)}\0{kind}\0{source}"
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _code(name: str) -> CodeType | None:
    code = read_marshalled(name)
    return code if isinstance(code, CodeType) else None


def from_string(env: Environment, source: str) -> jinja2.Template:
    """``env.from_string(source)``, its compiled code taken from the cache when present."""
    name = key(env, "template", source) + ".code"
    code = _code(name)
    if code is None:
        code = env.compile(source)  # raises as from_string does
        write(name, marshal.dumps(code))
    return env.template_class.from_code(env, code, env.make_globals(None), None)


def compile_expression(env: Environment, source: str, undefined_to_none: bool) -> Any:
    """``env.compile_expression(source, undefined_to_none)``, the same steps as Jinja's (an
    assignment of the expression to ``result`` in a one-node template), its compiled code
    taken from the cache when present."""
    name = key(env, "expression", source) + ".code"
    code = _code(name)
    if code is None:
        parser = Parser(env, source, state="variable")
        try:
            expr = parser.parse_expression()
            if not parser.stream.eos:
                raise jinja2.TemplateSyntaxError("chunk after expression",
                                                 parser.stream.current.lineno, None, None)
            expr.set_environment(env)
        except jinja2.TemplateSyntaxError:
            env.handle_exception(source=source)
        body = [nodes.Assign(nodes.Name("result", "store"), expr, lineno=1)]
        code = env.compile(nodes.Template(body, lineno=1))
        write(name, marshal.dumps(code))
    template = env.template_class.from_code(env, code, env.make_globals(None), None)
    return TemplateExpression(template, undefined_to_none)
