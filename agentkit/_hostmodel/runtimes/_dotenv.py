"""Compose's ``.env`` and ``env_file`` format (Compose v2, compose-go's dotenv), from its
documented behaviour and test cases (tests/test_runtimes_compose_dotenv.py):

- blank lines and ``#`` lines are skipped; ``export`` before a name is allowed; ``NAME=value``
  and ``NAME: value``, with blanks around the separator; a name alone on its line takes the
  value from the environment compose runs in (unset there: not set);
- a name is letters, digits, ``_ . - [ ]``; anything else (``lol$wut``) is an error, a space
  inside a name too;
- unquoted values end at the line's end or at `` #`` (an inline comment), trailing blanks
  dropped, and ``$VAR``/``${VAR…}`` interpolated (:mod:`._interp`);
- single-quoted values are literal; double-quoted ones may span lines, take the escapes
  ``\\n \\t \\r \\a \\b \\f \\v \\\\ \\" \\$`` and ``\\0NNN`` (octal), and are interpolated
  (``\\$`` stays a literal ``$``); an unclosed quote is an error, and so is ``export`` with
  only blanks after it; an error names the statement's line (for an unclosed quote, the line
  it opens on, where compose-go's counter has already run to the file's end);
- interpolation looks a name up in the environment compose runs in first, then in the names
  defined above it in the same file.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from ._interp import substitute

_SPACE = "\t\v\f\r \x85\xa0"  # blanks within a line (no newline)
_ESCAPE = re.compile(r"\\(?:[abcfnrtv$\"\\]|0[0-9]{0,3})")
_SIMPLE = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v",
           "\\": "\\", '"': '"'}


class DotenvError(ValueError):
    pass


@dataclass
class Entry:
    name: str
    value: str
    line: int


Lookup = Callable[[str], "str | None"]


def parse_dotenv(text: str, lookup: Lookup) -> list[Entry]:
    """The entries of a dotenv text in order (a name may repeat: the last one wins)."""
    out: list[Entry] = []
    defined: dict[str, str] = {}

    def interp(value: str) -> str:
        def find(name: str) -> str | None:
            got = lookup(name)
            return got if got is not None else defined.get(name)
        return substitute(value, find)

    pos = 0
    while True:
        pos = _statement(text, pos)
        if pos >= len(text):
            return out
        line = text.count("\n", 0, pos) + 1
        name, pos, inherited = _name(text, pos, line)
        if inherited:
            got = lookup(name)
            if got is not None:
                out.append(Entry(name, got, line))
                defined[name] = got
            continue
        value, pos = _value(text, pos, line, interp)
        out.append(Entry(name, value, line))
        defined[name] = value


def _statement(text: str, pos: int) -> int:
    while pos < len(text):
        if text[pos].isspace():
            pos += 1
        elif text[pos] == "#":
            nl = text.find("\n", pos)
            pos = len(text) if nl < 0 else nl
        else:
            return pos
    return pos


def _name(text: str, pos: int, line: int) -> tuple[str, int, bool]:
    if text.startswith("export", pos) and text[pos + 6 : pos + 7] in tuple("\t\n\f\r "):
        pos += 6
        while pos < len(text) and text[pos] in _SPACE:
            pos += 1
        if pos == len(text):  # compose-go refuses `export` with only blanks after it
            raise DotenvError(f"line {line}: zero length string")
    start = pos
    for i in range(pos, len(text)):
        c = text[i]
        if c in _SPACE:
            continue
        if c in "=:\n":
            name = text[start:i].rstrip()
            if " " in name:
                raise DotenvError(f"line {line}: key cannot contain a space")
            rest = i + 1
            while c != "\n" and rest < len(text) and text[rest] in _SPACE:
                rest += 1
            return name, rest, c == "\n"
        if not (c in "_.-[]" or c.isalpha() or c.isdigit()):
            first = text[start:].split("\n", 1)[0]
            raise DotenvError(f"line {line}: unexpected character {c!r} in variable name "
                              f"{first!r}")
    return "", start, False  # a last line with no separator: its text is the value of ""


def _value(text: str, pos: int, line: int, interp: Callable[[str], str]) -> tuple[str, int]:
    quote = text[pos] if pos < len(text) and text[pos] in "'\"" else ""
    if not quote:
        end = text.find("\n", pos)
        end = len(text) if end < 0 else end
        value = text[pos:end].split(" #", 1)[0].rstrip()
        return interp(value), end
    chars: list[str] = []
    escaped = False
    for i in range(pos + 1, len(text)):
        c = text[i]
        if c != quote:
            if not escaped and c == "\\":
                escaped = True
                continue
            if escaped:
                escaped = False
                chars.append("\\")
            chars.append(c)
            continue
        if escaped:
            escaped = False
            chars.append(c)
            continue
        value = "".join(chars)
        if quote == '"':
            value = interp(_escapes(value))
        return value, i + 1
    first = text[pos:].split("\n", 1)[0]
    raise DotenvError(f"line {line}: unterminated quoted value {first}")


def _escapes(value: str) -> str:
    def one(m: re.Match[str]) -> str:
        seq = m.group(0)[1:]
        if seq == "$":
            return "$$"  # interpolation then gives a literal $
        if seq.startswith("0"):  # \0NNN: exactly three octal digits, at most 255
            digits = seq[1:]
            ok = len(digits) == 3 and all(d in "01234567" for d in digits)
            return chr(int(digits, 8)) if ok and int(digits, 8) < 256 else m.group(0)
        return _SIMPLE.get(seq, m.group(0))
    return _ESCAPE.sub(one, value)
