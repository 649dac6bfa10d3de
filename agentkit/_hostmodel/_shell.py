"""The shell's state as a start script changes it: variables with their attributes, scopes,
functions, options (bash(1), PARAMETERS and SHELL BUILTIN COMMANDS). What it cannot know (a
value set under a condition) is marked not established, never guessed; word expansion over
it is :mod:`._shexpand`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace


@dataclass(frozen=True)
class Where:
    path: str
    line: int
    text: str = ""

    def __str__(self) -> str:
        return f"{self.path}:{self.line}"


@dataclass(frozen=True)
class Var:
    """One shell variable. ``value`` None: declared but unset. ``known`` False: the reading
    cannot establish its value (``why`` says which construct, ``at`` where); ``xknown``
    False: nor whether it is exported."""

    value: str | None
    exported: bool = False
    readonly: bool = False
    known: bool = True
    xknown: bool = True
    at: Where | None = None
    why: str = ""
    inherited: bool = False  # straight from the environment the shell started with
    # not established, yet in no outcome both set and exported: it reaches no command now
    offenv: bool = False
    sure_set: bool = False  # not established, but certainly set (set -u does not stop)
    blank: bool = False  # not established, but either unset or empty: "$X" gives ""
    filled: bool = False  # not established, but set and not empty: ${X:+w} gives w
    propagate: bool = False  # exported inside a function that got it as NAME=V f
    temp: bool = False  # given to a function or builtin as NAME=V cmd
    maybe_local: bool = False  # a function's local in some runs only
    maybe_propagate: bool = False  # exported (so kept after the function) in some runs only
    # not established, but one of these values (None: unset), when runs differ by a few
    choices: tuple[str | None, ...] | None = None
    placeholder: bool = False  # `local NAME` without a value: unset here, but bash still
    # passes the shadowed variable's exported value to commands

    @property
    def settled(self) -> bool:
        return self.known and self.xknown


@dataclass(frozen=True)
class Maybe:
    """A function defined only under a condition: one of these bodies (None: undefined)."""

    bodies: tuple[object | None, ...]


class Undecided(Exception):
    """A value depends on what happens at run time (or on a construct not read)."""

    def __init__(self, why: str, may_exit: bool = False) -> None:
        super().__init__(why)
        self.why = why
        self.may_exit = may_exit  # under set -u the script stops if it is unset
        self.filled = False  # an assignment's value that is surely not empty ("pre$(…)")


class NoUnset(Exception):
    """``set -u`` and an unset variable: bash exits the script."""


@dataclass
class State:
    scopes: list[dict[str, Var]]
    funcs: dict[str, object | None] = field(default_factory=dict)  # None: not established
    allexport: bool | None = False
    errexit: bool = False
    nounset: bool = False
    noglob: bool = False
    args: list[str] | None = field(default_factory=list)
    script: str = ""  # $0
    wild: Where | None = None  # after this point any name may have been changed
    wild_why: str = ""

    def copy(self) -> State:
        return replace(self, scopes=[dict(s) for s in self.scopes], funcs=dict(self.funcs),
                       args=None if self.args is None else list(self.args))

    def get(self, name: str) -> Var | None:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        if self.wild is not None:
            return Var(None, known=False, xknown=False, at=self.wild, why=self.wild_why)
        return None

    def scope_of(self, name: str) -> dict[str, Var]:
        return next((s for s in reversed(self.scopes) if name in s), self.scopes[0])

    def put(self, name: str, var: Var, local: bool = False) -> None:
        (self.scopes[-1] if local else self.scope_of(name))[name] = var

    def visible(self) -> dict[str, Var]:
        out: dict[str, Var] = {}
        for scope in self.scopes:
            out.update({k: v for k, v in scope.items() if not v.placeholder or k not in out})
        return out

    def exported(self) -> dict[str, Var]:
        """What a command started now gets: every set, exported variable, and every one
        that may be (its value or export not established: not ``settled``)."""
        return {k: v for k, v in self.visible().items()
                if (v.exported or not v.xknown) and (v.value is not None or not v.known)
                and not v.offenv}

    def unknown(self, name: str, at: Where, why: str) -> None:
        """``name`` gets a value only run time knows; its export attribute stays."""
        old = self.get(name) or Var(None)
        self.put(name, Var(None, exported=old.exported, xknown=old.xknown, known=False, at=at,
                           why=why))
