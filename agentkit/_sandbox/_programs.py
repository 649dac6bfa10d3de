"""Rules for programs with subcommands or expression languages (nvidia-smi, systemctl,
journalctl, grep, find, git), and the dispatcher over all rules."""

from __future__ import annotations

import itertools

from .. import _regex as re  # re, its compiled patterns kept on disk (_regex.py)
from . import _git as _gitrules
from . import _rules_runtimes as _rt
from ._rules import SPECS, Checked, Refused, check_simple


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
    for prev, word in itertools.pairwise(args):
        # a plain word is a value of -i/-d/-p2p, never a subcommand out of place (`-i 0 drain`)
        if not word.startswith("-") and prev not in ("-i", "--id", "-d", "--display", "-p2p"):
            raise Refused(f"nvidia-smi: {word!r} is not allowed here (a value only follows "
                          "-i, -d or -p2p; a subcommand only comes first: topo, nvlink)")
    return Checked(["nvidia-smi", *args])


_SYSTEMCTL_SUB = {"show", "cat", "status", "list-units", "list-unit-files", "is-active",
                  "is-enabled", "is-failed", "get-default", "list-dependencies",
                  "show-environment"}
# Exact options: -H/--host (ssh to another machine), -M, --root, --image and friends must not
# slip in as "a word that looks like a unit".
_SYSTEMCTL_OPT = re.compile(
    r"--no-pager|--all|-a|--full|-l|--plain|--no-legend|--value|--property=[\w,]+|"
    r"--type=[\w,]+|--state=[\w,]+|--lines=\d+"
)
_SYSTEMCTL_VALUED = {"-p": re.compile(r"[\w,]+"), "-n": re.compile(r"\d+")}
_UNIT_WORD = re.compile(r"[\w@.*:\\][\w@.*:\\-]*")


def _systemctl(args: list[str]) -> Checked:
    words = _tokens("systemctl", args, _SYSTEMCTL_OPT, _SYSTEMCTL_VALUED, _UNIT_WORD)
    if not words or words[0] not in _SYSTEMCTL_SUB:
        raise Refused(f"systemctl needs one of: {', '.join(sorted(_SYSTEMCTL_SUB))}")
    # the manager's environment, in one fixed shape (it is redacted like any output)
    if "show-environment" in words and [a for a in args if a != "--no-pager"] != words[:1]:
        raise Refused("systemctl show-environment takes no other argument")
    return Checked(["systemctl", "--no-pager", *args],
                   env={"SYSTEMD_PAGER": "cat", "SYSTEMD_COLORS": "0"})


_JOURNAL_OPT = re.compile(
    r"--unit=[\w@.:-]+|--lines=\d+|--no-pager|-b|--boot(=-?\d+)?|--since=[\w :.+-]+|"
    r"--until=[\w :.+-]+|--priority=\w+|--output=(short|short-iso|short-precise|cat)|"
    r"-k|--dmesg|--utc|-q|--quiet|--no-hostname|-r|--reverse|-a|--all|"
    r"--no-full|-x|--catalog"
)
_JOURNAL_VALUED = {
    "-u": re.compile(r"[\w@.:][\w@.:-]*"), "-n": re.compile(r"\d+"),
    "-p": re.compile(r"[0-7]|emerg|alert|crit|err|warning|notice|info|debug"),
    "-o": re.compile(r"short|short-iso|short-precise|cat"), "-S": re.compile(r"[\w :.+-]+"),
    "-U": re.compile(r"[\w :.+-]+"), "--since": re.compile(r"[\w :.+-]+"),
    "--until": re.compile(r"[\w :.+-]+"),
}


def _journalctl(args: list[str]) -> Checked:
    # No -f (never ends), --vacuum-*/--rotate/--flush/--sync/--setup-keys/--cursor-file
    # (write), -D/--file/--root/-M (other logs or machines): exact options only, no operands.
    # Output is text in a line format (no -o json: it prints a message holding escapes or
    # invalid UTF-8 as an array of byte values, which no rule reads as the secret it is).
    args, pattern = _journal_grep(args)
    _tokens("journalctl", args, _JOURNAL_OPT, _JOURNAL_VALUED, None)
    return Checked(["journalctl", "--no-pager", *args], env={"SYSTEMD_PAGER": "cat",
                                                             "SYSTEMD_COLORS": "0"},
                   grep=pattern)


def _journal_grep(args: list[str]) -> tuple[list[str], str | None]:
    """args without ``-g``/``--grep``, and its pattern: matched here against the redacted
    lines (journalctl's own --grep reads the journal before redaction: a yes/no oracle that
    recovered a 12-character token in 84 calls)."""
    out: list[str] = []
    pattern: str | None = None
    i = 0
    while i < len(args):
        a = args[i]
        i += 1
        if a in ("-g", "--grep"):
            if i >= len(args):
                raise Refused(f"journalctl {a} needs a pattern")
            pattern, i = args[i], i + 1
        elif a.startswith("--grep="):
            pattern = a.split("=", 1)[1]
        else:
            out.append(a)
    if pattern is not None and not 0 < len(pattern) <= 200:
        raise Refused("journalctl --grep: the pattern must be 1-200 characters")
    return out, pattern


def _tokens(program: str, args: list[str], options: re.Pattern[str],
            valued: dict[str, re.Pattern[str]], word: re.Pattern[str] | None) -> list[str]:
    """Walk argv: exact options, valued options with a checked value, plain words."""
    words: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        i += 1
        if a in valued:
            if i >= len(args) or not valued[a].fullmatch(args[i]):
                raise Refused(f"{program} {a} needs a valid value")
            i += 1
        elif a.startswith("-"):
            if not options.fullmatch(a):
                raise Refused(f"{program}: option {a!r} is not allowed")
        elif word is not None and word.fullmatch(a):
            words.append(a)
        else:
            raise Refused(f"{program}: argument {a!r} is not allowed")
    return words


_GREP_FLAGS = re.compile(r"-[nirlLcEFwvhHosqx]+|--include=.+|--exclude=.+|--exclude-dir=.+|"
                         r"--color=never|-[mABC]\d+")
_GREP_VALUED = {"-m", "-A", "-B", "-C", "-e", "--max-count", "--regexp"}


def _grep(args: list[str]) -> Checked:
    operands: list[str] = []
    pattern_given = recursive = False
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
            if re.fullmatch(r"-[A-Za-z]*R[A-Za-z]*|--dereference-recursive", a):
                raise Refused("grep -R follows symlinks out of the allowed paths; use -r")
            if not _GREP_FLAGS.fullmatch(a):
                raise Refused(f"grep: option {a!r} is not allowed")
            recursive |= "r" in a and not a.startswith("--")
        else:
            operands.append(a)
    paths = operands if pattern_given else operands[1:]
    if not pattern_given and not operands:
        raise Refused("grep needs a pattern")
    if recursive and not paths:
        paths = ["."]  # grep -r without a file searches the working directory: the root
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


def _git(args: list[str]) -> Checked:
    # Never run: the question is answered by the narrow reader (_git.py, _gitread.py).
    ask = _gitrules.parse(args)
    return Checked(["git", *args], paths=[ask.repo], git_repo=ask.repo)


_COMPLEX = {"nvidia-smi": _nvidia_smi, "systemctl": _systemctl, "journalctl": _journalctl,
            "grep": _grep, "find": _find, "git": _git, "docker": _rt.docker,
            "podman": _rt.podman, "kubectl": _rt.kubectl, "crictl": _rt.crictl}
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
