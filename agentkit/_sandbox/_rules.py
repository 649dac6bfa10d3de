"""Per-program argument rules for ``run_command``: an allowlist, never a blocklist.

Each rule accepts an argv tail or raises :class:`Refused` naming the argument and why. A rule
also returns the path operands, which the caller checks against the path policy. Anything not
explicitly allowed (a program, a flag, a subcommand) is refused: a new flag that writes, runs
or follows must never slip through because nobody listed it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field


class Refused(Exception):
    """The command is not allowed; the message says which part and why."""


@dataclass(frozen=True)
class Spec:
    """What a simple program may be given.

    ``flags``: options taking no value; ``valued``: options taking one (``-n 5``, ``-n5`` or
    ``--lines=5``); ``letters``: single-letter flags that may be clustered (``-la``);
    ``paths``: whether operands are host paths (checked against the path policy).
    """

    flags: frozenset[str] = frozenset()
    valued: frozenset[str] = frozenset()
    letters: str = ""
    paths: bool = True
    max_operands: int = 64
    first_operand_is_data: bool = False
    check_operand: Callable[[str], None] | None = None
    extra_env: dict[str, str] = field(default_factory=dict)
    # Without operands the program works on its working directory (the root): police that.
    default_operand: str | None = None


@dataclass
class Checked:
    """An accepted command: argv to run (maybe with forced safety flags), paths to police."""

    argv: list[str]
    paths: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    git_repo: str | None = None  # git only: the repository directory to vet and run in
    # real path -> host path, when operands were mapped into a snapshot root
    shown_as: dict[str, str] = field(default_factory=dict)
    # directories the program reads below a directory operand (kustomize's overlays reach
    # their bases through ``../``): mounted read-only in a snapshot's sandbox
    trees: tuple[str, ...] = ()
    # journalctl only: a pattern matched in-process against the redacted lines, never given
    # to the program (its --grep would test the unredacted journal: an oracle)
    grep: str | None = None
    # files read through a redacted copy that have other hard links: (host path, links)
    linked: tuple[tuple[str, int], ...] = ()


def _fs(*items: str) -> frozenset[str]:
    return frozenset(items)


def _numeric(value: str) -> None:
    if not re.fullmatch(r"[+-]?\d+[KMGkmg]?", value):
        raise Refused(f"{value!r} must be a number")


def _sed_script(script: str) -> None:
    # Printing line ranges is all an investigation needs; w/e/r/s commands can write or run.
    if not re.fullmatch(r"(\d+|\$)(,(\d+|\$))?p", script):
        raise Refused(f"sed script {script!r} is not allowed: only 'N,Mp' line ranges with -n")


# ps -o columns that describe a process; `environ` (its environment) and anything unknown
# are refused.
_PS_COLUMNS = frozenset({
    "pid", "ppid", "pgid", "sid", "tid", "lwp", "nlwp", "uid", "user", "ruser", "euser", "gid",
    "group", "tty", "stat", "state", "ni", "pri", "psr", "pcpu", "%cpu", "pmem", "%mem", "rss",
    "rsz", "vsz", "sz", "time", "cputime", "etime", "etimes", "start", "stime", "lstart",
    "bsdstart", "comm", "ucmd", "cmd", "args", "command", "wchan", "cls", "policy", "rtprio",
    "cgroup", "label"})


def _ps_format(value: str) -> None:
    for column in re.split(r"[,\s]+", value.strip()):
        if column.split("=", 1)[0].lower() not in _PS_COLUMNS:
            raise Refused(f"ps -o: column {column!r} is not allowed (allowed: "
                          f"{', '.join(sorted(_PS_COLUMNS))})")


def _date_operand(value: str) -> None:
    if not value.startswith("+"):
        raise Refused("date may only format (+FORMAT); setting the clock is refused")


SPECS: dict[str, Spec] = {
    "cat": Spec(flags=_fs("-n", "-A", "-v", "-E", "-T", "-s"), letters="nAvETs"),
    "head": Spec(valued=_fs("-n", "-c", "--lines", "--bytes"), flags=_fs("-q", "-v")),
    "tail": Spec(valued=_fs("-n", "-c", "--lines", "--bytes"), flags=_fs("-q", "-v")),
    "wc": Spec(flags=_fs("-l", "-c", "-w", "-m", "-L"), letters="lcwmL"),
    "ls": Spec(flags=_fs("--color=never", "--full-time"), letters="laAhR1dtSrFin",
               default_operand="."),
    "stat": Spec(flags=_fs("-L", "-t", "--terse"), valued=_fs("-c", "--format")),
    "file": Spec(flags=_fs("-b", "-i", "-L", "--mime-type", "--brief"), letters="biL"),
    "sha256sum": Spec(flags=_fs("-b", "-t")),
    "md5sum": Spec(flags=_fs("-b", "-t")),
    "sed": Spec(flags=_fs("-n", "--quiet", "-E", "-r"), first_operand_is_data=True,
                check_operand=_sed_script),
    "sort": Spec(letters="nruhVfbMsgd", valued=_fs("-k", "-t", "--key", "--field-separator")),
    "uniq": Spec(flags=_fs("-c", "-d", "-u", "-i"), letters="cdui", max_operands=1),
    "uname": Spec(letters="armsnvopi", paths=False, max_operands=0),
    "nproc": Spec(flags=_fs("--all"), paths=False, max_operands=0),
    "lscpu": Spec(flags=_fs("-J", "--json", "-e", "-p"), paths=False, max_operands=0),
    "free": Spec(letters="hmgbkwt", paths=False, max_operands=0),
    "df": Spec(letters="hTPi", paths=True),
    "uptime": Spec(paths=False, max_operands=0),
    "id": Spec(letters="unGg", paths=False, max_operands=1),
    "whoami": Spec(paths=False, max_operands=0),
    "hostname": Spec(paths=False, max_operands=0),  # any operand would *set* the name
    "env": Spec(paths=False, max_operands=0),  # an operand would run a program
    "printenv": Spec(paths=False, max_operands=8),
    "lsmod": Spec(paths=False, max_operands=0),
    "lspci": Spec(letters="vnktD", valued=_fs("-s", "-d"), paths=False, max_operands=0),
    "nvcc": Spec(flags=_fs("--version", "-V"), paths=False, max_operands=0),
    "ldconfig": Spec(flags=_fs("-p", "--print-cache"), paths=False, max_operands=0),
    "date": Spec(flags=_fs("-u", "-R", "--utc", "--iso-8601", "--iso-8601=seconds"),
                 paths=False, max_operands=0, first_operand_is_data=True,
                 check_operand=_date_operand),
    "ps": Spec(letters="efwlyH", valued=_fs("-o", "-p", "-C", "--pid"), paths=False,
               max_operands=0),
}
# `ldconfig` must not run without -p: bare ldconfig rebuilds the cache.
_REQUIRED = {"ldconfig": ("-p", "--print-cache"), "nvcc": ("--version", "-V")}


def check_simple(program: str, args: list[str]) -> list[str]:
    """Validate ``args`` against the program's :class:`Spec`; return its path operands."""
    spec = SPECS[program]
    operands: list[str] = []
    i = 0
    only_operands = False
    while i < len(args):
        arg = args[i]
        i += 1
        if only_operands or not arg.startswith("-") or arg == "-":
            operands.append(arg)
            continue
        if arg == "--":
            only_operands = True
            continue
        if arg in spec.flags:
            continue
        name, eq, value = arg.partition("=")
        if name in spec.valued:
            if not eq:
                if i >= len(args):
                    raise Refused(f"{program} {arg} needs a value")
                value = args[i]
                i += 1
            if name in ("-n", "-c", "--lines", "--bytes"):
                _numeric(value)
            if program == "ps" and name == "-o":
                _ps_format(value)
            continue
        if len(arg) > 2 and arg[:2] in spec.valued and not arg.startswith("--"):
            _numeric(arg[2:]) if arg[:2] in ("-n", "-c") else None
            _ps_format(arg[2:]) if program == "ps" and arg[:2] == "-o" else None
            continue
        if program in ("head", "tail") and re.fullmatch(r"-\d+", arg):
            continue
        if spec.letters and re.fullmatch(rf"-[{re.escape(spec.letters)}]+", arg):
            continue
        raise Refused(f"{program}: option {arg!r} is not allowed (allowed: {_describe(spec)})")
    if program in _REQUIRED and not any(a in _REQUIRED[program] for a in args):
        raise Refused(f"{program} runs only as: {program} {_REQUIRED[program][0]}")
    if spec.first_operand_is_data:
        if spec.check_operand and operands:
            spec.check_operand(operands[0])
        elif program == "sed":
            raise Refused("sed needs a script such as '1,40p' (with -n)")
        operands = operands[1:]
    if len(operands) > spec.max_operands:
        raise Refused(f"{program} takes at most {spec.max_operands} operands here")
    if spec.paths and not operands and spec.default_operand:
        operands = [spec.default_operand]
    return operands if spec.paths else []


def _describe(spec: Spec) -> str:
    parts = sorted(spec.flags | spec.valued)
    if spec.letters:
        parts.append("-[" + spec.letters + "]")
    return " ".join(parts) or "none"
