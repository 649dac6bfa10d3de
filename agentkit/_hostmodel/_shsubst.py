"""The one kind of command substitution a start script's reading follows: loading a
NAME=VALUE file with ``$(grep -v '^#' FILE | xargs)`` (the idiom behind
``export $(grep -v '^#' .env | xargs)``). Its output depends only on the file, which the
reading is given like a sourced file. Anything else (another program, an option or a pattern
this module does not model, a quote or backslash for xargs to interpret, an argument echo
would take as an option) raises :class:`Undecided`: the reading never guesses output.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable

from ._shell import Undecided

# text a substitution may hold: no expansion, redirection, list or subshell to interpret
_PLAIN = re.compile(r"[^$`;&<>()\n\\]*")
# a grep pattern read as a literal with optional anchors (the same in BRE and ERE)
_PATTERN = re.compile(r"(\^?)([A-Za-z0-9_#= ]*)(\$?)")
_MAX_ARGS = 128 * 1024  # bytes xargs passes to one echo on any Linux (ARG_MAX is larger)

Read = Callable[[str], str]  # a file's text, or Undecided when it cannot be read


def substitute(text: str, read: Read) -> str:
    """The output of ``$(text)``: ``grep [-v] [-E] PATTERN FILE`` (more such greps on a pipe,
    without FILE, may follow) and optionally a last ``| xargs`` (echo of the words read)."""
    why = "a command substitution ($(…) or `…`), whose output is known only when it runs"
    if not _PLAIN.fullmatch(text) or re.search(r"(^|\s)#", text):  # a comment: not followed
        raise Undecided(why)
    try:
        lex = shlex.shlex(text, posix=True, punctuation_chars="|")
        lex.whitespace_split = True
        lex.commenters = ""
        words = list(lex)
    except ValueError:
        raise Undecided(why) from None
    stages: list[list[str]] = [[]]
    for w in words:
        if w == "|":
            stages.append([])
        else:
            stages[-1].append(w)
    xargs = stages[-1] == ["xargs"] and len(stages) > 1
    if xargs:
        stages.pop()
    lines: list[str] | None = None
    for k, stage in enumerate(stages):
        lines = _grep(stage, lines if k else None, read, why)
    assert lines is not None
    return _xargs(lines, why) if xargs else "".join(f"{ln}\n" for ln in lines)


def _grep(argv: list[str], lines: list[str] | None, read: Read, why: str) -> list[str]:
    """``grep [-v] [-E] PATTERN [FILE]``: the first stage reads FILE, later ones the pipe."""
    if not argv or argv[0].rsplit("/", 1)[-1] != "grep":
        raise Undecided(why)
    args = argv[1:]
    invert = False
    while args and args[0].startswith("-") and len(args[0]) > 1:
        opts = set(args.pop(0)[1:])
        if not opts <= {"v", "E"}:
            raise Undecided(why)
        invert = invert or "v" in opts
    want = 1 if lines is not None else 2
    if len(args) != want:
        raise Undecided(why)
    m = _PATTERN.fullmatch(args[0])
    if m is None:
        raise Undecided(why)
    rx = re.compile(("^" if m.group(1) else "") + re.escape(m.group(2)) +
                    ("$" if m.group(3) else ""))
    if lines is None:
        if not args[1].startswith("/"):
            raise Undecided(why)  # relative to a working directory
        lines = read(args[1]).split("\n")
        if lines and lines[-1] == "":
            lines.pop()  # the newline that ends the last line
    return [ln for ln in lines if bool(rx.search(ln)) != invert]


def _xargs(lines: list[str], why: str) -> str:
    """``xargs`` with no command runs ``echo`` with the blank-separated words it reads;
    quotes and backslashes it would interpret, and words echo takes as options, are not
    followed."""
    text = "\n".join(lines)
    if re.search(r"[\"'\\]", text) or len(text) > _MAX_ARGS:
        raise Undecided(why)
    words = text.split()
    if words and words[0].startswith("-"):
        raise Undecided(why)
    return " ".join(words) + "\n"


def reader_of(files: dict[str, str | None], wanted: list[str]) -> Read:
    """A file's text from the files the reading was given; one not given yet is asked for
    (``wanted``), one that could not be read makes the output not established."""
    def read(path: str) -> str:
        text = files.get(path)
        if text is None:
            if path not in files and path not in wanted:
                wanted.append(path)
            raise Undecided(f"$(… {shlex.quote(path)} …), a file that could not be read")
        return text
    return read
