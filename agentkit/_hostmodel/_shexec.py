"""Programs a start script runs (bash(1), COMMAND EXECUTION): the engine (the reading ends
there), ``env`` and its options, child shells (``bash -c``, ``bash FILE``, a script run as a
program), and anything else, which cannot change the shell that runs it. Also the control
flow the reader unwinds with: a launch, an exit, a return, a readonly error.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from ._shell import State, Var, Where
from ._shparse import Node

SHELLS = {"sh", "bash", "dash", "zsh"}
_ENV_ASSIGN = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", re.S)


@dataclass
class Launch:
    """The engine command the script reaches. ``argv`` None: not established (``why``)."""

    argv: list[str] | None
    env: dict[str, Var]
    at: Where
    why: str = ""
    env_known: bool = True  # False: started under a condition, its environment not established
    probe: list[str] = field(default_factory=list)  # argv with "?" where not established
    wild: Where | None = None  # other names may be changed here (eval, unreadable source…)
    wild_why: str = ""
    shell_vars: dict[str, Var] = field(default_factory=dict)  # set in the shell, not exported
    # names taken out of the environment on the way (``unset``, ``env -u``/``-i``), each
    # where it was removed: an inherited setting missing from ``env`` was removed there
    removed: dict[str, tuple[Where, str]] = field(default_factory=dict)


@dataclass
class Reading:
    launch: Launch | None = None
    problems: list[str] = field(default_factory=list)
    wanted: list[str] = field(default_factory=list)  # files it needed and did not have
    read: list[str] = field(default_factory=list)  # files it read (scripts, sourced files)


class Reader(Protocol):
    """What the commands of a script need from the reader that runs them (the reader itself
    is :class:`._wrapper.Reader`, above the builtins, which only know this much of it)."""

    files: dict[str, str | None]
    out: Reading
    path: str
    is_engine: Callable[[list[str]], bool]
    touched: Where | None  # where the script first ran something that may change files

    def program(self, st: State, text: str, path: str) -> int | None: ...

    def node(self, st: State, node: Node, cond: bool = False) -> int | None: ...

    def wild(self, st: State, at: Where, why: str) -> None: ...

    def branches(self, st: State, alts: Sequence[Callable[[State], int | None]], at: Where,
                 why: str) -> list[int | None]: ...


class Launched(Exception):
    def __init__(self, launch: Launch) -> None:
        super().__init__("launched")
        self.launch = launch


class Exit(Exception):
    pass


class Return(Exception):
    pass


class Abort(Exception):
    pass


def _shell_of(argv: list[str]) -> bool:
    return bool(argv) and argv[0].rsplit("/", 1)[-1] in ("sh", "bash", "dash")


def external(reader: Reader, st: State, argv: list[str], env: dict[str, Var], at: Where,
             exec_: bool, clear: bool = False) -> int | None:
    """A program started with ``env``: the engine (the reading ends), ``env`` itself, a child
    shell or script (followed), or anything else (it cannot change this shell)."""
    before = env
    argv, env, why = _env_program(argv, env, at)
    if why:
        reader.out.problems.append(f"{at}: {why}")
    if reader.is_engine(argv):
        shell = {k: v for k, v in st.visible().items()
                 if v.settled and not v.exported and v.value is not None}
        raise Launched(Launch(argv, env, at, shell_vars=shell, probe=argv, wild=st.wild,
                              wild_why=st.wild_why, removed=removals(st, before, env, at)))
    child = _child(reader, argv, at)
    if child is not None:
        text, path, args, script, opts = child
        return run_child(reader, env, text, path, args, script, opts, at, st.wild,
                         st.wild_why)
    if reader.touched is None:  # a program not followed may write files
        reader.touched = at
    if argv[0].endswith(".sh") or _shell_of(argv):
        reader.out.problems.append(f"{at}: runs {' '.join(argv[:2])}, which could not be read")
    return None


def removals(st: State, before: dict[str, Var], after: dict[str, Var], at: Where
             ) -> dict[str, tuple[Where, str]]:
    """Where and how each name was taken out of the environment: ``unset`` leaves a known,
    valueless variable at its line; ``env -u``/``-i`` drops it from the command's
    environment at ``at`` (-i when nothing of it is left)."""
    out = {k: (v.at, "unset") for k, v in st.visible().items()
           if v.known and v.value is None and v.at is not None and not v.placeholder}
    how = "env -u" if set(before) & set(after) or not before else "env -i"
    out.update({k: (at, how) for k in before if k not in after})
    return out


def _env_program(argv: list[str], env: dict[str, Var], at: Where
                 ) -> tuple[list[str], dict[str, Var], str]:
    """``env [-i] [-u NAME] [NAME=VALUE]… CMD``, and wrappers such as ``nohup``."""
    while argv and argv[0].rsplit("/", 1)[-1] == "env":
        rest, pairs, clear = strip_env(argv)
        if rest is argv:
            return argv, env, "an env option this reading does not model"
        env = {} if clear else dict(env)
        for k, v in pairs:
            if v == "\0":
                env.pop(k, None)
            else:
                env[k] = Var(v, exported=True, at=at)
        argv = rest
    return argv, env, ""


def _child(reader: Reader, argv: list[str], at: Where
           ) -> tuple[str, str, list[str], str, str] | None:
    """(text, path, args, $0, options) of a shell script this command runs, when known."""
    prog = argv[0].rsplit("/", 1)[-1]
    opts = ""
    if prog in ("sh", "bash", "dash"):
        i = 1
        while i < len(argv) and argv[i].startswith(("-", "+")) and argv[i] != "--":
            if argv[i] in ("-o", "+o") and i + 1 < len(argv):
                opts += " " + argv[i] + " " + argv[i + 1]
                i += 2
                continue
            opts += " " + argv[i]
            i += 1
        if "c" in "".join(o.lstrip("-+") for o in opts.split() if not o.startswith("--")):
            if i >= len(argv):
                return None
            script = argv[i + 1] if i + 1 < len(argv) else argv[0]
            return argv[i], f"{at.path} ({prog} -c)", argv[i + 2 :], script, opts
        if i < len(argv) and argv[i] == "--":
            i += 1
        if i >= len(argv):
            return None
        path, args = argv[i], argv[i + 1 :]
    else:
        path, args = argv[0], argv[1:]
    text = reader.files.get(path)
    if text is None:
        if (prog in ("sh", "bash", "dash") or path.endswith(".sh")) and path not in \
                reader.files and path not in reader.out.wanted:
            reader.out.wanted.append(path)
        return None
    if prog not in ("sh", "bash", "dash") and not re.match(r"#!\s*\S*(/|\s)(ba|da)?sh\b",
                                                            text) and not path.endswith(".sh"):
        return None
    reader.out.read.append(path)
    return text, path, args, path, opts


def run_child(reader: Reader, env: dict[str, Var], text: str, path: str, args: list[str],
              script: str, opts: str, at: Where, wild: Where | None, wild_why: str
              ) -> int | None:
    """A child shell (``bash -c``, ``bash FILE``, a script run as a program): it starts from
    the exported environment only; its changes never come back, but a launch in it counts."""
    st = State(scopes=[{k: replace(v, exported=True, xknown=v.xknown, readonly=False,
                                   inherited=True, propagate=False, placeholder=False)
                        for k, v in env.items()}],
               args=list(args), script=script, wild=wild, wild_why=wild_why)
    for o in opts.split():
        if o in ("-l", "--login", "-i") or (o.startswith("-") and not o.startswith("--")
                                            and ("l" in o or "i" in o)):
            reader.wild(st, at, "a login or interactive shell, which first reads /etc/profile "
                        "and the user's profile files (not followed)")
        for c, name in (("a", "allexport"), ("e", "errexit"), ("u", "nounset"),
                        ("f", "noglob")):
            if o[:1] in "-+" and not o.startswith("--") and c in o[1:]:
                setattr(st, name, o[0] == "-")
    bash_env = st.get("BASH_ENV")
    if bash_env is not None and (not bash_env.known or bash_env.value):
        reader.wild(st, at, "BASH_ENV names a file every bash script reads first (not followed)")
    try:
        return reader.program(st, text, path)
    except (Exit, Return, Abort):
        return None


def strip_env(argv: list[str]) -> tuple[list[str], list[tuple[str, str]], bool]:
    """``env [-i] [-u NAME] K=V … CMD …`` → (CMD …, [(K, V)], whether -i cleared the
    environment); ``-u NAME`` comes back as (NAME, "\\0"), a removal. An option it does not
    model comes back as ``argv`` itself, unchanged."""
    if not argv or argv[0].rsplit("/", 1)[-1] != "env":
        return argv, [], False
    pairs: list[tuple[str, str]] = []
    clear = False
    i = 1
    while i < len(argv):
        a = argv[i]
        if a in ("-i", "--ignore-environment", "-"):
            clear = True
        elif a in ("-u", "--unset") and i + 1 < len(argv):
            pairs.append((argv[i + 1], "\0"))
            i += 1
        elif a.startswith("--unset="):
            pairs.append((a.split("=", 1)[1], "\0"))
        elif a == "--":
            i += 1
            break
        elif (m := _ENV_ASSIGN.match(a)) is not None:
            pairs.append((m.group(1), m.group(2)))
        elif a.startswith("-"):
            return argv, [], False  # -S, -C …: not read; leave the command unresolved
        else:
            break
        i += 1
    return argv[i:], pairs, clear


def script_of(argv: list[str]) -> tuple[str, list[str]] | None:
    """(script path, its arguments) when ``argv`` runs a shell script, else None."""
    if not argv:
        return None
    prog = argv[0].rsplit("/", 1)[-1]
    if prog in SHELLS:
        rest = [a for a in argv[1:] if not a.startswith("-")]
        if "-c" in argv[1:] or not rest:
            return None
        i = argv.index(rest[0])
        return rest[0], argv[i + 1 :]
    if argv[0].endswith(".sh"):
        return argv[0], argv[1:]
    return None
