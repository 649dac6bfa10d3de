"""Simple commands of a start script as bash runs them (bash(1), SHELL BUILTIN COMMANDS and
COMMAND EXECUTION): assignments, the declaration builtins (``export``, ``declare``,
``typeset``, ``local``, ``readonly``), ``unset``, ``set``, ``shift``, ``source``/``.``,
``eval``, ``exec``, ``read`` and friends, function calls, and external commands: the engine,
``env``, child shells and other scripts.
"""

from __future__ import annotations

import re
from dataclasses import replace
from functools import partial
from typing import cast

from ._shell import Maybe, NoUnset, State, Undecided, Var, Where
from ._shexec import (
    Abort,
    Exit,
    Launch,
    Launched,
    Reader,
    Return,
    _env_program,
    _shell_of,
    external,
    removals,
)
from ._shexpand import Expander
from ._shparse import ASSIGN, Node, Simple
from ._shsubst import reader_of, substitute
from ._shtest import file_test, may_change_files
from ._shvars import NAME, assign, declare, has_literal, set_options, unset

_DECLARE = {"export", "declare", "typeset", "local", "readonly"}
_NO_EFFECT = {"echo", "printf", "true", ":", "false", "cd", "pushd", "popd",
              "ulimit", "umask", "trap", "wait", "hash", "type", "pwd", "kill", "sleep",
              "alias", "unalias", "shopt", "times", "caller", "history", "jobs", "disown",
              "logger", "mkdir", "chmod", "chown", "rm", "cp", "mv", "touch", "ln", "cat",
              "exit", "return", "set", "shift", "command", "builtin"}
_MARK = "\0?"  # a word whose value is not established, in a command probed for the engine
_READERS = {"read", "mapfile", "readarray", "getopts"}
_WRAPPERS = {"nohup", "nice", "ionice", "numactl", "taskset", "stdbuf", "setsid", "chrt",
             "time", "timeout"}


def run_simple(reader: Reader, st: State, node: Simple) -> int | None:
    at = Where(reader.path, node.line, " ".join(t.text for t in [*node.assigns, *node.words]))
    if node.writes and reader.touched is None:
        reader.touched = at
    ex = Expander(st, lambda n, v: _default(st, n, v, at),
                  lambda t: substitute(t, reader_of(reader.files, reader.out.wanted)))
    try:
        if not node.words:
            return _assignments(reader, st, node, ex, at)
        return _command(reader, st, node, ex, at)
    except NoUnset:
        raise Exit() from None


def _default(st: State, name: str, value: str | Undecided, at: Where) -> None:
    if not assign(st, name, value, at):
        raise Abort()


def _assignments(reader: Reader, st: State, node: Simple, ex: Expander, at: Where) -> int | None:
    status: int | None = 0
    for tok in node.assigns:
        m = ASSIGN.match(tok.text)
        assert m is not None
        name = m.group(1)
        if node.array:
            st.unknown(name, at, "an array")
            continue
        value: str | Undecided
        try:
            value = ex.value(m.group(3))
        except Undecided as e:
            value, status = e, None
            e.filled = has_literal(m.group(3))
        if not assign(st, name, value, at, append=m.group(2) == "+="):
            raise Abort()
    return status


def _command(reader: Reader, st: State, node: Simple, ex: Expander, at: Where) -> int | None:
    first = node.words[0].text
    if first in _DECLARE and not node.assigns:
        return declare(reader, st, first, [t.text for t in node.words[1:]], ex, at)
    try:
        argv = [f for t in node.words for f in ex.word(t.text)]
    except Undecided as e:
        return _undecided_words(reader, st, node, ex, at, e)
    prefix = _prefix(st, node, ex, at)
    return dispatch(reader, st, argv, prefix, at)


def _prefix(st: State, node: Simple, ex: Expander, at: Where) -> dict[str, Var]:
    """``K=V cmd``: K is in cmd's environment only (for builtins and functions too, in bash's
    default mode: it does not stay)."""
    out: dict[str, Var] = {}
    for tok in node.assigns:
        m = ASSIGN.match(tok.text)
        assert m is not None
        old = st.get(m.group(1))
        if old is not None and old.readonly and old.known:
            if st.errexit:  # an assignment error: under set -e bash exits, || or not
                raise Exit()
            continue  # bash says "readonly variable" and runs the command without it
        try:
            out[m.group(1)] = Var(ex.value(m.group(3)), exported=True, at=at, temp=True)
        except Undecided as e:
            out[m.group(1)] = Var(None, exported=True, known=False, at=at, why=e.why)
    return out


def _undecided_words(reader: Reader, st: State, node: Simple, ex: Expander, at: Where,
                     e: Undecided) -> int | None:
    """A command with a word whose value is not established: harmless for most programs;
    for the engine its command line is not established; for code that changes the shell
    (source, eval, a function, read, set) everything after it is not established."""
    name = node.words[0].text
    if re.search(r"[$`'\"\\]", name):
        reader.wild(st, at, f"a command whose name is computed ({e.why})")
        return None
    if name in ("source", ".", "eval", "set", "shift", "unset", "command", "builtin") or \
            name in st.funcs or name in _READERS:
        reader.wild(st, at, f"{name} with {e.why}")
        return None
    probe: list[str] = []
    for t in node.words:
        try:
            probe += ex.word(t.text)
        except Undecided as err:
            m = ASSIGN.match(t.text)
            probe.append(f"{m.group(1)}={_MARK}{err.why}" if m else _MARK + err.why)
    rest = probe[1:] if probe[0] == "exec" else probe
    before = {**st.exported(), **_prefix(st, node, ex, at)}
    rest, env, _why = _env_program(rest, before, at)
    for k, v in env.items():
        if v.value and v.value.startswith(_MARK):
            env[k] = Var(None, exported=True, known=False, at=at, why=v.value[len(_MARK):])
    if rest and reader.is_engine(rest):
        unknown = next((w[len(_MARK):] for w in rest if w.startswith(_MARK)), None)
        why = f"its command line has {unknown}" if unknown else ""
        if unknown and e.may_exit:
            why += "; under set -u the script stops there if it is unset"
        raise Launched(Launch(None if unknown else rest, env, at, why=why, probe=rest,
                              env_known=not (unknown and e.may_exit), wild=st.wild,
                              wild_why=st.wild_why, removed=removals(st, before, env, at)))
    may_change_files(reader, name, at)  # its name is literal: `rm -f "$X"` may write
    if probe[0] == "exec" or _shell_of(rest):
        reader.out.problems.append(f"{at}: runs a command with {e.why}")
    if probe[0] == "exec":
        raise Exit()
    return None


def dispatch(reader: Reader, st: State, argv: list[str], prefix: dict[str, Var], at: Where,
             ) -> int | None:
    if not argv:
        for k, v in prefix.items():  # only assignments left (the words expanded to nothing)
            assign(st, k, v.value if v.known and v.value is not None else Undecided(v.why), at)
        return 0
    name = argv[0]
    if name in st.funcs and not prefix.get("__builtin__"):
        return _call(reader, st, name, argv[1:], prefix, at)
    if name in ("command", "builtin") and len(argv) > 1 and not argv[1].startswith("-"):
        return dispatch(reader, st, argv[1:], {**prefix, "__builtin__": Var("1")}, at)
    prefix.pop("__builtin__", None)
    handler = _BUILTINS.get(name)
    if handler is not None:
        return handler(reader, st, argv, prefix, at)
    if name in _READERS or (name == "printf" and "-v" in argv):
        return _readers(reader, st, argv, at)
    if name == "shopt" and "-s" in argv and "expand_aliases" in argv:
        reader.wild(st, at, "shopt -s expand_aliases: aliases are not followed")
        return 0
    if name in ("true", ":"):
        return 0
    if name == "false":
        return 1
    if name in _NO_EFFECT:
        may_change_files(reader, name, at)  # rm, cp, touch…: file tests are no longer decided
        return None
    return external(reader, st, argv, {**st.exported(), **prefix}, at, exec_=False)


def _call(reader: Reader, st: State, name: str, args: list[str], prefix: dict[str, Var],
          at: Where) -> int | None:
    body = st.funcs[name]
    if isinstance(body, Maybe):  # defined under a condition: each definition, or none
        alts = [partial(_call_body, reader, body=b, name=name, args=args, prefix=prefix, at=at)
                for b in body.bodies]
        got = reader.branches(st, alts, at, f"{name}, a function defined under a condition "
                              f"({at})")
        return got[0] if len(set(got)) == 1 else None
    return _call_body(reader, st, body, name, args, prefix, at)


def _call_body(reader: Reader, st: State, body: object | None, name: str, args: list[str],
               prefix: dict[str, Var], at: Where) -> int | None:
    if body is None and isinstance(st.funcs.get(name), Maybe):
        if st.errexit:  # "command not found" ends a set -e script
            raise Exit()
        return 127  # not defined in this outcome: "command not found"
    if body is None:
        reader.wild(st, at, f"the function {name}, whose definition is not established")
        return None
    saved = st.args
    st.args = list(args)
    st.scopes += [dict(prefix), {}]
    try:
        return reader.node(st, cast(Node, body))
    except Return:
        return None
    finally:
        temp = st.scopes[-2]
        del st.scopes[-2:]
        for k, v in temp.items():  # NAME=V f, and f exports NAME: bash keeps it after f
            if v.propagate and v.maybe_propagate:
                st.put(k, Var(None, known=False, xknown=False, at=at,
                              why=f"{name} exports it (given as {k}=…) only in some runs"))
            elif v.propagate:
                st.put(k, replace(v, propagate=False))
        st.args = saved


# ---- other builtins -------------------------------------------------------------------------


def _shift(reader: Reader, st: State, argv: list[str], prefix: dict[str, Var], at: Where
           ) -> int | None:
    n = int(argv[1]) if len(argv) > 1 and argv[1].isdigit() else 1
    if st.args is None:
        return None
    if n > len(st.args):
        return 1
    st.args = st.args[n:]
    return 0


def _source(reader: Reader, st: State, argv: list[str], prefix: dict[str, Var], at: Where
            ) -> int | None:
    if len(argv) < 2:
        return 1
    path = argv[1]
    if "/" not in path:
        reader.wild(st, at, f"{argv[0]} {path}, which bash looks for in PATH and the working "
                    "directory")
        return None
    text = reader.files.get(path)
    if text is None:
        if path not in reader.files and path not in reader.out.wanted:
            reader.out.wanted.append(path)
        reader.wild(st, at, f"{argv[0]} {path}, which could not be read")
        return None
    reader.out.read.append(path)
    saved = st.args
    if len(argv) > 2:
        st.args = argv[2:]
    if prefix:
        st.scopes.append(dict(prefix))
    try:
        return reader.program(st, text, path)
    except Return:
        return None
    finally:
        if prefix:
            st.scopes.pop()
        if len(argv) > 2:
            st.args = saved


def _eval(reader: Reader, st: State, argv: list[str], prefix: dict[str, Var], at: Where
          ) -> int | None:
    text = " ".join(argv[1:])
    if prefix:
        st.scopes.append(dict(prefix))
    try:
        return reader.program(st, text, at.path)
    finally:
        if prefix:
            st.scopes.pop()


def _exec(reader: Reader, st: State, argv: list[str], prefix: dict[str, Var], at: Where
          ) -> int | None:
    args = argv[1:]
    clear = False
    while args and args[0].startswith("-") and args[0] != "--":
        if "a" in args[0]:
            args = args[1:]  # -a NAME: the name the program sees as argv[0]
        clear = clear or "c" in args[0]
        args = args[1:]
    if args[:1] == ["--"]:
        args = args[1:]
    if not args:
        return 0  # redirections only
    env = dict(prefix) if clear else {**st.exported(), **prefix}
    external(reader, st, args, env, at, exec_=True)
    raise Exit()


def _control(reader: Reader, st: State, argv: list[str], prefix: dict[str, Var], at: Where
             ) -> int | None:
    raise Return() if argv[0] == "return" else Exit()


def _readers(reader: Reader, st: State, argv: list[str], at: Where) -> int | None:
    """read NAME…, mapfile NAME, getopts SPEC NAME, printf -v NAME: set at run time."""
    names = [a for a in argv[1:] if NAME.fullmatch(a)]
    if argv[0] == "printf":
        names = [argv[argv.index("-v") + 1]] if argv.index("-v") + 1 < len(argv) else []
    elif argv[0] == "read" and not names:
        names = ["REPLY"]
    elif argv[0] in ("mapfile", "readarray") and not names:
        names = ["MAPFILE"]
    for n in names:
        old = st.get(n)
        if not (old and old.readonly and old.known):
            assign(st, n, Undecided(f"{argv[0]}, which reads its value at run time"), at)
        elif st.errexit:  # read into a readonly variable: bash exits under set -e
            raise Exit()
    return None


_BUILTINS = {"unset": unset, "set": set_options, "shift": _shift, "source": _source,
             ".": _source, "eval": _eval, "exec": _exec, "test": file_test, "[": file_test,
             "return": _control, "exit": _control}
