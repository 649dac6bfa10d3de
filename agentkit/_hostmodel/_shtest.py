"""``test``/``[`` on a file of the host (bash(1), CONDITIONAL EXPRESSIONS): the idiom
``[ -f /etc/vllm/nccl.env ] && . /etc/vllm/nccl.env`` is decided by the host's own files, as
the reader sees them (through the sandbox, on the live host or a snapshot).

Only what the reader's view proves is decided: a file it read is there (``-e``), and when it
has text it is a regular file that is not empty (``-f``, ``-s``); ``!`` negates. Everything
else stays not established: a path it could not read (missing, refused, binary: it cannot
tell which), a relative path (it depends on the working directory), ``-r``/``-w``/``-x``
(they depend on the user the service runs as), ``-d``, any other operator, and every file
test after the script has run something that may have changed files (a program other than
a shell builtin, or an output redirection).
"""

from __future__ import annotations

import re

from ._shell import State, Var, Where
from ._shexec import Reader

# commands that change no file unless redirected (redirections are marked by the parser)
KEEPS_FILES = {"echo", "printf", "true", ":", "false", "test", "[", "cd", "pushd", "popd",
               "ulimit", "umask", "trap", "wait", "hash", "type", "pwd", "sleep", "alias",
               "unalias", "shopt", "times", "caller", "history", "jobs", "disown", "exit",
               "return", "set", "shift", "command", "builtin", "cat", "kill", "logger"}
# not -a (-e's old spelling): in `[ ! -a F ]` bash reads it as the binary "and"
_DECIDED = {"-e", "-f", "-s"}


_SUBST = re.compile(r"\$\((?!\()|`|[<>]\(")  # not $(( … )), arithmetic
_BODY = re.compile(r"\$\(([^()`]*)\)|`([^`]*)`")


def substitution_writes(text: str) -> int | None:
    """The first line of ``text`` with a command substitution that may write files (its
    command is not one of :data:`KEEPS_FILES`, or it redirects output, or it is a process
    substitution or nested), else None. The reader does not place a substitution among the
    commands that run before a file test, so any such one in a program counts from its start."""
    bodies = {m.start(): (m.end(), m.group(1) if m.group(1) is not None else m.group(2))
              for m in _BODY.finditer(text)}
    done = 0
    for m in _SUBST.finditer(text):
        if m.start() < done:
            continue  # inside a substitution already read
        end, body = bodies.get(m.start(), (0, None))
        words = (body or "").split()
        if body is None or ">" in body or not words or words[0] not in KEEPS_FILES:
            return text.count("\n", 0, m.start()) + 1
        done = end
    return None


def may_change_files(reader: Reader, name: str, at: Where) -> None:
    """``name`` runs: from here on the files the reader saw may differ from the script's."""
    if name not in KEEPS_FILES and reader.touched is None:
        reader.touched = at


def file_test(reader: Reader, st: State, argv: list[str], prefix: dict[str, Var], at: Where
              ) -> int | None:
    """``test`` or ``[`` with its expanded words: 0 or 1 where the files decide, else None."""
    args = argv[1:]
    if argv[0] == "[":
        if args[-1:] != ["]"]:
            return None  # bash: "missing ]", status 2; not modelled
        args = args[:-1]
    negate = len(args) == 3 and args[0] == "!"  # test(1): ! negates the two-word test
    if negate:
        args = args[1:]
    if len(args) != 2 or args[0] not in _DECIDED:
        return None
    found = _exists(reader, args[0], args[1])
    if found is None:
        return None
    return int(found == negate)


def _exists(reader: Reader, op: str, path: str) -> bool | None:
    """What the reader's files prove about ``op path``; None where they prove nothing."""
    if not path.startswith("/") or "/../" in path + "/" or reader.touched is not None:
        return None
    if path not in reader.files:
        if path not in reader.out.wanted:
            reader.out.wanted.append(path)  # read it, then read the script again
        return None
    text = reader.files[path]
    if text is None:
        return None
    if op == "-e":
        return True
    return True if text else None  # an empty text: maybe an empty file, maybe a device
