"""A JSON reader that remembers the line of every key (the stdlib's forgets).

Values come from :mod:`json`'s own scanner; only objects and arrays are walked here, so the
result is exactly ``json.loads`` plus a ``{key path: line}`` map. A key path is a tuple of
the keys (and list indexes) on the way: it shares each key with the parsed value, so a long
key over many children is held once, never copied into each child's path (issue 28: a 200 KB
key over 25k children made 5 GB of path strings).
"""

from __future__ import annotations

import bisect
import json
import re
from typing import Any

_WS = re.compile(r"[ \t\n\r]*")
_MAX_DEPTH = 64
KeyPath = tuple[str | int, ...]


class JSONLineError(ValueError):
    def __init__(self, msg: str, line: int, col: int) -> None:
        super().__init__(f"{msg} at line {line} column {col}")
        self.line = line
        self.col = col


class _Reader:
    def __init__(self, text: str) -> None:
        self.s = text
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self.lines: dict[KeyPath, int] = {}
        self.decoder = json.JSONDecoder()

    def line_of(self, pos: int) -> int:
        return bisect.bisect_right(self.starts, pos)

    def error(self, msg: str, pos: int) -> JSONLineError:
        line = self.line_of(pos)
        return JSONLineError(msg, line, pos - self.starts[line - 1] + 1)

    def ws(self, pos: int) -> int:
        m = _WS.match(self.s, pos)
        return m.end() if m else pos

    def value(self, pos: int, path: KeyPath, depth: int) -> tuple[Any, int]:
        if depth > _MAX_DEPTH:
            raise self.error(f"nesting deeper than {_MAX_DEPTH}", pos)
        pos = self.ws(pos)
        ch = self.s[pos : pos + 1]
        if ch == "{":
            return self.obj(pos + 1, path, depth)
        if ch == "[":
            return self.arr(pos + 1, path, depth)
        try:
            return self.decoder.raw_decode(self.s, pos)
        except json.JSONDecodeError as exc:
            raise self.error(exc.msg, exc.pos) from None

    def obj(self, pos: int, path: KeyPath, depth: int) -> tuple[dict[str, Any], int]:
        out: dict[str, Any] = {}
        pos = self.ws(pos)
        if self.s.startswith("}", pos):
            return out, pos + 1
        while True:
            pos = self.ws(pos)
            if not self.s.startswith('"', pos):
                raise self.error("expected a quoted key", pos)
            key, end = self.decoder.raw_decode(self.s, pos)
            sub = (*path, key)
            self.lines.setdefault(sub, self.line_of(pos))
            pos = self.ws(end)
            if not self.s.startswith(":", pos):
                raise self.error("expected ':'", pos)
            out[key], pos = self.value(pos + 1, sub, depth + 1)
            pos = self.ws(pos)
            if self.s.startswith(",", pos):
                pos += 1
            elif self.s.startswith("}", pos):
                return out, pos + 1
            else:
                raise self.error("expected ',' or '}'", pos)

    def arr(self, pos: int, path: KeyPath, depth: int) -> tuple[list[Any], int]:
        out: list[Any] = []
        pos = self.ws(pos)
        if self.s.startswith("]", pos):
            return out, pos + 1
        while True:
            sub = (*path, len(out))
            self.lines.setdefault(sub, self.line_of(self.ws(pos)))
            item, pos = self.value(pos, sub, depth + 1)
            out.append(item)
            pos = self.ws(pos)
            if self.s.startswith(",", pos):
                pos += 1
            elif self.s.startswith("]", pos):
                return out, pos + 1
            else:
                raise self.error("expected ',' or ']'", pos)


def loads_with_lines(text: str) -> tuple[Any, dict[KeyPath, int]]:
    """``(value, {("a", "b", 0, "c"): line})`` for a JSON document."""
    r = _Reader(text)
    value, pos = r.value(0, (), 0)
    pos = r.ws(pos)
    if pos != len(text):
        raise r.error("extra data after the JSON value", pos)
    return value, r.lines
