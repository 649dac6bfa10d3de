"""Assignments and the builtins that change variables and options, as bash makes them
(bash(1), PARAMETERS and SHELL BUILTIN COMMANDS): ``NAME=V``, ``export``, ``declare``,
``typeset``, ``local``, ``readonly``, ``unset`` and ``set``.
"""

from __future__ import annotations

import re
from dataclasses import replace

from ._shell import State, Undecided, Var, Where
from ._shexec import Exit, Reader
from ._shexpand import Expander
from ._shparse import ASSIGN

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


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


def has_literal(text: str) -> bool:
    """Whether a value has a character of its own outside every expansion (then it is not
    empty, whatever the expansions give)."""
    text = re.sub(r"\$\([^()]*\)|`[^`]*`|\$\{[^}]*\}|\$[A-Za-z_0-9@*#?$!-]\w*|[\"']", "", text)
    return bool(text)


def declare(reader: Reader, st: State, cmd: str, words: list[str], ex: Expander, at: Where
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
            m = NAME.match(w)
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
        if not NAME.fullmatch(word):
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
        e.filled = has_literal(m.group(3))
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


def unset(reader: Reader, st: State, argv: list[str], prefix: dict[str, Var], at: Where
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


def set_options(reader: Reader, st: State, argv: list[str], prefix: dict[str, Var], at: Where
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
