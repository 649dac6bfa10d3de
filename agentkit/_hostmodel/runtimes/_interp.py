"""Compose's variable interpolation, from the Compose specification ("Interpolation"):

- ``$VAR`` and ``${VAR}``: the value, or an empty string when unset (Compose warns);
- ``${VAR:-default}`` when VAR is unset or empty, ``${VAR-default}`` only when unset;
- ``${VAR:?err}`` / ``${VAR?err}``: an error (the project does not load) when unset or empty /
  unset;
- ``${VAR:+alt}`` / ``${VAR+alt}``: alt when VAR is set and non-empty / set, else empty;
- the default, alt and error texts are interpolated in turn, only when used (``${A:-${B}}``),
  and may hold braces (``${X:-{"json":1}}``): the closing brace is the one that balances;
- ``$$`` is a literal ``$``; a ``$`` before anything else stays; a ``${`` that is not a
  name followed by one of those operators (``${}``, ``${ x}``, ``${x!}``) is an invalid
  template, and so is one never closed.

Checked against compose-go's own template tests (tests/test_runtimes_compose_interp.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable

_NAME = re.compile(r"[_a-zA-Z][_a-zA-Z0-9]*")
_OPS = (":-", ":?", ":+", "-", "?", "+")

Lookup = Callable[[str], "str | None"]


class InvalidTemplate(ValueError):
    pass


class MissingRequired(ValueError):
    def __init__(self, name: str, reason: str) -> None:
        super().__init__(f"required variable {name} is missing a value"
                         + (f": {reason}" if reason else ""))
        self.name, self.reason = name, reason


def substitute(text: str, lookup: Lookup) -> str:
    out: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c != "$" or i + 1 == len(text):
            out.append(c)
            i += 1
            continue
        nxt = text[i + 1]
        if nxt == "$":
            out.append("$")
            i += 2
        elif nxt == "{":
            end = _closing(text, i + 2)
            if end < 0:
                raise InvalidTemplate(text)
            out.append(_braced(text[i + 2 : end], text, lookup))
            i = end + 1
        elif (m := _NAME.match(text, i + 1)) is not None:
            out.append(lookup(m.group(0)) or "")
            i = m.end()
        else:
            out.append("$")
            i += 1
    return "".join(out)


def _closing(text: str, start: int) -> int:
    depth = 1
    for j in range(start, len(text)):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return j
    return -1


def _braced(body: str, text: str, lookup: Lookup) -> str:
    m = _NAME.match(body)
    if m is None:
        raise InvalidTemplate(text)
    name, rest = m.group(0), body[m.end() :]
    value = lookup(name)
    if not rest:
        return value or ""
    op = next((o for o in _OPS if rest.startswith(o)), None)
    if op is None:
        raise InvalidTemplate(text)
    arg = rest[len(op) :]
    present = value is not None and (value != "" or not op.startswith(":"))
    if op.endswith("-"):
        return value if present and value is not None else substitute(arg, lookup)
    if op.endswith("?"):
        if present and value is not None:
            return value
        raise MissingRequired(name, substitute(arg, lookup))
    return substitute(arg, lookup) if present else ""  # + / :+
