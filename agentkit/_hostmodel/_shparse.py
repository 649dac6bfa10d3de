"""A parser for the shell that start scripts are written in: bash's grammar (bash(1), SHELL
GRAMMAR), words kept as written (quotes and ``$`` intact) for :mod:`._shell` to expand.

Covered: simple commands with assignments and redirections, pipelines, ``&&``/``||``, ``;``,
``&``, newlines, ``if``/``elif``/``else``, ``for``/``select``, ``while``/``until``, ``case``,
``{ …; }``, ``( … )``, function definitions (``f() …`` and ``function f …``), ``[[ … ]]``,
``(( … ))``, comments, line continuations, here-documents, and quoting with ``'…'``,
``"…"``, ``$'…'``, ``\\``, ``$( … )``, ``${ … }`` and backquotes nested in words. Anything else
raises :class:`ParseError` with its line, so the reader can say where it stopped.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from ._shlex import ParseError, Tok, tokenize, writes

_REDIRS = {"&>>", "&>", "<<<", "<<-", "<<", "<>", "<&", ">>", ">&", ">|", "<", ">"}
ASSIGN = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(\+?=)(.*)$", re.S)
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass
class Simple:
    line: int
    assigns: list[Tok]
    words: list[Tok]
    array: bool = False  # NAME=( … ): an array, never exported
    writes: bool = False  # has an output redirection: it may create or change a file


@dataclass
class Pipeline:
    line: int
    cmds: list[Node]
    negate: bool = False


@dataclass
class AndOr:
    line: int
    parts: list[Node]
    ops: list[str]


@dataclass
class Seq:
    line: int
    items: list[Node] = field(default_factory=list)


@dataclass
class Background:
    line: int
    node: Node


@dataclass
class If:
    line: int
    arms: list[tuple[Seq, Seq]]
    orelse: Seq | None


@dataclass
class Loop:
    line: int
    kind: str  # for | select | while | until
    var: str = ""
    words: list[Tok] | None = None  # for/select: the list (None: "$@")
    cond: Seq | None = None
    body: Seq = field(default_factory=lambda: Seq(0))


@dataclass
class Case:
    line: int
    word: Tok
    arms: list[Seq]
    catch_all: bool = False  # an unquoted * pattern: some arm always runs


@dataclass
class Group:
    line: int
    body: Seq
    subshell: bool


@dataclass
class FuncDef:
    line: int
    name: str
    body: Node


@dataclass
class Special:
    """``[[ … ]]`` or ``(( … ))``: a test or arithmetic, kept as its text."""

    line: int
    kind: str
    text: str


Node = Simple | Pipeline | AndOr | Seq | Background | If | Loop | Case | Group | FuncDef | Special


# ---- grammar --------------------------------------------------------------------------------

_ENDS = {"then", "do", "done", "fi", "else", "elif", "esac", "}", "in"}


class _Parser:
    def __init__(self, toks: list[Tok]) -> None:
        self.t = toks
        self.i = 0

    def peek(self) -> Tok | None:
        return self.t[self.i] if self.i < len(self.t) else None

    def line(self) -> int:
        tok = self.peek()
        return tok.line if tok else (self.t[-1].line if self.t else 1)

    def is_word(self, *texts: str) -> bool:
        tok = self.peek()
        return tok is not None and tok.kind == "word" and tok.text in texts

    def is_op(self, *texts: str) -> bool:
        tok = self.peek()
        return tok is not None and tok.kind == "op" and tok.text in texts

    def expect_word(self, text: str) -> None:
        if not self.is_word(text):
            raise ParseError(self.line(), f"expected {text!r}")
        self.i += 1

    def newlines(self) -> None:
        while (tok := self.peek()) is not None and tok.kind == "nl":
            self.i += 1

    def program(self) -> list[Seq]:
        """The top-level commands, one Seq per line: bash reads and runs a script one
        complete line at a time, and an error (a readonly assignment) skips the rest of it."""
        out: list[Seq] = []
        while True:
            self.newlines()
            if self.peek() is None:
                return out
            seq = Seq(self.line())
            self._items(seq, stop_at_newline=True)
            if (tok := self.peek()) is not None and tok.kind != "nl":
                raise ParseError(tok.line, f"unexpected {tok.text!r}")
            out.append(seq)

    def seq(self) -> Seq:
        seq = Seq(self.line())
        self._items(seq, stop_at_newline=False)
        return seq

    def _items(self, seq: Seq, stop_at_newline: bool) -> None:
        while True:
            if not stop_at_newline:
                self.newlines()
            tok = self.peek()
            if tok is None or tok.kind == "nl" or self.is_op(")", ";;", ";&", ";;&") or (
                    tok.kind == "word" and tok.text in _ENDS):
                return
            node = self.and_or()
            if self.is_op("&"):
                node = Background(node.line, node)
                self.i += 1
            elif self.is_op(";"):
                self.i += 1
            seq.items.append(node)

    def and_or(self) -> Node:
        first = self.pipeline()
        parts, ops = [first], []
        while self.is_op("&&", "||"):
            ops.append(self.t[self.i].text)
            self.i += 1
            self.newlines()
            parts.append(self.pipeline())
        return first if not ops else AndOr(first.line, parts, ops)

    def pipeline(self) -> Node:
        line = self.line()
        negate = self.is_word("!")
        if negate:
            self.i += 1
        cmds = [self.command()]
        while self.is_op("|", "|&"):
            self.i += 1
            self.newlines()
            cmds.append(self.command())
        return cmds[0] if len(cmds) == 1 and not negate else Pipeline(line, cmds, negate)

    def command(self) -> Node:
        tok = self.peek()
        if tok is None:
            raise ParseError(self.line(), "a command was expected")
        node: Node
        if tok.kind == "op" and tok.text == "(":
            self.i += 1
            node = Group(tok.line, self.seq(), subshell=True)
            self._close_op(")")
        elif tok.kind == "word" and tok.text in _COMPOUND:
            self.i += 1
            node = _COMPOUND[tok.text](self, tok.line)
        elif tok.kind == "word" and tok.text.startswith("(("):
            self.i += 1
            node = Special(tok.line, "((", tok.text[2:-2])
        elif tok.kind == "word" and tok.text == "[[":
            node = self._test(tok.line)
        elif (tok.kind == "word" and _NAME.fullmatch(tok.text)
              and self.i + 2 < len(self.t) and self.t[self.i + 1].text == "("
              and self.t[self.i + 2].text == ")"):
            self.i += 3
            self.newlines()
            node = FuncDef(tok.line, tok.text, self.command())
        else:
            return self.simple()
        if self._redirections():  # `{ …; } > FILE`: the file is opened before the body runs
            return Seq(tok.line, [Simple(tok.line, [], [], writes=True), node])
        return node

    def _close_op(self, op: str) -> None:
        if not self.is_op(op):
            raise ParseError(self.line(), f"expected {op!r}")
        self.i += 1

    def _redirections(self) -> bool:
        """Skip the redirections here; whether one of them may write a file."""
        out = False
        while (tok := self.peek()) is not None and (tok.kind == "io" or (
                tok.kind == "op" and tok.text in _REDIRS)):
            out = out or (tok.kind == "op" and writes(tok, self.t, self.i))
            self.i += 1 if tok.kind == "io" else 2
        return out

    def _test(self, line: int) -> Special:
        parts = []
        self.i += 1
        while not self.is_word("]]"):
            tok = self.peek()
            if tok is None or tok.kind == "nl":
                raise ParseError(line, "unterminated [[")
            parts.append(tok.text)
            self.i += 1
        self.i += 1
        return Special(line, "[[", " ".join(parts))

    def simple(self) -> Simple:
        node = Simple(self.line(), [], [])
        while (tok := self.peek()) is not None:
            if tok.kind == "io":
                self.i += 1
            elif tok.kind == "op" and tok.text in _REDIRS:
                node.writes = node.writes or writes(tok, self.t, self.i)
                self.i += 2
            elif tok.kind != "word":
                break
            elif not node.words and ASSIGN.match(tok.text):
                node.assigns.append(tok)
                self.i += 1
                if tok.text.endswith("=") and self.is_op("("):
                    node.array = True
                    self._array()
            else:
                node.words.append(tok)
                self.i += 1
        if not node.assigns and not node.words:
            raise ParseError(node.line, f"unexpected {tok.text if tok else 'end'!r}")
        return node

    def _array(self) -> None:
        self.i += 1
        while not self.is_op(")"):
            if self.peek() is None:
                raise ParseError(self.line(), "unterminated array")
            self.i += 1
        self.i += 1


def _if(p: _Parser, line: int) -> If:
    arms = []
    orelse = None
    while True:
        cond = p.seq()
        p.expect_word("then")
        arms.append((cond, p.seq()))
        if p.is_word("elif"):
            p.i += 1
            continue
        if p.is_word("else"):
            p.i += 1
            orelse = p.seq()
        p.expect_word("fi")
        return If(line, arms, orelse)


def _for(p: _Parser, line: int, kind: str = "for") -> Loop:
    tok = p.peek()
    if tok is None or tok.kind != "word" or not _NAME.fullmatch(tok.text):
        raise ParseError(line, f"{kind} without a name")
    p.i += 1
    words: list[Tok] | None = None
    p.newlines()
    if p.is_word("in"):
        p.i += 1
        words = []
        while (w := p.peek()) is not None and w.kind == "word":
            words.append(w)
            p.i += 1
    if p.is_op(";"):
        p.i += 1
    p.newlines()
    body = _do(p)
    return Loop(line, kind, tok.text, words, None, body)


def _do(p: _Parser) -> Seq:
    if p.is_word("{"):
        p.i += 1
        body = p.seq()
        p.expect_word("}")
        return body
    p.expect_word("do")
    body = p.seq()
    p.expect_word("done")
    return body


def _while(kind: str) -> Callable[[_Parser, int], Loop]:
    def parse(p: _Parser, line: int) -> Loop:
        cond = p.seq()
        return Loop(line, kind, cond=cond, body=_do(p))
    return parse


def _case(p: _Parser, line: int) -> Case:
    word = p.peek()
    if word is None or word.kind != "word":
        raise ParseError(line, "case without a word")
    p.i += 1
    p.newlines()
    p.expect_word("in")
    arms: list[Seq] = []
    any_arm = False
    while True:
        p.newlines()
        if p.is_word("esac"):
            p.i += 1
            return Case(line, word, arms, any_arm)
        if p.is_op("("):
            p.i += 1
        while not p.is_op(")"):  # the patterns
            if p.peek() is None:
                raise ParseError(line, "unterminated case")
            any_arm = any_arm or p.is_word("*")
            p.i += 1
        p.i += 1
        arms.append(p.seq())
        if p.is_op(";;", ";&", ";;&"):
            p.i += 1
        elif not p.is_word("esac"):
            raise ParseError(p.line(), "expected ;; in case")


def _group(p: _Parser, line: int) -> Group:
    body = p.seq()
    p.expect_word("}")
    return Group(line, body, subshell=False)


def _function(p: _Parser, line: int) -> FuncDef:
    tok = p.peek()
    if tok is None or tok.kind != "word":
        raise ParseError(line, "function without a name")
    p.i += 1
    if p.is_op("(") and p.i + 1 < len(p.t) and p.t[p.i + 1].text == ")":
        p.i += 2
    p.newlines()
    return FuncDef(line, tok.text, p.command())


_COMPOUND: dict[str, Callable[[_Parser, int], Node]] = {
    "if": _if, "for": _for, "select": lambda p, n: _for(p, n, "select"),
    "while": _while("while"), "until": _while("until"), "case": _case,
    "{": _group, "function": _function}


def parse(text: str) -> list[Seq]:
    """The script as its top-level lines of commands; ParseError names the line it cannot
    read."""
    return _Parser(tokenize(text)).program()
