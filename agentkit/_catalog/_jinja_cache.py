"""Compiled Jinja code and load-time check results kept on disk between runs.

Parsing and compiling the catalog's expressions and claims was the largest piece of one-time
work in ``agentkit ask`` (about 0.1 s of CPU on the reference example, every run, for the same
texts). Jinja's own bytecode cache serves only templates loaded by name, so this does the same
for strings: the code object of each source, marshalled, under a key that covers everything
the code depends on (the source, Jinja's version, the bytecode format, the environment's
class, options, filters and tests). A changed source is a new key; nothing is ever stale.

It is code loaded from disk, so it is loaded only from a directory and files owned by the user
and writable by no one else (the rule of Jinja's ``FileSystemBytecodeCache``), never through a
link; anything else, or anything unreadable, is compiled afresh. ``AGENTKIT_CACHE_DIR`` moves
the cache (default ``$XDG_CACHE_HOME/agentkit`` or ``~/.cache/agentkit``); ``off`` turns it off.
"""

from __future__ import annotations

import contextlib
import hashlib
import marshal
import os
import stat
import sys
import tempfile
from functools import lru_cache
from pathlib import Path
from types import CodeType
from typing import Any

import jinja2
from jinja2 import Environment, nodes
from jinja2.environment import TemplateExpression
from jinja2.parser import Parser

_MAGIC = sys.implementation.cache_tag or "none"


def cache_dir() -> Path | None:
    """Where the cache lives, or None when it is turned off."""
    where = os.environ.get("AGENTKIT_CACHE_DIR")
    if where is not None:
        return None if where.strip().lower() in ("", "off", "0", "none") else Path(where)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "agentkit"


def _fingerprint(env: Environment) -> str:
    return "\0".join([jinja2.__version__, _MAGIC, sys.version, type(env).__qualname__,
                      repr((env.trim_blocks, env.lstrip_blocks, env.undefined.__name__)),
                      ",".join(sorted(env.filters)), ",".join(sorted(env.tests))])


def key(env: Environment, kind: str, source: str) -> str:
    text = f"{_fingerprint(env)}\0{kind}\0{source}"
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@lru_cache(maxsize=4)
def _usable_dir(path: str) -> bool:
    """The directory exists (made 0700 if not), is ours and writable by no one else."""
    with contextlib.suppress(OSError):
        os.makedirs(path, mode=0o700, exist_ok=True)
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return (stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid()
            and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH))


def read(name: str) -> bytes | None:
    """The bytes of cache entry ``name``, if it is a regular file of ours that no one else can
    write; None otherwise."""
    where = cache_dir()
    if where is None or not _usable_dir(str(where)):
        return None
    try:
        fd = os.open(where / name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if (not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid()
                or st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)):
            return None
        return f.read()


def write(name: str, data: bytes) -> None:
    """Store an entry atomically (a reader sees the whole file or none); failures are
    ignored: the cache only ever saves time."""
    where = cache_dir()
    if where is None or not _usable_dir(str(where)):
        return
    with contextlib.suppress(OSError):
        fd, tmp = tempfile.mkstemp(dir=where, prefix=".tmp-")  # 0600
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, where / name)
        except OSError:
            os.unlink(tmp)


def _code(name: str) -> CodeType | None:
    data = read(name)
    if data is None:
        return None
    try:
        code = marshal.loads(data)
    except (EOFError, ValueError, TypeError):
        return None
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
