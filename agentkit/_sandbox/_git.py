"""What ``git`` may be asked under ``run_command``: a few questions about history, each
answered by the narrow reader (_gitread.py) in one fixed format.

git itself is never run. It runs programs named by its configuration (filters, hooks,
fsmonitor, diff drivers, credential helpers), follows grafts and alternates to other files,
and prints in any shape its options choose (format strings that slice a value past its key,
graph prefixes on diff headers, -U0, --binary, other encodings). Vetting that surface one
argument at a time lost to an attacker who did not write the checks (issue 28). So the
questions are few and their answers' shape is this project's: no format strings, encodings,
context sizes, binary patches, graphs or searches.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ._rules import Refused

VERBS = ("log", "show", "rev-parse", "ls-files", "branch", "tag")
# A revision: a name (HEAD, a branch, a tag, an object id or its prefix) then ~N / ^ / ^N
# steps. No ranges, reflogs (@{…}), message searches (:/…) or peeling (^{…}).
_REV = re.compile(r"(?!-)(?!.*\.\.)[A-Za-z0-9_][A-Za-z0-9_./-]{0,200}(?:~\d{0,4}|\^\d?)*")
_COUNT = re.compile(r"-n(\d{1,5})|-(\d{1,5})|--max-count=(\d{1,5})")
MAX_COMMITS = 500


@dataclass
class GitAsk:
    """One accepted question."""

    repo: str
    verb: str
    revs: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    count: int | None = None
    oneline: bool = False
    patch: bool = False
    names: bool = False
    all_refs: bool = False


def _why(a: str) -> Refused:
    return Refused(f"git: {a!r} is not allowed: history is read by agentkit's own reader in "
                   "one fixed format (log [-n N] [--oneline] [-p] [--name-only] [REV] [-- "
                   "PATH…], show [REV | REV:PATH], rev-parse [--abbrev-ref] REV, ls-files, "
                   "branch [-a], "
                   "tag [-l])")


def parse(args: list[str]) -> GitAsk:
    """The question ``git ARGS`` asks, or :class:`Refused` with a one-line reason."""
    repo = "/"
    if args[:1] == ["-C"]:
        if len(args) < 2:
            raise Refused("git -C needs a directory")
        repo, args = args[1], args[2:]
    if not args or args[0] not in VERBS:
        raise Refused(f"git: {(args or ['(none)'])[0]!r} is not allowed; only these "
                      f"subcommands are answered: {', '.join(VERBS)} (optionally after -C "
                      "DIR); git itself is never run")
    ask = GitAsk(repo=repo, verb=args[0])
    rest: list[str] = []
    for a in args[1:]:  # `-n 5` is `-n5`
        if rest[-1:] == ["-n"] and a.isdigit():
            rest[-1] = "-n" + a
        else:
            rest.append(a)
    if "--" in rest:
        cut = rest.index("--")
        ask.paths, rest = rest[cut + 1:], rest[:cut]
        if ask.verb not in ("log", "ls-files"):
            raise _why("--")
    for a in rest:
        _one(ask, a)
    if ask.verb in ("ls-files", "branch", "tag") and ask.revs:
        raise _why(ask.revs[0])
    if ask.verb in ("show", "log") and len(ask.revs) > 1:
        raise Refused(f"git {ask.verb}: one revision at a time")
    return ask


def _one(ask: GitAsk, a: str) -> None:
    verb = ask.verb
    m = _COUNT.fullmatch(a)
    if verb == "log" and m:
        ask.count = min(int(next(g for g in m.groups() if g is not None)), MAX_COMMITS)
    elif verb == "log" and a == "--oneline":
        ask.oneline = True
    elif verb in ("log", "show") and a in ("-p", "--patch"):
        ask.patch = True
    elif verb in ("log", "show") and a == "--name-only":
        ask.names = True
    elif verb == "rev-parse" and a in ("--verify", "-q", "--quiet"):
        pass
    elif verb == "rev-parse" and a == "--abbrev-ref":
        ask.names = True  # the branch a name stands for, not its commit
    elif verb == "branch" and a in ("-a", "--all", "-r", "--remotes", "-l", "--list"):
        ask.all_refs |= a in ("-a", "--all", "-r", "--remotes")
    elif verb == "tag" and a in ("-l", "--list"):
        pass
    elif a.startswith("-"):
        raise _why(a)
    elif verb == "show" and ":" in a:
        rev, path = a.split(":", 1)
        if not _REV.fullmatch(rev) or not path or path.startswith("/"):
            raise Refused(f"git show {a!r}: REV:PATH with a plain revision and a path "
                          "relative to the repository")
        ask.revs.append(a)
    elif _REV.fullmatch(a):
        ask.revs.append(a)
    else:
        raise Refused(f"git: revision {a!r} is not offered (a name, an object id, ~N and ^N "
                      "steps; no ranges, reflogs or message searches)")
