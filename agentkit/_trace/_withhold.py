"""Secrets agentkit itself holds (the model API key), withheld in every spelling.

The pattern redactor (``_sandbox._redact``) guesses secrets from their names and shapes; a
secret agentkit *knows* needs no guess: its value can be looked for, whatever it is called.
A model server that answers 400 with ``\\u004bLlE…`` (the key, first character JSON-escaped),
``KLlEu%6E…``, the key split by an ANSI escape, or base64 of it, echoes the whole key to anyone
who decodes what they read (issue 28, M-A); a model reply may quote it (M-B). So the value is
looked for as spelled by each common escape (JSON/Python ``\\uXXXX``/``\\xXX``/octal, URL
``%XX``, HTML ``&#…;``), with terminal escapes and invisible characters allowed between any
two characters, and also as its base64/base64url (at the three byte alignments a value can
have inside a longer encoded stream) and hex encodings.

It lives with the trace, this low, because both the trace writer and the model client (a
layer above) must use it; a model backend :func:`remember`\\ s its key when it is made.
"""

from __future__ import annotations

import base64
import re
import threading
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

MIN_LEN = 8  # shorter values would match ordinary words; no real API key is this short
# a run this long of a known key's characters is a piece of the key (a reply that quotes it
# in halves), not a word: the fixed prefixes keys share ("sk-proj-") are shorter
FRAGMENT = 12
MARK = "[REDACTED:api-key]"

_BS = r"\\+"  # one or more backslashes: an escape, or an escape escaped again (JSON in JSON)
_ESC = rf"(?:\x1b|{_BS}(?:u001[bB]|x1[bB]|0?33|e))"
# what a terminal shows as nothing: CSI/OSC/two-character escapes, controls (newlines of a
# wrapped base64 included), zero-width and direction marks, and their escaped spellings
_JUNK = (rf"(?:{_ESC}(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])"
         r"|[\x00-\x1f\x7f-\x9f\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]"
         rf"|{_BS}(?:[nrtbf]|u00[01][0-9a-fA-F]|u007[fF]|x[01][0-9a-fA-F]|u200[b-fB-F]"
         r"|u[fF][eE][fF][fF])|%(?:[01][0-9a-fA-F]|7[fF])|&#(?:[xX]0*1?[0-9a-fA-F]|0*[12]?\d);?)*")

# The cheap first look: the text with every escape decoded and all junk dropped (backslashes
# too, since a literal may carry them), in which a spelling of the secret must appear as
# itself; only then does the full pattern run (it costs ~0.4 ms a KB, the trace writes MBs).
_DECODE = re.compile(r"\\+(?:u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8})|x([0-9a-fA-F]{2})|0?([0-7]{2,3})"
                     r"|[nrtbf]|(e))|&#(?:[xX]([0-9a-fA-F]+)|(\d+));?|((?:%[0-9a-fA-F]{2})+)")
_DROP = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])"
                   r"|[\x00-\x1f\x7f-\x9f\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff\\]")

_lock = threading.Lock()
_known: dict[str, None] = {}  # insertion-ordered set


def _hexes(n: int, width: int) -> str:
    """``n`` in hex, each letter digit matching either case."""
    return "".join(f"[{d}{d.upper()}]" if d.isalpha() else d for d in f"{n:0{width}x}")


def _char(c: str, fold: bool) -> str:
    n = ord(c)
    lits = {c.lower(), c.upper()} if fold else {c}
    alts = [re.escape(x) if x.isalnum() else rf"\\*{re.escape(x)}" for x in sorted(lits)]
    alts.append(rf"{_BS}u{_hexes(n, 4)}" if n < 0x10000 else rf"{_BS}U{_hexes(n, 8)}")
    alts += [rf"&#[xX]0*{_hexes(n, 1)};?", rf"&#0*{n};?"]
    if n < 0x100:
        alts += [rf"{_BS}x{_hexes(n, 2)}", rf"{_BS}0?{n:o}"]
    alts.append("".join(f"%{_hexes(b, 2)}" for b in c.encode("utf-8")))
    return "(?:" + "|".join(alts) + ")"


def _spelled(form: str, fold: bool = False) -> str:
    return _JUNK.join(_char(c, fold) for c in form)


def _b64_cores(raw: bytes) -> list[str]:
    """The base64 characters that depend only on ``raw``, at each of the three offsets it can
    have in a longer stream (the characters at its edges mix in its neighbours' bits)."""
    cores = []
    for lead in range(3):
        enc = base64.b64encode(b"\0" * lead + raw).decode().rstrip("=")
        start = -(-8 * lead // 6)
        end = 8 * (lead + len(raw)) // 6
        cores.append(enc[start:end])
    return cores


def forms(secret: str) -> list[tuple[str, bool]]:
    """Each spelling looked for, and whether its letters match in either case (hex)."""
    raw = secret.encode("utf-8")
    out = [(secret, False), (raw.hex(), True)]
    for core in _b64_cores(raw):
        out.append((core, False))
        url = core.replace("+", "-").replace("/", "_")
        if url != core:
            out.append((url, False))
    return out


@lru_cache(maxsize=64)
def pattern(secret: str) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{_spelled(f, fold)})" for f, fold in forms(secret)))


def _decoded(m: re.Match[str]) -> str:
    from urllib.parse import unquote

    if m.group(8):
        return unquote(m.group(8), errors="replace")
    if m.group(5):
        return "\x1b"
    for i, base in ((1, 16), (2, 16), (3, 16), (4, 8), (6, 16), (7, 10)):
        if m.group(i):
            try:
                return chr(int(m.group(i), base))
            except (ValueError, OverflowError):
                return ""
    return ""  # \n, \t…: a control, dropped as junk is


def _normal(text: str) -> str:
    return _DROP.sub("", _DECODE.sub(_decoded, text))


@lru_cache(maxsize=64)
def _plain(secret: str) -> tuple[tuple[str, bool], ...]:
    return tuple((_normal(f).lower() if fold else _normal(f), fold) for f, fold in forms(secret))


def _maybe(secret: str, normal: str, lower: str) -> bool:
    return any(f in (lower if fold else normal) for f, fold in _plain(secret))


def remember(secret: str | None) -> None:
    """From now on, withhold ``secret`` from everything the process writes or traces."""
    global _known
    if secret and len(secret) >= MIN_LEN and secret not in _known:
        with _lock:  # a new dict: a reader iterating the old one in another thread is safe
            _known = {**_known, secret: None}


def forget_all() -> None:
    """For tests: no secret known."""
    global _known
    with _lock:
        _known = {}


def known() -> bool:
    return bool(_known)


def withhold(text: str, extra: Iterable[str] = ()) -> str:
    """``text`` with every remembered secret (and each of ``extra``), in any of its spellings,
    replaced by a mark."""
    secrets = [*_known, *(s for s in extra if s and len(s) >= MIN_LEN and s not in _known)]
    if not secrets:
        return text
    normal = _normal(text)
    lower = normal.lower()
    for secret in secrets:
        if _maybe(secret, normal, lower):
            text = pattern(secret).sub(MARK, text)
        if len(secret) > FRAGMENT:
            text = _pieces(secret, text)
    return text


@lru_cache(maxsize=64)
def _windows(secret: str) -> re.Pattern[str]:
    return re.compile("|".join(sorted({re.escape(secret[i:i + FRAGMENT])
                                       for i in range(len(secret) - FRAGMENT + 1)})))


def _pieces(secret: str, text: str) -> str:
    """``text`` with every run of FRAGMENT or more of ``secret``'s consecutive characters,
    spelled plainly, replaced by the mark (each run grown to its full length)."""
    out: list[str] = []
    pos = 0
    for m in _windows(secret).finditer(text):
        if m.start() < pos:
            continue
        i = secret.find(m.group(0))
        start, end, j = m.start(), m.end(), i + FRAGMENT
        while end < len(text) and j < len(secret) and text[end] == secret[j]:
            end, j = end + 1, j + 1
        out += [text[pos:start], MARK]
        pos = end
    return "".join(out) + text[pos:] if out else text


def withhold_data(value: Any) -> Any:
    """``value`` (JSON-like: dicts, lists, strings) with every string withheld; the same
    object when nothing in it changed."""
    if not _known:
        return value
    if isinstance(value, str):
        return withhold(value)
    if isinstance(value, dict):
        new = {k: withhold_data(v) for k, v in value.items()}
        return value if all(new[k] is value[k] for k in value) else new
    if isinstance(value, (list, tuple)):
        items = [withhold_data(v) for v in value]
        same = all(a is b for a, b in zip(items, value, strict=True))
        return value if same else type(value)(items)
    return value


class WithholdingStream:
    """A text stream (stdout, stderr) whose writes are withheld: the CLI puts one in front of
    each for a command, so whatever path an echoed key takes to the screen (an answer's
    note, a log line, a model's words in the answer), it is taken out there. Everything but
    ``write`` is the stream's own."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def write(self, text: str) -> int:
        self._inner.write(withhold(text) if _known else text)
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)
