"""Rules for programs with subcommands or expression languages (nvidia-smi, systemctl,
journalctl, grep, find, git), and the dispatcher over all rules."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ._rules import SPECS, Refused, check_simple


@dataclass
class Checked:
    """An accepted command: argv to run (maybe with forced safety flags), paths to police."""

    argv: list[str]
    paths: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)


def _only(program: str, args: list[str], allowed: re.Pattern[str]) -> None:
    for a in args:
        if not allowed.fullmatch(a):
            raise Refused(f"{program}: argument {a!r} is not allowed")


_NVSMI_ARG = re.compile(
    r"-q|--query|-L|--list-gpus|-x|--xml-format|-h|--help|-i|--id=[\w:.,-]+|[\w:.,][\w:.,-]*|"
    r"-d|--display=[A-Z_,]+|--query-gpu=[\w.,]+|--query-compute-apps=[\w.,]+|"
    r"--format=[\w,]+|topo|-m|--matrix|-p2p|nvlink|-s|--status|-c|--capabilities"
)


def _nvidia_smi(args: list[str]) -> Checked:
    # Read-only queries only: -r (reset), -pm, -pl, -c as a global (compute mode), -f (writes a
    # file), -l (loops forever) and every set-* command are absent from the allowlist.
    if args[:1] and not args[0].startswith("-") and args[0] not in ("topo", "nvlink"):
        raise Refused(f"nvidia-smi subcommand {args[0]!r} is not allowed (topo, nvlink)")
    if "-c" in args and args[:1] != ["nvlink"]:
        raise Refused("nvidia-smi -c sets the compute mode; refused")
    _only("nvidia-smi", args, _NVSMI_ARG)
    return Checked(["nvidia-smi", *args])


_SYSTEMCTL_SUB = {"show", "cat", "status", "list-units", "list-unit-files", "is-active",
                  "is-enabled", "is-failed", "get-default", "list-dependencies"}
_SYSTEMCTL_ARG = re.compile(
    r"--no-pager|--all|-a|--full|-l|--plain|--no-legend|--value|"
    r"--property=[\w,]+|-p|--type=[\w,]+|--state=[\w,]+|-n|--lines=\d+|\d+|"
    r"[\w@.:\\-]+\.(service|socket|target|timer|mount|slice|path)|[\w@.*:-]+"
)


def _systemctl(args: list[str]) -> Checked:
    subs = [a for a in args if not a.startswith("-")]
    if not subs or subs[0] not in _SYSTEMCTL_SUB:
        raise Refused(f"systemctl needs one of: {', '.join(sorted(_SYSTEMCTL_SUB))}")
    _only("systemctl", args, _SYSTEMCTL_ARG)
    return Checked(["systemctl", "--no-pager", *args],
                   env={"SYSTEMD_PAGER": "cat", "SYSTEMD_COLORS": "0"})


_JOURNAL_ARG = re.compile(
    r"-u|--unit=[\w@.:-]+|[\w@.:-]+|-n|--lines=\d+|\d+|--no-pager|-b|--boot(=-?\d+)?|-?\d+|"
    r"--since=[\w :.+-]+|--until=[\w :.+-]+|-p|--priority=\w+|[0-7]|-o|"
    r"--output=(short|short-iso|short-precise|cat|json)|short|short-iso|short-precise|cat|json|"
    r"-g|--grep=.{1,200}|-k|--dmesg|--utc|-q|--quiet|--no-hostname|-r|--reverse"
)


def _journalctl(args: list[str]) -> Checked:
    # No -f (never ends), --vacuum-*/--rotate/--flush/--sync (write), -D/--file (other logs).
    _only("journalctl", args, _JOURNAL_ARG)
    return Checked(["journalctl", "--no-pager", *args], env={"SYSTEMD_PAGER": "cat"})


_GREP_FLAGS = re.compile(r"-[nirRlLcEFwvhHosqx]+|--include=.+|--exclude=.+|--exclude-dir=.+|"
                         r"--color=never|-[mABC]\d+")
_GREP_VALUED = {"-m", "-A", "-B", "-C", "-e", "--max-count", "--regexp"}


def _grep(args: list[str]) -> Checked:
    operands: list[str] = []
    pattern_given = False
    i = 0
    while i < len(args):
        a = args[i]
        i += 1
        if a in _GREP_VALUED:
            if i >= len(args):
                raise Refused(f"grep {a} needs a value")
            pattern_given |= a in ("-e", "--regexp")
            i += 1
        elif a.startswith("-") and a != "-":
            if not _GREP_FLAGS.fullmatch(a):
                raise Refused(f"grep: option {a!r} is not allowed")
        else:
            operands.append(a)
    paths = operands if pattern_given else operands[1:]
    if not pattern_given and not operands:
        raise Refused("grep needs a pattern")
    return Checked(["grep", *args], paths=paths)


_FIND_TESTS_VALUED = {"-name", "-iname", "-path", "-ipath", "-type", "-maxdepth", "-mindepth",
                      "-size", "-mtime", "-mmin", "-regex", "-iregex", "-newer", "-perm",
                      "-user", "-group", "-wholename", "-iwholename"}
_FIND_TESTS = {"-print", "-print0", "-o", "-or", "-a", "-and", "-not", "!", "(", ")", "-empty",
               "-readable", "-true", "-false", "-xdev", "-mount", "-depth", "-prune", "-ls"}


def _find(args: list[str]) -> Checked:
    # Allowlisted predicates only: -exec, -execdir, -ok, -okdir, -delete, -fprint*, -fls and
    # -follow/-L (leaving the root through links) are refused by not being listed.
    paths: list[str] = []
    i = 0
    while i < len(args) and not (args[i].startswith("-") or args[i] in ("!", "(", ")")):
        paths.append(args[i])
        i += 1
    while i < len(args):
        a = args[i]
        i += 1
        if a in _FIND_TESTS:
            continue
        if a in _FIND_TESTS_VALUED:
            if i >= len(args):
                raise Refused(f"find {a} needs a value")
            if a == "-newer":
                paths.append(args[i])
            i += 1
            continue
        raise Refused(f"find: {a!r} is not allowed (only tests such as -name, -type, -maxdepth)")
    return Checked(["find", *args], paths=paths or ["."])


_GIT_SUB = {"log", "show", "rev-parse", "ls-files", "branch", "tag", "describe", "shortlog"}
_GIT_SAFE = ["--no-pager", "-c", "core.fsmonitor=false", "-c", "core.pager=cat",
             "-c", "core.hooksPath=/dev/null", "-c", "diff.external=",
             "-c", "core.sshCommand=false"]
_GIT_FORBIDDEN = re.compile(r"-c|--config-env.*|--exec-path.*|--upload-pack.*|--receive-pack.*|"
                            r"-u|--output.*|-o|--ext-diff|--textconv|--git-dir.*|--work-tree.*|"
                            r"--namespace.*|--super-prefix.*|-C|--paginate|--open-files-in-pager.*")


def _git(args: list[str]) -> Checked:
    if not args or args[0] not in _GIT_SUB:
        raise Refused(f"git: only these subcommands run: {', '.join(sorted(_GIT_SUB))}")
    for a in args[1:]:
        if _GIT_FORBIDDEN.fullmatch(a):
            raise Refused(f"git: option {a!r} is not allowed")
    extra = ["--no-ext-diff", "--no-textconv"] if args[0] in ("log", "show") else []
    env = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_OPTIONAL_LOCKS": "0",
           "GIT_TERMINAL_PROMPT": "0", "GIT_PAGER": "cat", "PAGER": "cat"}
    return Checked(["git", *_GIT_SAFE, args[0], *extra, *args[1:]], env=env)


_COMPLEX = {"nvidia-smi": _nvidia_smi, "systemctl": _systemctl, "journalctl": _journalctl,
            "grep": _grep, "find": _find, "git": _git}
ALLOWED_PROGRAMS = tuple(sorted([*_COMPLEX, *SPECS]))


def check(argv: list[str]) -> Checked:
    """Accept ``argv`` (program name first, no path) or raise :class:`Refused`."""
    if not argv:
        raise Refused("empty command")
    program, args = argv[0], argv[1:]
    if "/" in program:
        raise Refused(f"give the program by name, not path ({program!r}); only trusted system "
                      "binaries run")
    for a in argv:
        if "\0" in a or "\n" in a:
            raise Refused("arguments may not contain NUL or newline characters")
    if program in _COMPLEX:
        return _COMPLEX[program](args)
    if program in SPECS:
        return Checked([program, *args], paths=check_simple(program, args))
    raise Refused(f"{program!r} is not on the allowlist of read-only programs: "
                  f"{', '.join(ALLOWED_PROGRAMS)}")
