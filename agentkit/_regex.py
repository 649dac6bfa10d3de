"""``re``, with the compiled programs of patterns kept on disk between runs.

The redaction rules are about 110 patterns, many long and case-insensitive; compiling them
(Python's ``re`` parses and generates code in Python) was 20-25 ms of every ``agentkit ask``
start, the same work each time. A module that imports this as ``re`` gets everything of
``re`` unchanged except :func:`compile`, which keeps what ``re``'s compiler produces for a
pattern (flags, program, groups and their names) in the user's cache (``_cachefiles``: only
files of the user's own, writable by no one else) and builds the pattern from it with the
same final call ``re`` makes (``_sre.compile``, which checks the program before using it).

An entry is written only when the pattern built from it equals the one ``re.compile`` returns
(patterns compare equal when their text, flags and program are the same), under a key that
covers the pattern, the flags and the exact Python build, and holds the pattern and flags it
was made for (an entry found under another name is a miss); anything unusual (bytes, a flag
``re`` warns about or debugs with, another Python whose compiler internals differ, an entry
that does not load) is compiled by ``re`` itself.
"""

from __future__ import annotations

import hashlib
import marshal
import re as _re
import sys
from re import *  # noqa: F403  (this module stands for ``re`` where it is imported)
from re import Match, Pattern  # noqa: F401  (the types, for annotations)
from typing import Any

from ._cachefiles import read_marshalled, write

try:
    import _sre
    from re import _compiler, _parser  # type: ignore[attr-defined]
except ImportError:  # another Python: re compiles everything
    _sre = _compiler = _parser = None

_BUILD = "\0".join([sys.version, sys.implementation.cache_tag or "none",
                    str(getattr(_sre, "MAGIC", ""))])
_PLAIN = ~int(_re.DEBUG | _re.TEMPLATE)  # flags re handles with side effects: left to it


def compile(pattern: Any, flags: int = 0) -> Pattern[Any]:  # type: ignore[no-redef]
    """``re.compile(pattern, flags)``; for a text pattern, its program from the cache when
    present."""
    flags = int(flags)
    if _sre is None or not isinstance(pattern, str) or flags & ~_PLAIN:
        return _re.compile(pattern, flags)
    name = hashlib.sha256(f"{_BUILD}\0{flags}\0{pattern}".encode(
        "utf-8", "surrogatepass")).hexdigest() + ".re"
    built = _load(name, pattern, flags)
    if built is None:
        built = _re.compile(pattern, flags)
        _store(name, pattern, flags, built)
    return built


def _load(name: str, pattern: str, flags: int = 0) -> Pattern[str] | None:
    entry = read_marshalled(name)
    if entry is None:
        return None
    try:
        made_for, made_with, final, code, groups, groupindex, indexgroup = entry
        # an entry says which pattern it was made for: one under another name (swapped,
        # copied) would give a pattern other groups than the code using it asks for
        if made_for != pattern or made_with != flags:
            return None
        if not (isinstance(final, int) and isinstance(code, list) and isinstance(groups, int)
                and isinstance(groupindex, dict) and isinstance(indexgroup, tuple)):
            return None
        built: Pattern[str] = _sre.compile(pattern, final, code, groups, groupindex,
                                           indexgroup)
    except Exception:  # a truncated or foreign entry, or a program _sre refuses
        return None
    return built


def _store(name: str, pattern: str, flags: int, expected: Pattern[str]) -> None:
    """The program re's compiler makes for ``pattern`` (its own steps, as in
    ``re._compiler.compile``), stored when the pattern it builds equals ``expected``."""
    try:
        parsed = _parser.parse(pattern, flags)
        code = [int(op) for op in _compiler._code(parsed, flags)]  # opcodes are int subclasses
        groupindex = dict(parsed.state.groupdict)
        indexgroup: list[str | None] = [None] * parsed.state.groups
        for k, i in groupindex.items():
            indexgroup[i] = k
        entry = (int(flags | parsed.state.flags), code, int(parsed.state.groups - 1),
                 groupindex, tuple(indexgroup))
        if _sre.compile(pattern, *entry) != expected:
            return
        data = marshal.dumps((pattern, flags, *entry))
    except Exception:  # re's internals are not what this module knows: no entry
        return
    write(name, data)
