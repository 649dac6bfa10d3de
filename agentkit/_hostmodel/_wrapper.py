"""Start scripts, ``bash -c`` and ``env`` prefixes: what the engine process really gets.

A runtime's command (``ExecStart=/opt/vllm/start.sh``, ``/bin/bash -c '…'``, ``/usr/bin/env
K=V vllm …``) is followed the way bash runs it (bash(1)), without running anything: a script
is parsed (:mod:`._shparse`) and its commands are evaluated over a model of the shell's
variables (:mod:`._shell`) until the command that starts the engine. The engine's environment
is what bash passes to it: the exported variables (inherited names stay exported when
reassigned; ``set -a`` exports every assignment; a plain assignment does not), plus
``K=V cmd`` prefixes and ``env``'s changes. Functions, ``source``/``.``, ``eval`` of known
text, child shells (``bash -c``, ``bash FILE``), subshells and pipelines (their changes do not
come back), ``exec``, ``set -e``/``-u`` and readonly errors follow bash.

What depends on run time is never guessed: a condition (``if``, ``&&``, ``case``, a loop)
makes every variable its branches set differently *not established*, with the file and line;
so do ``$(…)``, ``read``, arithmetic, and unreadable or dynamic code (``eval`` of a computed
string, ``source`` of a file that cannot be read), after which every name is not established.
The differential test (tests/test_shell_differential.py) holds this to bash itself.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import partial

from ._shbuiltins import run_simple
from ._shell import Maybe, State, Undecided, Var, Where
from ._shexec import Abort, Exit, Launched, Reading, Return, external
from ._shexpand import Expander
from ._shparse import (
    AndOr,
    Background,
    Case,
    FuncDef,
    Group,
    If,
    Loop,
    Node,
    ParseError,
    Pipeline,
    Seq,
    Simple,
    Special,
    parse,
)
from ._shsubst import reader_of, substitute
from ._shtest import substitution_writes
from ._shvars import assign

MAX_DEPTH = 12  # nested sources, functions, child shells, evals
MAX_ITERATIONS = 64  # a for loop over known words is unrolled up to this


class Reader:
    def __init__(self, files: dict[str, str | None], is_engine: Callable[[list[str]], bool]
                 ) -> None:
        self.files = files
        self.is_engine = is_engine
        self.out = Reading()
        self.path = ""
        self.depth = 0
        self.touched: Where | None = None  # file tests are decided only before this point
        # per program being read: states of the runs that stopped this line early (a readonly
        # assignment under a condition), merged in when the line ends
        self.aborted: list[list[State]] = []

    # ---- programs ---------------------------------------------------------------------------

    def program(self, st: State, text: str, path: str) -> int | None:
        """Run a script's text (a file, a ``-c`` string, a sourced file, an ``eval``) in
        ``st``. Raises Launched/Exit/Return as bash would end it."""
        if self.depth >= MAX_DEPTH:
            self.wild(st, Where(self.path, 0), f"nesting deeper than {MAX_DEPTH} levels")
            return None
        saved, self.path = self.path, path
        self.depth += 1
        try:
            try:
                lines = parse(text)
            except ParseError as e:
                self.out.problems.append(f"{path}:{e.line}: the shell syntax could not be read")
                self.wild(st, Where(path, e.line), "shell syntax this reading cannot parse")
                return None
            line = substitution_writes(text)
            if line is not None and self.touched is None:
                self.touched = Where(path, line)
            status: int | None = 0
            self.aborted.append([])
            for seq in lines:
                try:
                    status = self.node(st, seq)
                except Abort:  # bash drops the rest of the line, or exits under set -e
                    if st.errexit:
                        raise Exit() from None
                    status = 1
                if self.aborted[-1]:
                    at = Where(path, seq.line)
                    merge(st, [st.copy(), *self.aborted[-1]], at, "an assignment to a readonly "
                          f"variable under a condition ({at}), after which bash skips the rest "
                          "of the line in the runs where it happens")
                    self.aborted[-1] = []
                    status = None
            self.aborted.pop()
            return status
        finally:
            self.path = saved
            self.depth -= 1

    def wild(self, st: State, at: Where, why: str) -> None:
        """From here on any name may have been changed by code the reading cannot follow."""
        for scope in st.scopes:
            for k, v in scope.items():
                scope[k] = Var(None, exported=v.exported, known=False, xknown=False, at=at,
                               why=why)
        if st.wild is None:
            st.wild, st.wild_why = at, why
        for name in st.funcs:
            st.funcs[name] = None

    def where(self, node: Node, text: str = "") -> Where:
        return Where(self.path, node.line, text)

    # ---- nodes ------------------------------------------------------------------------------

    def node(self, st: State, node: Node, cond: bool = False) -> int | None:
        if isinstance(node, Seq):
            status: int | None = 0
            for item in node.items:
                status = self.node(st, item, cond)
            return status
        if isinstance(node, Simple):
            status = run_simple(self, st, node)
            if status not in (0, None) and st.errexit and not cond:
                raise Exit()
            return status
        if isinstance(node, AndOr):
            return self.and_or(st, node, cond)
        if isinstance(node, Pipeline):
            return self.pipeline(st, node, cond)
        if isinstance(node, Background):
            self.isolated(st, node.node)
            return 0
        if isinstance(node, Group):
            if node.subshell:
                return self.isolated(st, node.body)
            return self.node(st, node.body, cond)
        if isinstance(node, FuncDef):
            st.funcs[node.name] = node.body
            return 0
        if isinstance(node, If):
            return self.if_(st, node, 0)
        if isinstance(node, Loop):
            return self.loop(st, node)
        if isinstance(node, Case):
            at = self.where(node)
            none = [] if node.catch_all else [partial(_status, 0)]  # no pattern matches
            self.branches(st, [*(partial(self.node, node=b) for b in node.arms), *none], at,
                          f"a case at {at}")
            return None
        if isinstance(node, Special):
            return self.special(st, node)
        raise AssertionError(node)

    def isolated(self, st: State, node: Node) -> int | None:
        """A subshell: its changes never come back (a launch inside it still counts)."""
        try:
            return self.node(st.copy(), node)
        except (Exit, Return, Abort):
            return None

    def and_or(self, st: State, node: AndOr, cond: bool) -> int | None:
        status = self.node(st, node.parts[0], cond=True)
        for op, part in zip(node.ops, node.parts[1:], strict=True):
            last = part is node.parts[-1]
            if status is None:  # skipped, the one before it gave 1 (&&) or 0 (||)
                at = self.where(part)
                got = self.branches(st, [partial(self.node, node=part, cond=not last),
                                         partial(_status, int(op == "&&"))], at,
                                    f"a command that runs only if the one before it "
                                    f"{'succeeds' if op == '&&' else 'fails'} ({at})")
                status = got[0] if len(set(got)) == 1 else None
            elif (status == 0) == (op == "&&"):
                status = self.node(st, part, cond=cond or not last)
        return status

    def pipeline(self, st: State, node: Pipeline, cond: bool) -> int | None:
        if len(node.cmds) == 1:
            status = self.node(st, node.cmds[0], cond=True)
        else:  # every part of a pipeline runs in a subshell (lastpipe is off)
            status = None
            for cmd in node.cmds:
                self.isolated(st, cmd)
        if node.negate:
            return None if status is None else int(status == 0)
        if status not in (0, None) and st.errexit and not cond:
            raise Exit()
        return status

    def if_(self, st: State, node: If, k: int) -> int | None:
        if k == len(node.arms):
            return self.node(st, node.orelse) if node.orelse else 0
        cond, body = node.arms[k]
        status = self.node(st, cond, cond=True)
        if status == 0:
            return self.node(st, body)
        if status is not None:
            return self.if_(st, node, k + 1)
        at = Where(self.path, cond.line)
        self.branches(st, [partial(self.node, node=body), partial(self.if_, node=node, k=k + 1)],
                      at, f"an if whose condition is decided at run time ({at})")
        return None

    def loop(self, st: State, node: Loop) -> int | None:
        at = self.where(node)
        if node.kind == "for" and node.words is not None:
            try:
                items = [f for w in node.words for f in self.expander(st).word(w.text)]
            except Undecided:
                items = None
            if items is not None and len(items) <= MAX_ITERATIONS:
                for item in items:
                    self.assign_plain(st, node.var, item, at)
                    self.node(st, node.body)
                return 0

        def once(s: State, times: int) -> int | None:
            for _ in range(times):
                if node.cond is not None:
                    self.node(s, node.cond, cond=True)
                if node.var:
                    s.unknown(node.var, at, f"the loop variable of the loop at {at}")
                self.node(s, node.body)
            return None

        self.branches(st, [partial(once, times=n) for n in (0, 1, 2)], at,
                      f"a loop whose iterations are decided at run time ({at})")
        return None

    def special(self, st: State, node: Special) -> int | None:
        if node.kind == "((":
            for name in re.findall(r"([A-Za-z_]\w*)\s*(?:[-+*/%&|^]|<<|>>)?=(?!=)|"
                                   r"(?:\+\+|--)\s*([A-Za-z_]\w*)|([A-Za-z_]\w*)\s*(?:\+\+|--)",
                                   node.text):
                for n in name:
                    if n:
                        st.unknown(n, self.where(node), "arithmetic")
        return None

    # ---- conditions -------------------------------------------------------------------------

    def branches(self, st: State, alts: Sequence[Callable[[State], int | None]], at: Where,
                 why: str) -> list[int | None]:
        """Run each alternative on a copy; where they end differently, the result is not
        established. A branch that exits never starts the engine, so it does not count."""
        outcomes: list[State] = []
        statuses: list[int | None] = []
        for alt in alts:
            s = st.copy()
            try:
                statuses.append(alt(s))
            except Exit:
                continue
            except Abort:  # this run skips the rest of the line: merged in when it ends
                if not s.errexit and self.aborted:
                    self.aborted[-1].append(s)
                continue
            except Return:
                self.wild(s, at, f"a return under a condition ({at})")
            except Launched as e:
                e.launch.argv, e.launch.env_known = None, False
                e.launch.why = f"the engine starts only under a condition: {why}"
                raise
            outcomes.append(s)
        if not outcomes and self.aborted and self.aborted[-1]:
            raise Abort()  # every run stops this line here
        if not outcomes:
            raise Exit()
        merge(st, outcomes, at, why)
        return statuses

    # ---- helpers for builtins ---------------------------------------------------------------

    def expander(self, st: State) -> Expander:
        return Expander(st, lambda n, v: self.assign_plain(st, n, v, Where(self.path, 0)),
                        lambda t: substitute(t, reader_of(self.files, self.out.wanted)))

    def assign_plain(self, st: State, name: str, value: str | Undecided, at: Where) -> None:
        assign(st, name, value, at)


def _status(value: int, _st: State) -> int:
    return value


def merge(st: State, outcomes: list[State], at: Where, why: str) -> None:
    """The state after alternatives: what all of them agree on stays established; a value
    (or an export attribute) that differs between them is not established, from ``at``."""
    for depth, scope in enumerate(st.scopes):
        for name in {k for o in outcomes for k in o.scopes[depth]}:
            # local in some runs only: a later assignment changes the global in the others
            maybe_local = depth > 0 and not all(name in o.scopes[depth] for o in outcomes)
            got = [o.scopes[depth].get(name) or Var(None) for o in outcomes]
            first = got[0]
            values = {(v.value, v.known) if v.known else (None, False) for v in got}
            exports = {(v.exported, v.xknown) if v.xknown else (False, False) for v in got}
            if len(values) == 1 and len(exports) == 1 and all(v == first for v in got):
                scope[name] = first
                continue
            known = len(values) == 1 and first.known
            xknown = len(exports) == 1 and first.xknown
            old = next((v for v in got if not v.settled), None)
            off = all(v.offenv or (v.xknown and not v.exported) or (v.known and v.value is None)
                      for v in got)
            sure = all(v.sure_set or (v.known and v.value is not None) for v in got)
            blank = all(v.blank or (v.known and not v.value) for v in got)
            filled = all(v.filled or (v.known and v.value) for v in got)
            seen = {v.value for v in got if v.known}
            choices = tuple(seen) if all(v.known for v in got) and len(seen) <= 4 else None
            scope[name] = Var(first.value if known else None, exported=first.exported,
                              readonly=first.readonly and known, known=known, xknown=xknown,
                              at=old.at if old else at, why=old.why if old else why,
                              offenv=off, sure_set=sure and not known, blank=blank and not known,
                              filled=filled and not known,
                              propagate=any(v.propagate for v in got),
                              maybe_propagate=any(v.propagate != got[0].propagate
                                                  or v.maybe_propagate for v in got),
                              choices=None if known else choices,
                              maybe_local=maybe_local or any(v.maybe_local for v in got))
    if len({o.allexport for o in outcomes}) > 1:
        st.allexport = None
    st.errexit = any(o.errexit for o in outcomes)
    st.nounset = any(o.nounset for o in outcomes)
    for name in {n for o in outcomes for n in o.funcs}:
        defs: list[object | None] = []
        for o in outcomes:
            d = o.funcs.get(name)
            for body in (d.bodies if isinstance(d, Maybe) else (d,)):
                if all(body is not x for x in defs):
                    defs.append(body)
        if len(defs) == 1:
            st.funcs[name] = defs[0]
        elif any(d is None for d in defs) and name in st.funcs and st.funcs[name] is None \
                and all(name in o.funcs and o.funcs[name] is None for o in outcomes):
            st.funcs[name] = None
        else:
            st.funcs[name] = Maybe(tuple(defs))
    if any(o.args != outcomes[0].args for o in outcomes):
        st.args = None
    wild = next((o for o in outcomes if o.wild is not None), None)
    if wild is not None and st.wild is None:
        st.wild, st.wild_why = wild.wild, wild.wild_why


def initial_state(env: dict[str, str], args: list[str], script: str) -> State:
    return State(scopes=[{k: Var(v, exported=True, inherited=True) for k, v in env.items()}],
                 args=list(args), script=script)


def read_command(argv: list[str], env: dict[str, str], files: dict[str, str | None],
                 is_engine: Callable[[list[str]], bool], where: Where) -> Reading:
    """Follow ``argv`` (started with ``env``, as a runtime starts it) to the engine command.
    ``files`` has the text of the scripts it runs and sources (None: could not be read);
    ``Reading.wanted`` lists the ones it needed and was not given."""
    reader = Reader(files, is_engine)
    reader.path = where.path
    st = State(scopes=[{}], script="")
    prefix = {k: Var(v, exported=True, inherited=True) for k, v in env.items()}
    try:
        external(reader, st, argv, prefix, where, exec_=True, clear=True)
    except Launched as e:
        reader.out.launch = e.launch
    except (Exit, Return, Abort):
        pass
    return reader.out
