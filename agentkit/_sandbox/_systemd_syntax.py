"""systemd's own value syntax, as systemd 252 reads it (differentially tested against
libsystemd-shared-252 in tests/test_systemd_truth.py):

- ``Environment=`` / ``DefaultEnvironment=`` / ``UnsetEnvironment=`` words: extract_first_word()
  with EXTRACT_CUNESCAPE|EXTRACT_UNQUOTE (src/basic/extract-word.c), C escapes as
  cunescape_one() decodes them (src/basic/escape.c);
- ``EnvironmentFile=`` contents: the state machine of parse_env_file_internal()
  (src/basic/env-file.c), then strv_env_clean() dropping names that are not valid;
- unit specifiers (systemd.unit(5) "Specifiers"), the ones that do not depend on the running
  host; any other makes the value "not established".
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

_WS = " \t\n\r"
_SIMPLE = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v",
           "\\": "\\", '"': '"', "'": "'", "s": " "}
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


class WordError(ValueError):
    """Unbalanced quotes, a trailing backslash or an escape systemd refuses."""


def env_name_valid(name: str) -> bool:
    """env_name_is_valid(): [A-Za-z_][A-Za-z0-9_]*."""
    return bool(_ENV_NAME.match(name))


def _cunescape_one(s: str, i: int) -> tuple[str, int]:
    """The escape starting at s[i] (the character after the backslash): (text, length).
    Raises WordError where cunescape_one() returns an error."""
    c = s[i] if i < len(s) else ""
    if c in _SIMPLE:
        return _SIMPLE[c], 1
    spec = {"x": (2, 16), "u": (4, 16), "U": (8, 16)}.get(c)
    if spec is not None:
        digits = s[i + 1:i + 1 + spec[0]]
        if len(digits) != spec[0] or not all(d in "0123456789abcdefABCDEF" for d in digits):
            raise WordError("bad hex escape")
        code = int(digits, 16)
        if code == 0 or (c != "x" and not _unichar_ok(code)):
            raise WordError("escape of NUL or an invalid code point")
        # \xNN is one byte: above 0x7f it is half a UTF-8 sequence, which makes the value
        # invalid UTF-8 (left to the caller to judge, here as a lone surrogate-escaped byte)
        return (chr(code) if code < 0x80 or c != "x" else bytes([code]).decode(
            "utf-8", "surrogateescape")), 1 + spec[0]
    if c in "01234567":
        digits = s[i:i + 3]
        if len(digits) != 3 or not all(d in "01234567" for d in digits):
            raise WordError("bad octal escape")
        code = int(digits, 8)
        if code == 0 or code > 0xFF:
            raise WordError("octal escape of NUL or above 255")
        return (chr(code) if code < 0x80 else bytes([code]).decode(
            "utf-8", "surrogateescape")), 3
    raise WordError(f"unknown escape \\{c}")


def _unichar_ok(code: int) -> bool:
    return code < 0xD800 or 0xE000 <= code < 0xFFFE or 0xFFFF < code <= 0x10FFFF


def extract_words(value: str) -> tuple[list[str], bool]:
    """Words of a value as extract_first_word(CUNESCAPE|UNQUOTE) yields them one by one;
    the flag says a word failed (systemd keeps the words before it and drops the rest)."""
    words: list[str] = []
    i, n = 0, len(value)
    while True:
        while i < n and value[i] in _WS:
            i += 1
        if i >= n:
            return words, False
        try:
            word, i = _one_word(value, i)
        except WordError:
            return words, True
        words.append(word)


def _one_word(s: str, i: int) -> tuple[str, int]:
    out: list[str] = []
    quote = ""
    n = len(s)
    while i < n:
        c = s[i]
        if c == "\\":
            if i + 1 >= n:
                raise WordError("trailing backslash")
            text, used = _cunescape_one(s, i + 1)
            out.append(text)
            i += 1 + used
        elif quote:
            if c == quote:
                quote = ""
            else:
                out.append(c)
            i += 1
        elif c in "'\"":
            quote = c
            i += 1
        elif c in _WS:
            return "".join(out), i
        else:
            out.append(c)
            i += 1
    if quote:
        raise WordError("unbalanced quote")
    return "".join(out), i


def _valid_value(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:  # a lone byte from \xNN: not valid UTF-8
        return False
    return True


def environment_words(value: str, expand: Callable[[str], str] | None = None
                      ) -> tuple[list[tuple[str, str]], list[str], list[str]]:
    """An ``Environment=`` value as config_parse_environ() reads it: each word unquoted and
    unescaped, then its specifiers replaced (``expand``), then kept if it is a valid
    NAME=VALUE. Returns the pairs in order, why words were ignored (an invalid assignment is
    skipped; a syntax error drops the rest of the line) and the words whose specifiers are not
    established (SpecifierError from ``expand``)."""
    words, failed = extract_words(value)
    pairs: list[tuple[str, str]] = []
    ignored: list[str] = []
    unresolved: list[str] = []
    for w in words:
        if expand is not None and "%" in w:
            try:
                w = expand(w)
            except SpecifierError as exc:
                unresolved.append(f"{w[:80]!r} uses the specifier {exc}")
                continue
        name, eq, val = w.partition("=")
        if eq and env_name_valid(name) and _valid_value(val):
            pairs.append((name, val))
        else:
            ignored.append(f"invalid environment assignment {w[:80]!r} is ignored")
    if failed:
        ignored.append("invalid syntax (unbalanced quotes or a bad escape): the rest of the "
                       "line is ignored")
    return pairs, ignored, unresolved


@dataclass
class EnvLine:
    name: str
    value: str
    line: int  # where the assignment starts
    valid: bool  # strv_env_clean() keeps only valid names and UTF-8


def parse_env_file_text(text: str) -> tuple[list[EnvLine], list[int]]:
    """EnvironmentFile= contents: assignments in file order, and the lines where a comment ends
    with a backslash (systemd before 254 continues the comment onto the next line, 254 and
    later do not: those lines' meaning depends on the version)."""
    st = _EnvState()
    for ch in text:
        st.feed(ch)
    st.finish()
    return st.out, st.version_dependent


class _EnvState:
    """parse_env_file_internal()'s states, one character at a time."""

    def __init__(self) -> None:
        self.state = "PRE_KEY"
        self.key: list[str] = []
        self.value: list[str] = []
        self.key_ws = -1  # where trailing whitespace of the key starts, -1: none
        self.value_ws = -1
        self.line = 1
        self.start = 1
        self.out: list[EnvLine] = []
        self.version_dependent: list[int] = []

    def push(self) -> None:
        key = "".join(self.key[:self.key_ws] if self.key_ws >= 0 else self.key)
        value = "".join(self.value)
        if self.state == "VALUE" and self.value_ws >= 0:
            value = "".join(self.value[:self.value_ws])
        valid = env_name_valid(key) and _valid_value(value)
        self.out.append(EnvLine(key, value, self.start, valid))
        self.key, self.value, self.key_ws, self.value_ws = [], [], -1, -1

    # long: one branch per state of systemd's environment-file state machine, in its order,
    # so the port can be read beside parse_env_file_internal() in env-file.c
    def feed(self, c: str) -> None:  # one branch per state, as in systemd
        s = self.state
        nl = c in "\n\r"
        if s == "PRE_KEY":
            if c in "#;":
                self.state = "COMMENT"
            elif c not in _WS:
                self.state, self.key, self.key_ws, self.start = "KEY", [c], -1, self.line
        elif s == "KEY":
            if nl:
                self.state, self.key = "PRE_KEY", []
            elif c == "=":
                self.state, self.value_ws = "PRE_VALUE", -1
            else:
                if c not in _WS:
                    self.key_ws = -1
                elif self.key_ws < 0:
                    self.key_ws = len(self.key)
                self.key.append(c)
        elif s == "PRE_VALUE":
            if nl:
                self.push()
                self.state = "PRE_KEY"
            elif c == "'":
                self.state = "SINGLE"
            elif c == '"':
                self.state = "DOUBLE"
            elif c == "\\":
                self.state = "VALUE_ESCAPE"
            elif c not in _WS:
                self.state = "VALUE"
                self.value.append(c)
        elif s == "VALUE":
            if nl:
                self.push()
                self.state = "PRE_KEY"
            elif c == "\\":
                self.state, self.value_ws = "VALUE_ESCAPE", -1
            else:
                if c not in _WS:
                    self.value_ws = -1
                elif self.value_ws < 0:
                    self.value_ws = len(self.value)
                self.value.append(c)
        elif s == "VALUE_ESCAPE":
            self.state = "VALUE"
            if not nl:  # an escaped newline is eaten whole
                self.value.append(c)
        elif s == "SINGLE":
            if c == "'":
                self.state = "PRE_VALUE"
            else:
                self.value.append(c)
        elif s == "DOUBLE":
            if c == '"':
                self.state = "PRE_VALUE"
            elif c == "\\":
                self.state = "DOUBLE_ESCAPE"
            else:
                self.value.append(c)
        elif s == "DOUBLE_ESCAPE":
            self.state = "DOUBLE"
            if c in '"\\`$':
                self.value.append(c)
            elif c != "\n":
                self.value += ["\\", c]
        elif s == "COMMENT":
            if c == "\\":
                self.state = "COMMENT_ESCAPE"
            elif nl:
                self.state = "PRE_KEY"
        elif s == "COMMENT_ESCAPE":
            # systemd 252: the escaped character stays in the comment, so an escaped newline
            # continues the comment onto the next line (254 ended the comment there)
            if nl:
                self.version_dependent.append(self.line + 1)
            self.state = "COMMENT"
        if c == "\n":
            self.line += 1

    def finish(self) -> None:
        if self.state in ("PRE_VALUE", "VALUE", "VALUE_ESCAPE", "SINGLE", "DOUBLE",
                          "DOUBLE_ESCAPE"):
            if self.state == "VALUE_ESCAPE":
                self.state = "VALUE"
            self.push()


# Specifiers whose value does not depend on the running host (system manager, systemd.unit(5)).
_FIXED = {"%": "%", "h": "/root", "u": "root", "U": "0", "g": "root", "G": "0", "s": "/bin/sh",
          "t": "/run", "S": "/var/lib", "C": "/var/cache", "L": "/var/log", "E": "/etc",
          "V": "/var/tmp", "T": "/tmp", "y": "", "Y": ""}


class SpecifierError(ValueError):
    """A specifier whose value agentkit does not establish (host-dependent or unknown)."""


def unit_unescape(s: str) -> str:
    """unit_name_unescape(): ``-`` is ``/``, ``\\xNN`` is that byte."""
    out = bytearray()
    i = 0
    while i < len(s):
        if s[i] == "-":
            out += b"/"
        elif s.startswith("\\x", i) and re.fullmatch(r"[0-9a-fA-F]{2}", s[i + 2:i + 4]):
            out.append(int(s[i + 2:i + 4], 16))
            i += 3
        else:
            out += s[i].encode()
        i += 1
    return out.decode("utf-8", "replace")


def _path_unescape(s: str) -> str | None:
    """unit_name_path_unescape(): "-" is "/", else the unescaped name with a leading "/",
    refused (None) when it has a leading or trailing "/" or is not a normalized path."""
    if s == "-":
        return "/"
    w = unit_unescape(s)
    if not s or w.startswith("/") or w.endswith("/"):
        return None
    if any(part in ("", ".", "..") for part in w.split("/")):
        return None
    return "/" + w


def unit_specifiers(unit_name: str) -> dict[str, str]:
    """%n %N %p %P %i %I %j %J %f and the fixed ones, for a unit name (systemd.unit(5)). One
    systemd refuses for this name (%f of ``a--b``) is left out, so using it is not
    established."""
    stem = unit_name.rpartition(".")[0]
    prefix, at, instance = stem.partition("@")
    j = prefix.rpartition("-")[2] if "-" in prefix else prefix
    spec = dict(_FIXED)
    spec.update({"n": unit_name, "N": stem, "p": prefix, "P": unit_unescape(prefix),
                 "i": instance, "I": unit_unescape(instance), "j": j, "J": unit_unescape(j)})
    f = _path_unescape(instance if at and instance else prefix)
    if f is not None:
        spec["f"] = f
    return spec


def apply_unit_specifiers(value: str, spec: dict[str, str]) -> str:
    """Replace every %X; a specifier agentkit does not establish (host-dependent such as %H,
    %m, %b, or unknown, which systemd refuses) raises SpecifierError."""
    out: list[str] = []
    i = 0
    while i < len(value):
        c = value[i]
        if c != "%":
            out.append(c)
            i += 1
            continue
        nxt = value[i + 1:i + 2]
        if not nxt:  # a stray % at the end stays as it is
            out.append("%")
            break
        if nxt not in spec:
            raise SpecifierError(f"%{nxt}")
        out.append(spec[nxt])
        i += 2
    return "".join(out)
