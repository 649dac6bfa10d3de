"""Multi-line quoted values in dotenv files: the lines after an assignment's first line."""

from __future__ import annotations

import re

from ._keys import env_secret

_WORD = re.compile(r"[A-Za-z0-9]{16,}")  # as a credential-looking word anywhere else


# An assignment whose quoted value does not close on its line: python-dotenv and compose
# read it on to the closing quote, so the lines after it are the value (issue 28: a
# password's second line was shown, without its name, by every reader).
_OPEN_QUOTE = re.compile(r"(?m)^[+-]?[ \t]*(?:export[ \t]+)?[A-Za-z_][A-Za-z0-9_.]*[ \t]*="
                         r"[ \t]*([\"'])(?:\\.|(?!\1)[^\\\n])*$")
_TAIL = "[REDACTED:env-file]"


def quoted_tails(text: str) -> str:
    """The lines that continue a multi-line quoted value: withheld whole when the value's
    first line was (a secret's name, a credential-looking start), otherwise each word that
    looks like a credential, as on any dotenv line."""
    if not _OPEN_QUOTE.search(text):
        return text
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = _OPEN_QUOTE.match(lines[i])
        i += 1
        if not m:
            continue
        whole = "[REDACTED:" in lines[i - 1][m.start(1):]
        while i < len(lines):
            end = _closing(lines[i], m.group(1))
            body, rest = (lines[i], "") if end < 0 else (lines[i][:end], lines[i][end:])
            lines[i] = (_TAIL if whole and body.strip() else _words(body)) + rest
            i += 1
            if end >= 0:
                break
    return "\n".join(lines)


def _closing(line: str, quote: str) -> int:
    m = re.search(r"(?:^|[^\\])(?:\\\\)*" + re.escape(quote), line)
    return -1 if m is None else m.end() - 1


def _words(text: str) -> str:
    return _WORD.sub(lambda m: _TAIL if env_secret(m.group(0)) else m.group(0), text)
