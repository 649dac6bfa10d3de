"""systemd's shell quoting of values (src/basic/escape.c ``shell_maybe_quote``), both ways:
read back what ``systemctl show`` / ``show-environment`` print, and print a value the same way.

Flags 0 (``systemctl show`` string arrays): a value is left bare unless it holds whitespace, a
control character, invalid UTF-8 or one of ``"\\`$*?['()<>|&;!``; then it is double-quoted with
``"\\`$`` backslash-escaped and control bytes C-escaped. ``SHELL_ESCAPE_POSIX``
(``show-environment``): ``$'…'``, escaping only ``\\`` and ``'`` (and control bytes).

Secrets in ``Environment=`` are redacted element by element (``redact_systemctl``): a value
whose quotes hold escaped quotes (``"SECRET=a \\"b\\" c"``) is one element to systemd, and
redacting the line as text would leave its tail behind.
"""

from __future__ import annotations

import re
from collections.abc import Callable

_C_ESCAPES = {"a": 7, "b": 8, "f": 12, "n": 10, "r": 13, "t": 9, "v": 11}


class Unreadable(ValueError):
    """A value systemd printed in a form that cannot be read back."""


def _unescape(body: str, literal: str) -> str:
    """The text between the quotes, unescaped: ``\\`` followed by one of ``literal`` stands
    for that character, a C escape for its byte, three octal digits for a byte."""
    out = bytearray()
    i = 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out += c.encode("utf-8", "surrogateescape")
            i += 1
            continue
        nxt = body[i + 1 : i + 2]
        if nxt and nxt in literal:
            out += nxt.encode()
            i += 2
        elif nxt in _C_ESCAPES:
            out.append(_C_ESCAPES[nxt])
            i += 2
        elif re.fullmatch(r"[0-3][0-7]{2}", body[i + 1 : i + 4]):
            out.append(int(body[i + 1 : i + 4], 8))
            i += 4
        else:
            raise Unreadable(f"unknown escape {body[i:i + 2]!r}")
    return out.decode("utf-8", "replace")


def split_strv(value: str, keep_unprintable: bool = False) -> list[str]:
    """A string array as ``systemctl show`` prints it, back into its elements.

    >>> split_strv('NCCL_PROTO=LL "MSG=a b" "P=\\\\$HOME"')
    ['NCCL_PROTO=LL', 'MSG=a b', 'P=$HOME']
    """
    items: list[str] = []
    i = 0
    while i < len(value):
        if value[i] == " ":
            i += 1
            continue
        if value[i] != '"':
            end = value.find(" ", i)
            end = len(value) if end < 0 else end
            word = value[i:end]
            if word == "[unprintable]" and not keep_unprintable:
                raise Unreadable("an element printed as [unprintable] (systemd before v247 "
                                 "prints values with spaces that way)")
            items.append(word)
            i = end
            continue
        j = i + 1
        while j < len(value) and value[j] != '"':
            j += 2 if value[j] == "\\" else 1
        if j >= len(value):
            raise Unreadable(f"unterminated quote in {value[i:i + 40]!r}")
        items.append(_unescape(value[i + 1 : j], '"\\`$'))
        i = j + 1
        if i < len(value) and value[i] != " ":
            raise Unreadable(f"text after a closing quote: {value[i:i + 20]!r}")
    return items


def unquote_posix(value: str) -> str:
    """A value as ``systemctl show-environment`` prints it: bare, or ``$'…'``."""
    if value.startswith("$'") and value.endswith("'") and len(value) >= 3:
        return _unescape(value[2:-1], "\\'")
    if value == '""':  # SHELL_ESCAPE_EMPTY: an empty value, where a version quotes it
        return ""
    return value


_NEEDS_QUOTES = set(' \t\n\r"\\`$*?[\'()<>|&;!')
_C_NAMES = {v: k for k, v in _C_ESCAPES.items()}


def quote(value: str, posix: bool = False) -> str:
    """``value`` as ``shell_maybe_quote`` prints it (flags 0, or SHELL_ESCAPE_POSIX)."""
    if not any(c in _NEEDS_QUOTES or ord(c) < 32 or ord(c) == 127 for c in value):
        return value
    escape = "\\'" if posix else '"\\`$'
    out = []
    for c in value:
        if c in escape:
            out.append("\\" + c)
        elif ord(c) in _C_NAMES:
            out.append("\\" + _C_NAMES[ord(c)])
        elif ord(c) < 32 or ord(c) == 127:
            out.append(f"\\{ord(c):03o}")
        else:
            out.append(c)
    return ("$'" + "".join(out) + "'") if posix else ('"' + "".join(out) + '"')


_STRV = ("Environment", "UnsetEnvironment", "PassEnvironment")
_WITHHELD = "[withheld: not readable as systemd prints it]"


def redact_systemctl(argv: list[str], out: str, redact: Callable[[str], str]) -> str:
    """``systemctl show``'s environment arrays and ``show-environment``'s lines redacted one
    variable at a time, re-quoted as systemd quotes them; a line that cannot be read back is
    withheld whole. Everything else is left for the caller's redaction of the whole text."""
    sub = next((a for a in argv[1:] if not a.startswith("-")), "")
    if argv[:1] != ["systemctl"] or sub not in ("show", "show-environment"):
        return out
    lines = out.split("\n")
    for i, line in enumerate(lines):
        name, eq, value = line.partition("=")
        if not eq:
            continue
        try:
            if sub == "show-environment":
                lines[i] = _one(name, unquote_posix(value), redact, posix=True)
            elif name in _STRV and value:
                lines[i] = name + "=" + " ".join(
                    item if item == "[unprintable]" else quote(redact(item))
                    for item in split_strv(value, keep_unprintable=True))
        except Unreadable:
            lines[i] = f"{name}={_WITHHELD}"
    return "\n".join(lines)


def _one(name: str, value: str, redact: Callable[[str], str], posix: bool) -> str:
    got = redact(f"{name}={value}")
    key, _, val = got.partition("=")
    return f"{key}={quote(val, posix)}"
