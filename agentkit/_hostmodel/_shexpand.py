"""Word expansion over the shell's state (bash(1), EXPANSION): parameters, quoting, field
splitting. What the state cannot know (a command substitution, a value set under a
condition) raises :class:`Undecided`: the reader never guesses it.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ._shell import NoUnset, State, Undecided

IFS = " \t\n"

_PARAM = re.compile(r"\$(?:(?P<name>[A-Za-z_][A-Za-z0-9_]*)|(?P<sp>[0-9@*#?$!\-]))")
_BRACE = re.compile(r"^(?P<len>#)?(?P<name>[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#])"
                    r"(?:(?P<op>:?[-=+?])(?P<word>.*))?$", re.S)
_GLOB = re.compile(r"[*?]|\[.*\]", re.S)

# a piece of a word after expansion: (text, quoted, from an expansion)
Piece = tuple[str, bool, bool]
BREAK: Piece = ("", True, True)  # "$@": a boundary between fields


class Expander:
    def __init__(self, state: State, assign: Callable[[str, str | Undecided], None],
                 subst: Callable[[str], str] | None = None) -> None:
        self.st = state
        self.assign = assign  # ${NAME:=word} assigns, as an assignment statement would
        self.subst = subst  # $(…) → its output (raises Undecided where it cannot tell)

    def word(self, text: str) -> list[str]:
        """A command word → its fields (splitting and pathname expansion applied)."""
        if text in ('"$@"', '"${@}"'):
            return self._args()
        pieces = self.pieces(text, dq=False)
        return self._fields(pieces)

    def value(self, text: str) -> str:
        """An assignment's value: expanded, never split or globbed."""
        if text.startswith("~"):
            raise Undecided("a ~ (home directory) in a value")
        return "".join(p[0] for p in self.pieces(text, dq=False, splitting=False))

    def _args(self) -> list[str]:
        if self.st.args is None:
            raise Undecided("the script's arguments are not established")
        return list(self.st.args)

    def inner(self, word: str, dq: bool) -> list[Piece]:
        """The word of ``${NAME:-word}``: inside double quotes its own double quotes nest
        and a single quote is literal (bash); its pieces are quoted like the outer word."""
        if not dq:
            return self.pieces(word, dq=False)
        return [(t, True, e) for t, _q, e in self.pieces(word, dq=False, sq=False)]

    def pieces(self, text: str, dq: bool, splitting: bool = True, sq: bool = True
               ) -> list[Piece]:
        out: list[Piece] = []
        i = 0
        while i < len(text):
            c = text[i]
            if c == "\\":
                nxt = text[i + 1 : i + 2]
                if nxt == "\n":
                    pass
                elif (not dq and sq) or nxt in '$`"\\' or (not sq and nxt == "}"):
                    out.append((nxt, True, False))
                else:
                    out.append(("\\" + nxt, True, False))
                i += 2
            elif c == "'" and not dq and sq:
                j = text.index("'", i + 1)
                out.append((text[i + 1 : j], True, False))
                i = j + 1
            elif text.startswith("$'", i) and not dq and sq:
                j, lit = _ansi_c(text, i + 2)
                out.append((lit, True, False))
                i = j
            elif c == '"' and not dq:
                j = _dq_end(text, i + 1)
                inner = self.pieces(text[i + 1 : j], dq=True)
                out += inner if inner else [("", True, False)]
                i = j + 1
            elif self.subst is not None and text.startswith("$(", i) and \
                    not text.startswith("$((", i):
                j = _paren_end(text, i + 2)
                out.append((self.subst(text[i + 2 : j]).rstrip("\n"), dq, True))
                i = j + 1
            elif c == "`" or text.startswith("$(", i):
                raise Undecided("a command substitution ($(…) or `…`), whose output is known "
                                "only when it runs")
            elif c == "$":
                i = self._param(text, i, dq, out, splitting)
            elif c == "~" and i == 0 and not dq:
                raise Undecided("a ~ (home directory) in a word")
            else:
                out.append((c, dq, False))
                i += 1
        return out

    def _param(self, text: str, i: int, dq: bool, out: list[Piece], splitting: bool) -> int:
        if text.startswith("${", i):
            j = _brace_end(text, i + 2)
            body, end = text[i + 2 : j], j + 1
        else:
            m = _PARAM.match(text, i)
            if m is None:
                out.append(("$", dq, False))
                return i + 1
            body, end = m.group("name") or m.group("sp"), m.end()
        b = _BRACE.match(body)
        if b is None or (b.group("len") and b.group("op")):
            raise Undecided(f"the expansion ${{{body}}}, which this reading does not evaluate")
        name, op, word = b.group("name"), b.group("op"), b.group("word") or ""
        if name in ("@", "*"):
            args = self._args()
            if dq and name == "@" and op is None and not b.group("len"):
                for k, a in enumerate(args):
                    if k:
                        out.append(BREAK)
                    out.append((a, True, True))
                return end
            if b.group("len") or op is not None:
                raise Undecided(f"the expansion ${{{body}}}, which this reading does not "
                                "evaluate")
            out.append((" ".join(args), dq, True))
            return end
        var = self.st.get(name) if not name.isdigit() and name not in "#0" else None
        if var is not None and not var.known and var.choices is not None and not b.group("len") \
                and (op is None or op[-1] in "-+"):  # := and :? go on below (blank, filled)
            got = {self._choice(c, name, op, word, dq) for c in var.choices}
            if len(got) == 1:  # every run gives the same text
                out.append((got.pop(), dq, True))
                return end
        value = self._lookup(name, op)
        if b.group("len"):
            out.append((str(len(value or "")), dq, True))
            return end
        if op is not None:
            colon = op.startswith(":")
            use_word = (value is None or (colon and value == "")) != (op[-1] == "+")
            if op[-1] in "-+":
                if use_word:
                    out += self.inner(word, dq)
                if use_word or op[-1] == "+":
                    return end
            elif op[-1] == "=" and use_word:
                try:
                    value = "".join(p[0] for p in self.inner(word, dq))
                except Undecided as e:  # bash still assigns: a value not established
                    self.assign(name, e)
                    raise
                self.assign(name, value)
            elif op[-1] == "?" and use_word:
                raise Undecided(f"${{{body}}}: the script stops there when {name} is unset")
        elif value is None and self.st.nounset and name not in ("#", "0"):
            raise NoUnset(name)
        out.append((value or "", dq, True))
        return end

    def _choice(self, value: str | None, name: str, op: str | None, word: str, dq: bool
                ) -> str:
        """``${NAME<op>word}`` for one possible value of NAME (no side effects allowed)."""
        if op is None:
            if value is None and self.st.nounset:
                raise Undecided(f"{name} may be unset", may_exit=True)
            return value or ""
        use_word = (value is None or (op[0] == ":" and value == "")) != (op[-1] == "+")
        if op[-1] == "-":
            return "".join(p[0] for p in self.inner(word, dq)) if use_word else value or ""
        if op[-1] == "+":
            return "".join(p[0] for p in self.inner(word, dq)) if use_word else ""
        raise Undecided(f"${{{name}{op}…}} on a value that differs between runs")

    def _lookup(self, name: str, op: str | None) -> str | None:
        if name == "#":
            return str(len(self._args()))
        if name == "0":
            return self.st.script
        if name.isdigit():
            args = self._args()
            k = int(name)
            return args[k - 1] if k <= len(args) else None
        var = self.st.get(name)
        if var is None:
            return None
        if not var.known:
            if var.filled and op is not None and op[-1] == "+":
                return "set"  # only whether it is set and not empty matters
            if var.blank and (op is None or op.startswith(":")):
                if self.st.nounset and op is None:
                    raise Undecided(f"{name} may be unset ({var.why}, {var.at})",
                                    may_exit=True)
                return ""
            raise Undecided(f"{name} is not established ({var.why}, {var.at})",
                            may_exit=self.st.nounset and not var.sure_set)
        return var.value

    def _fields(self, pieces: list[Piece]) -> list[str]:
        fields: list[str] = []
        cur, has, glob = "", False, False
        ifs_var = self.st.get("IFS")
        for piece in pieces:
            if piece is BREAK:
                fields.append(cur)
                cur, has, glob = "", False, False
                continue
            text, quoted, expanded = piece
            if quoted or not expanded:
                cur += text
                has = True
                glob = glob or (not quoted and bool(_GLOB.search(text)))
                continue
            if ifs_var is not None and (not ifs_var.known or ifs_var.value not in (IFS, None)):
                raise Undecided("IFS is changed, so the words split differently")
            parts = re.split(r"[ \t\n]+", text)
            for k, part in enumerate(parts):
                if k:
                    if has or cur:
                        fields.append(cur)
                    cur, has, glob = "", False, False
                if part:
                    cur += part
                    has = True
                    glob = glob or bool(_GLOB.search(part))
        if has or cur:
            fields.append(cur)
        if glob and not self.st.noglob and any(_GLOB.search(f) for f in fields):
            raise Undecided("a pathname pattern (*, ?, [), which expands to the files that "
                            "exist when it runs")
        return fields


def _dq_end(text: str, i: int) -> int:
    while i < len(text):
        c = text[i]
        if c == "\\":
            i += 2
        elif c == '"':
            return i
        elif text.startswith("$(", i) or text.startswith("${", i):
            i = (_brace_end(text, i + 2) if text[i + 1] == "{" else _paren_end(text, i + 2)) + 1
        elif c == "`":
            i = text.index("`", i + 1) + 1
        else:
            i += 1
    raise Undecided("an unterminated quote")


def _brace_end(text: str, i: int) -> int:
    depth = 1
    while i < len(text):
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == "'" :
            i = text.index("'", i + 1) + 1
            continue
        if c == '"':
            i = _dq_end(text, i + 1) + 1
            continue
        depth += (c == "{") - (c == "}")
        if depth == 0:
            return i
        i += 1
    raise Undecided("an unterminated ${")


def _paren_end(text: str, i: int) -> int:
    depth = 1
    while i < len(text):
        depth += (text[i] == "(") - (text[i] == ")")
        if depth == 0:
            return i
        i += 1
    raise Undecided("an unterminated $(")


_ESC = {"n": "\n", "t": "\t", "\\": "\\", "'": "'", '"': '"', "a": "\a", "b": "\b",
        "e": "\x1b", "E": "\x1b", "f": "\f", "r": "\r", "v": "\v", "?": "?"}


def _ansi_c(text: str, i: int) -> tuple[int, str]:
    out = ""
    while i < len(text) and text[i] != "'":
        if text[i] == "\\":
            esc = _ESC.get(text[i + 1 : i + 2])
            if esc is None:
                raise Undecided("an escape in $'…' this reading does not decode")
            out += esc
            i += 2
        else:
            out += text[i]
            i += 1
    return i + 1, out
