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
from typing import TYPE_CHECKING, cast

from ._shell import Expander, Maybe, NoUnset, State, Undecided, Var, Where
from ._shexec import Abort, Exit, Launched, Return, _env_program, _shell_of, external
from ._shparse import ASSIGN, Node, Simple

if TYPE_CHECKING:
    from ._wrapper import Reader

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DECLARE = {"export", "declare", "typeset", "local", "readonly"}
_NO_EFFECT = {"echo", "printf", "true", ":", "false", "test", "[", "cd", "pushd", "popd",
              "ulimit", "umask", "trap", "wait", "hash", "type", "pwd", "kill", "sleep",
              "alias", "unalias", "shopt", "times", "caller", "history", "jobs", "disown",
              "logger", "mkdir", "chmod", "chown", "rm", "cp", "mv", "touch", "ln", "cat",
              "exit", "return", "set", "shift", "command", "builtin"}
_MARK = "\0?"  # a word whose value is not established, in a command probed for the engine
_READERS = {"read", "mapfile", "readarray", "getopts"}
_WRAPPERS = {"nohup", "nice", "ionice", "numactl", "taskset", "stdbuf", "setsid", "chrt",
             "time", "timeout"}


def assign(st: State, name: str, value: str | Undecided, at: Where, *, export: bool = False,
           readonly: bool = False, local: bool = False, append: bool = False) -> bool:
    """An assignment as bash makes it; False when the variable is readonly (an error).
    It is exported when asked, under ``set -a``, or when the name already was (an inherited
    name is: bash marks the whole environment for export)."""
    old = st.scopes[-1].get(name) if local else st.get(name)
    if old is not None and old.readonly and old.known:
        return False
    if old is not None and old.maybe_local and not local and len(st.scopes) > 1:
        st.scopes[0][name] = Var(None, known=False, xknown=False, at=at,
                                 why="a function assigns it where it is local only in some runs")
    if local and old is None:  # a local takes the export attribute of what it shadows
        old = st.get(name)
        if old is not None and old.readonly and old.known:
            return False  # bash refuses a local that shadows a readonly variable
        old = Var(None, exported=old.exported, xknown=old.xknown) if old else None
    sure = export or st.allexport is True
    exported = sure or bool(old and old.exported)
    xknown = sure or ((old is None or old.xknown) and (st.allexport is not None or exported))
    if isinstance(value, Undecided):
        var = Var(None, exported=exported, xknown=xknown, readonly=readonly, known=False, at=at,
                  why=value.why, sure_set=True, filled=value.filled)
    elif append and old is not None and not old.known and not old.blank:
        var = Var(None, exported=exported, xknown=xknown, known=False, at=at, why=old.why)
    else:
        text = ((old.value or "") if append and old and old.known else "") + value
        var = Var(text, exported=exported, xknown=xknown, readonly=readonly, at=at,
                  why="" if xknown else (old.why if old and not old.xknown else
                                         "set -a under a condition"),
                  )
    st.put(name, var, local=local)
    return True


def _has_literal(text: str) -> bool:
    """Whether a value has a character of its own outside every expansion (then it is not
    empty, whatever the expansions give)."""
    text = re.sub(r"\$\([^()]*\)|`[^`]*`|\$\{[^}]*\}|\$[A-Za-z_0-9@*#?$!-]\w*|[\"']", "", text)
    return bool(text)


def run_simple(reader: Reader, st: State, node: Simple) -> int | None:
    at = Where(reader.path, node.line, " ".join(t.text for t in [*node.assigns, *node.words]))
    ex = Expander(st, lambda n, v: _default(st, n, v, at))
    try:
        if not node.words:
            return _assignments(reader, st, node, ex, at)
        return _command(reader, st, node, ex, at)
    except NoUnset:
        raise Exit() from None


def _default(st: State, name: str, value: str, at: Where) -> None:
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
            e.filled = _has_literal(m.group(3))
        if not assign(st, name, value, at, append=m.group(2) == "+="):
            raise Abort()
    return status


def _command(reader: Reader, st: State, node: Simple, ex: Expander, at: Where) -> int | None:
    first = node.words[0].text
    if first in _DECLARE and not node.assigns:
        return _declare(reader, st, first, [t.text for t in node.words[1:]], ex, at)
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
    rest, env, _why = _env_program(rest, {**st.exported(), **_prefix(st, node, ex, at)}, at)
    for k, v in env.items():
        if v.value and v.value.startswith(_MARK):
            env[k] = Var(None, exported=True, known=False, at=at, why=v.value[len(_MARK):])
    if rest and reader.is_engine(rest):
        from ._wrapper import Launch

        unknown = next((w[len(_MARK):] for w in rest if w.startswith(_MARK)), None)
        why = f"its command line has {unknown}" if unknown else ""
        if unknown and e.may_exit:
            why += "; under set -u the script stops there if it is unset"
        raise Launched(Launch(None if unknown else rest, env, at, why=why, probe=rest,
                              env_known=not (unknown and e.may_exit), wild=st.wild,
                              wild_why=st.wild_why))
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


# ---- declaration builtins -------------------------------------------------------------------


def _declare(reader: Reader, st: State, cmd: str, words: list[str], ex: Expander, at: Where
             ) -> int | None:
    opts: dict[str, bool] = {}
    status: int | None = 0
    args = list(words)
    while args and re.fullmatch(r"[-+][a-zA-Z]+", args[0]):
        for c in args[0][1:]:
            opts[c] = args[0][0] == "-"
        args.pop(0)
    if args[:1] == ["--"]:
        args.pop(0)
    in_func = len(st.scopes) > 1
    local = cmd == "local" or (cmd in ("declare", "typeset") and in_func and not opts.get("g"))
    if cmd == "local" and not in_func:
        return 1
    if opts.get("p") or opts.get("f") or opts.get("F") or "f" in opts:
        return 0
    if set(opts) - {"x", "r", "g", "n"} or (cmd != "export" and opts.get("n") is not None):
        for w in args:
            m = _NAME.match(w)
            if m:
                st.unknown(m.group(0), at, f"{cmd} with options this reading does not model")
        return None
    export: bool | None = True if cmd == "export" else opts.get("x")
    if cmd == "export" and opts.get("n"):
        export = False
    readonly = cmd == "readonly" or opts.get("r") is True
    for w in args:
        if ASSIGN.match(w):  # NAME=VALUE as written: the value is not split
            fields, literal = [w], False
        else:
            try:
                fields, literal = ex.word(w), True
            except Undecided as e:
                reader.wild(st, at, f"{cmd} with {e.why}")
                return None
        for f in fields:
            got = _declare_one(st, f, ex, at, export, readonly, local, literal, cmd)
            status = got if status == 0 or got == 1 else status
    return status


def _declare_one(st: State, word: str, ex: Expander, at: Where, export: bool | None,
                 readonly: bool, local: bool, literal: bool = False, cmd: str = "export"
                 ) -> int | None:
    m = ASSIGN.match(word)
    if m is None:  # NAME alone: its attributes change, its value stays
        if not _NAME.fullmatch(word):
            return 1
        old = st.scopes[-1].get(word) if local else st.get(word)
        if local and old is None and len(st.scopes) > 2 and word in st.scopes[-2]:
            old, local = st.scopes[-2][word], False  # NAME=V f: f's declare acts on it
        elif local and old is None:  # unset while the function runs
            st.scopes[-1][word] = Var(None, exported=bool(export), placeholder=True, at=at)
            return 0
        old = old or Var(None)
        st.put(word, replace(old, exported=old.exported if export is None else export,
                             xknown=old.xknown or export is not None,
                             readonly=old.readonly or readonly,
                             at=old.at or (at if old.value is None else None),
                             offenv=old.offenv and export is None,
                             propagate=export is True or old.propagate), local=local)
        return 0
    name, op = m.group(1), m.group(2)
    value: str | Undecided
    try:
        value = m.group(3) if literal else ex.value(m.group(3))
    except Undecided as e:
        value = e
        e.filled = _has_literal(m.group(3))
    if local and cmd != "local" and name not in st.scopes[-1] and len(st.scopes) > 2 and \
            name in st.scopes[-2]:
        local = False  # declare NAME=V in f, called as NAME=W f: it changes that one
    if not assign(st, name, value, at, export=export is True, readonly=readonly, local=local,
                  append=op == "+="):
        if cmd == "export":  # the value stays, the export attribute is still given
            if st.errexit:  # export's assignment error ends the script under set -e
                raise Exit()
            _declare_one(st, name, ex, at, export, False, local)
        return 1
    if export is True:  # exported: a NAME=V f variable stays after f (bash propagates it)
        st.put(name, replace(st.get(name) or Var(None), propagate=True))
    if export is False:
        var = st.get(name)
        assert var is not None
        st.put(name, Var(var.value, exported=False, readonly=var.readonly, known=var.known,
                         at=var.at, why=var.why), local=local)
    return None if isinstance(value, Undecided) else 0


# ---- other builtins -------------------------------------------------------------------------


def _unset(reader: Reader, st: State, argv: list[str], prefix: dict[str, Var], at: Where
           ) -> int | None:
    args = argv[1:]
    funcs = False
    while args and args[0].startswith("-"):
        funcs = funcs or "f" in args[0]
        args.pop(0)
    status = 0
    for name in args:
        if funcs:
            st.funcs.pop(name, None)
            continue
        old = st.get(name)
        if old is not None and old.readonly and old.known:
            status = 1
        elif old is not None or st.wild is not None:
            st.scope_of(name)[name] = Var(None, at=at)  # unset, whatever it was
    return status


def _set(reader: Reader, st: State, argv: list[str], prefix: dict[str, Var], at: Where
         ) -> int | None:
    args = argv[1:]
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-o", "+o") and i + 1 < len(args):
            _option(st, args[i + 1], a[0] == "-")
            i += 2
            continue
        if a in ("--", "-"):
            st.args = args[i + 1 :]
            return 0
        if re.fullmatch(r"[-+][a-zA-Z]+", a):
            for c in a[1:]:
                _option(st, {"a": "allexport", "e": "errexit", "u": "nounset",
                             "f": "noglob"}.get(c, c), a[0] == "-")
            i += 1
            if "o" in a[1:] and i < len(args):  # -euo pipefail: -o takes the next word
                _option(st, args[i], a[0] == "-")
                i += 1
            continue
        st.args = args[i:]
        return 0
    return 0


def _option(st: State, name: str, on: bool) -> None:
    if name in ("allexport", "errexit", "nounset", "noglob"):
        setattr(st, name, on)


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
    names = [a for a in argv[1:] if _NAME.fullmatch(a)]
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


_BUILTINS = {"unset": _unset, "set": _set, "shift": _shift, "source": _source, ".": _source,
             "eval": _eval, "exec": _exec, "return": _control, "exit": _control}
