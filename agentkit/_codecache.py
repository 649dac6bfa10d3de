"""dataclasses' generated methods, compiled once and kept in the user's cache.

Python 3.11's ``dataclasses`` writes each method it generates (``__init__``, ``__repr__``,
``__eq__``; for a frozen class ``__setattr__``, ``__delattr__`` and ``__hash__``) as source
text and compiles it with ``exec``. About 140 dataclasses load on an ``agentkit ask`` (71 of
them agentkit's, the rest pydantic's, anyio's and annotated_types'): some 40 ms of CPU, a
tenth of the whole run, compiling the same texts every time.

:func:`compiled_dataclasses` is for a program that owns its process (the CLI): while it is
open, ``dataclasses`` finds an ``exec`` in its own module that runs, for a text, the code
object ``exec`` would compile from it (``compile(text, "<string>", "exec")`` with no future
flags inherited, as ``exec`` compiles a text for a module without ``__future__`` imports;
``tests/test_codecache.py`` checks the code is equal), taken from one cache entry that maps
each text to its code. The entry is read only from the user's own files, writable by no one
else (``_cachefiles``, the rule of the Jinja and regex caches), under a name that covers the
exact Python build (bytecode and marshal format); a text not in it is compiled as ``exec``
would and the entry rewritten when the block ends. Everything else ``exec`` is given (code
objects, no globals) goes to ``exec`` itself.
"""

from __future__ import annotations

import builtins
import hashlib
import importlib.util
import marshal
import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ._cachefiles import read_marshalled, write

_NAME = hashlib.sha256("\0".join(
    ["dataclass-code", sys.version, sys.implementation.cache_tag or "none",
     importlib.util.MAGIC_NUMBER.hex()]).encode()).hexdigest() + ".dataclasses"
_MAX = 1500  # texts kept (~500 per run): past that, only what the last run used


def compile_text(source: str) -> types.CodeType:
    """What ``exec(source, ...)`` compiles when called from a module without ``__future__``
    imports (``dataclasses``)."""
    return compile(source, "<string>", "exec", dont_inherit=True)


@contextmanager
def compiled_dataclasses() -> Iterator[None]:
    """dataclasses' generated code from the cache while the block runs (see the module)."""
    import dataclasses

    if "exec" in vars(dataclasses):  # someone else's already: leave it be
        yield
        return
    known = _load()
    used: dict[str, types.CodeType] = {}
    fresh = False

    def exec_(source: Any, globals: Any = None, locals: Any = None, /) -> None:
        nonlocal fresh
        if type(source) is not str or globals is None:
            if globals is None:  # exec's own default: the caller's namespaces
                frame = sys._getframe(1)
                globals, locals = frame.f_globals, (frame.f_locals if locals is None
                                                    else locals)
            builtins.exec(source, globals, locals)
            return
        code = known.get(source)
        if code is None:
            code, fresh = compile_text(source), True
        used[source] = code
        builtins.exec(code, globals, locals)

    dataclasses.exec = exec_  # type: ignore[attr-defined]
    try:
        yield
    finally:
        del dataclasses.exec  # type: ignore[attr-defined]
        if fresh:
            _store(known, used)


def _load() -> dict[str, types.CodeType]:
    got = read_marshalled(_NAME)
    if not (isinstance(got, dict) and all(
            type(k) is str and type(v) is types.CodeType for k, v in got.items())):
        return {}
    return got


def _store(known: dict[str, types.CodeType], used: dict[str, types.CodeType]) -> None:
    keep = {**known, **used}
    if len(keep) > _MAX:
        keep = used
    try:
        data = marshal.dumps(keep)
    except ValueError:
        return
    write(_NAME, data)
