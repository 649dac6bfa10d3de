"""The tokens of a shell script (bash(1), DEFINITIONS and QUOTING): words kept as written,
operators, newlines; comments, line continuations and here-document bodies are consumed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_META = set(" \t\n;&|()<>")
_OPS = ("&&", "||", ";;&", ";;", ";&", "&>>", "&>", "|&", "<<<", "<<-", "<<", "<>", "<&", ">>",
        ">&", ">|", ";", "&", "|", "(", ")", "<", ">")


class ParseError(ValueError):
    def __init__(self, line: int, msg: str) -> None:
        super().__init__(f"line {line}: {msg}")
        self.line = line


@dataclass(frozen=True)
class Tok:
    kind: str  # word | op | nl
    text: str
    line: int


# ---- tokens ---------------------------------------------------------------------------------


class _Lexer:
    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0
        self.line = 1
        self.toks: list[Tok] = []
        self.heredocs: list[tuple[str, bool]] = []

    def run(self) -> list[Tok]:
        s = self.s
        while self.i < len(s):
            c = s[self.i]
            if c in " \t":
                self.i += 1
            elif s.startswith("\\\n", self.i):
                self.i += 2
                self.line += 1
            elif c == "#":
                while self.i < len(s) and s[self.i] != "\n":
                    self.i += 1
            elif c == "\n":
                self.toks.append(Tok("nl", "\n", self.line))
                self.i += 1
                self.line += 1
                self._heredoc_bodies()
            elif s.startswith("((", self.i) and self._command_start():
                self.toks.append(Tok("word", "((" + self._arith(), self.line))
            elif c in _META:
                op = next(o for o in _OPS if s.startswith(o, self.i))
                self.toks.append(Tok("op", op, self.line))
                self.i += len(op)
                if op in ("<<", "<<-"):
                    self._heredoc_start(op == "<<-")
            else:
                line = self.line
                word = self._word()
                kind = "io" if word.isdigit() and self.i < len(s) and s[self.i] in "<>" else "word"
                self.toks.append(Tok(kind, word, line))
        return self.toks

    def _command_start(self) -> bool:
        return not self.toks or self.toks[-1].kind == "nl" or self.toks[-1].text in (
            ";", "&", "&&", "||", "|", "(", "then", "do", "else", "{")

    def _arith(self) -> str:
        depth, start = 0, self.i
        while self.i < len(self.s):
            c = self.s[self.i]
            depth += (c == "(") - (c == ")")
            self.i += 1
            if depth == 0:
                return self.s[start + 2 : self.i]
            self.line += c == "\n"
        raise ParseError(self.line, "unterminated (( … ))")

    def _word(self) -> str:
        start = self.i
        s = self.s
        while self.i < len(s) and s[self.i] not in _META:
            self._unit()
        return s[start : self.i]

    def _unit(self, in_dq: bool = False) -> None:
        """Advance over one character or one quoted/expansion unit of a word."""
        s, c = self.s, self.s[self.i]
        if c == "\\":
            self.line += s.startswith("\\\n", self.i)
            self.i += 2
        elif c == "'" and not in_dq:
            self._until("'", self.i + 1)
        elif c == "$" and s.startswith("$'", self.i) and not in_dq:
            j = self.i + 2
            while j < len(s) and s[j] != "'":
                j += 2 if s[j] == "\\" else 1
            self._skip_to(j)
        elif c == '"':
            self.i += 1
            while self.i < len(s) and s[self.i] != '"':
                self._unit(in_dq=True)
            self._close('"')
        elif c == "`":
            j = self.i + 1
            while j < len(s) and s[j] != "`":
                j += 2 if s[j] == "\\" else 1
            self._skip_to(j)
        elif s.startswith("$(", self.i) or s.startswith("${", self.i):
            self._nested(s[self.i + 1], ")" if s[self.i + 1] == "(" else "}")
        else:
            self.line += c == "\n"
            self.i += 1

    def _until(self, q: str, j: int) -> None:
        k = self.s.find(q, j)
        if k < 0:
            raise ParseError(self.line, f"unterminated {q}")
        self._skip_to(k)

    def _skip_to(self, k: int) -> None:
        if k >= len(self.s):
            raise ParseError(self.line, "unterminated quote")
        self.line += self.s.count("\n", self.i, k)
        self.i = k + 1

    def _close(self, q: str) -> None:
        if self.i >= len(self.s):
            raise ParseError(self.line, f"unterminated {q}")
        self.i += 1

    def _nested(self, opening: str, closing: str) -> None:
        self.i += 2
        depth = 1
        while self.i < len(self.s):
            c = self.s[self.i]
            if c == closing:
                depth -= 1
                if depth == 0:
                    self.i += 1
                    return
                self.i += 1
            elif c == opening:
                depth += 1
                self.i += 1
            elif c == "#" and closing == ")" and self.s[self.i - 1] in " \t\n":
                while self.i < len(self.s) and self.s[self.i] != "\n":
                    self.i += 1
            else:
                self._unit(in_dq=False)
        raise ParseError(self.line, f"unterminated ${opening}")

    def _heredoc_start(self, strip: bool) -> None:
        while self.i < len(self.s) and self.s[self.i] in " \t":
            self.i += 1
        word = self._word()
        self.toks.append(Tok("word", word, self.line))
        self.heredocs.append((re.sub(r"[\"'\\]", "", word), strip))

    def _heredoc_bodies(self) -> None:
        for delim, strip in self.heredocs:
            while True:
                if self.i >= len(self.s):
                    raise ParseError(self.line, f"here-document without its {delim} line")
                end = self.s.find("\n", self.i)
                end = len(self.s) if end < 0 else end
                text = self.s[self.i : end]
                self.i = end + 1
                self.line += 1
                if (text.lstrip("\t") if strip else text) == delim:
                    break
        self.heredocs = []


def tokenize(text: str) -> list[Tok]:
    return _Lexer(text).run()


def writes(op: Tok, toks: list[Tok], i: int) -> bool:
    """Whether the redirection at ``toks[i]`` may write a file: any ``>`` form, except a
    duplication onto a descriptor (``>&2``, ``>&-``)."""
    if ">" not in op.text:
        return False
    target = toks[i + 1].text if i + 1 < len(toks) else ""
    return not (op.text == ">&" and (target.isdigit() or target == "-"))
