"""Decode, then redact, line by line: the text a reader makes of a line, when that differs
from its characters (issue 28, rt3 E1/E2).

* an HTML character reference is its character to a browser or a template engine
  (``value=&#x51;P4F…`` is ``value=QP4F…``);
* invisible characters are what a terminal does not show (``pass<U+200B>word`` reads
  ``password``; they stay elsewhere, and the model is shown them as ``<U+200B>``), and a
  backspace overprints (``passx<BS>word``), in text that did not pass
  :func:`._decode.clean` (a parsed value, an argument vector);
* a line ending in an odd number of backslashes goes on in the next, whose leading blanks
  are dropped, as ``java.util.Properties`` reads it (``spring.datasource.pass\\`` then
  ``    word=v`` sets ``spring.datasource.password``); shells and Dockerfiles continue lines
  the same way.

A line (or a run of continued lines) is judged on its reading; only when the rules find a
secret there does the output change, and then it shows the redacted reading. Every other
line comes out byte for byte, so a benign ``&amp;`` or a continued command line stays.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ._decode import INVISIBLE, overstrike

HINT = re.compile(r"&#?[0-9A-Za-z]+;|\\\r?$|[\b\u00ad\u200b-\u200f\u202a-\u202e"
                  r"\u2060-\u2064\u2066-\u2069\ufeff]", re.M)


def _continued(line: str) -> bool:
    body = line.rstrip("\r")
    return (len(body) - len(body.rstrip("\\"))) % 2 == 1


def _reading(line: str) -> str:
    if "&" in line:
        import html  # its entity table loads only for a line that may hold one

        line = html.unescape(line)
    if "\b" in line:
        line = overstrike(line)
    return INVISIBLE.sub("", line)


def redact_readings(text: str, redact: Callable[[str], str]) -> str:
    """``text`` with each line (or run of continued lines) whose reading ``redact`` changes
    shown as that reading, redacted."""
    if not HINT.search(text):
        return text
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        j = i
        while j + 1 < len(lines) and _continued(lines[j]) and j - i < 64:
            j += 1
        out += _judged(lines[i:j + 1], redact)
        i = j + 1
    return "\n".join(out)


def _judged(group: list[str], redact: Callable[[str], str]) -> list[str]:
    if len(group) == 1 and not HINT.search(group[0]):
        return group
    # the pieces of the logical line: a continued line without its backslash, the lines
    # after it without their leading blanks
    pieces = []
    for k, line in enumerate(group):
        body = line.rstrip("\r")
        body = body[:-1] if k < len(group) - 1 else body
        pieces.append(_reading(body if k == 0 else body.lstrip(" \t\f")))
    joined = "".join(pieces)
    if joined == "\n".join(group):
        return group
    shown = redact(joined)
    if shown == joined:
        return group
    out, pos = [], 0
    for k, (line, piece) in enumerate(zip(group, pieces, strict=True)):
        if shown.startswith(piece, pos) and k < len(group) - 1:
            out.append(line)  # untouched: as it was
            pos += len(piece)
            continue
        indent = line[:len(line) - len(line.lstrip(" \t\f"))] if k else ""
        out.append(indent + shown[pos:])
        out += [ln[:len(ln) - len(ln.lstrip(" \t\f"))] for ln in group[k + 1:]]
        break
    return out
