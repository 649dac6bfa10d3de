"""``git`` under ``run_command``: which invocations are read-only, and which repositories are
safe to run it in.

git runs programs named by configuration (``core.fsmonitor``, ``core.pager``, ``diff.external``,
filters, ``gpg.program``, hooks, …) and reads files named by it (``include.path``,
``mailmap.file``, object alternates). Three layers keep that shut:

* arguments: an allowlist of subcommands; ``branch``/``tag`` only list; options that write,
  run or read other files are refused;
* the repository: its ``.git`` must be a plain directory whose ``config`` sets only keys from
  an allowlist of inert ones, with no alternates or ``commondir`` leading elsewhere and no
  symlinks at its top level; anything else is refused before git starts;
* the process: ``-c`` overrides for every program-running key, system and global config off,
  ``GIT_DIR``/``GIT_WORK_TREE`` given explicitly so git never goes looking upwards.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ._rules import Refused

SUBCOMMANDS = {"log", "show", "rev-parse", "ls-files", "branch", "tag", "describe", "shortlog"}

# Command-line -c beats every config file, so these hold even if a check above were missed.
SAFE_CONFIG = [
    "core.fsmonitor=false", "core.pager=cat", "core.hooksPath=/dev/null", "diff.external=",
    "core.sshCommand=false", "core.editor=false", "core.askPass=false", "sequence.editor=false",
    "gpg.program=false", "gpg.ssh.program=false", "gpg.x509.program=false",
    "log.showSignature=false", "core.alternateRefsCommand=false", "credential.helper=",
    "uploadpack.packObjectsHook=false", "protocol.allow=never", "core.untrackedCache=false",
    "mailmap.file=", "mailmap.blob=", "color.ui=never",
]

_FORBIDDEN = re.compile(
    r"-c|--config-env.*|--exec-path.*|--upload-pack.*|--receive-pack.*|-u|--output.*|-o|"
    r"--ext-diff|--textconv|--git-dir.*|--work-tree.*|--namespace.*|--super-prefix.*|-C|"
    r"--paginate|-p|--open-files-in-pager.*|-O.*|--show-signature|--mailmap|--use-mailmap|"
    r"--stdin|--edit.*|--file.*|--ignore-revs-file.*|--orderfile.*|--follow-symlinks"
)
# git's option parser takes any unambiguous prefix of a long option (`describe --dirt` is
# --dirty): an argument that is a prefix of one of these is refused as that option would be.
_FORBIDDEN_LONG = (
    "--config-env", "--exec-path", "--upload-pack", "--receive-pack", "--output", "--ext-diff",
    "--textconv", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--paginate",
    "--open-files-in-pager", "--show-signature", "--mailmap", "--use-mailmap", "--stdin",
    "--edit", "--file", "--ignore-revs-file", "--orderfile", "--follow-symlinks", "--exec",
    "--dirty", "--broken", "--pickaxe-regex", "--pickaxe-all", "--find-object",
    # a commit message search answers yes/no about text the redaction hides, like the pickaxe
    "--grep", "--grep-reflog",
    # word diffs print a changed value on a line of its own, away from its key: no
    # redaction rule can tell it is a secret
    "--word-diff", "--word-diff-regex", "--color-words",
)
# -G/-S (the pickaxe) select commits by their content: a yes/no answer about text the output
# redaction hides, asked once per guess, reads a secret out of the history bit by bit.
_PICKAXE = re.compile(r"-[GS].*")
# Options that drop, change or prefix the `diff --git a/X b/X` headers, or print combined
# diffs (`diff --cc X`): the .env rule reads the file names from those headers.
_HEADERS = re.compile(r"--no-prefix|--(src|dst|line)-prefix.*|--cc|--diff-merges.*|"
                      r"--combined-all-paths|-c|--dd|--remerge-diff")
_LINE_RANGE = re.compile(r"\d+(,[+-]?\d+)?")
# `git log -p` is the common way to see a patch; -p is refused only where it means --paginate
# (before the subcommand, which the subcommand allowlist already excludes), so allow it after.
_PATCH_OK = {"-p", "--patch"}

# branch/tag create, delete, rename, edit descriptions and verify signatures unless listing.
_LIST_FLAG = re.compile(
    r"-a|--all|-r|--remotes|-l|--list|-v|-vv|--verbose|--no-color|--color=never|"
    r"--show-current|-n\d*|--sort=[\w:.-]+|--format=[^\n]*|--column=never|--no-column|"
    r"--(contains|no-contains|merged|no-merged|points-at)=[\w./^~@{}-]+|-i|--ignore-case|"
    r"--omit-empty"
)

# Config keys that name nothing to run or read: a repository setting anything else is refused.
_INERT_KEYS = re.compile(
    r"core\.(repositoryformatversion|filemode|bare|logallrefupdates|ignorecase|"
    r"precomposeunicode|symlinks|autocrlf|safecrlf|eol|quotepath|abbrev|compression|"
    r"looseCompression|sharedrepository|checkstat|trustctime|splitindex|commitgraph|"
    r"multipackindex|packedgitlimit|packedgitwindowsize|bigfilethreshold|warnambiguousrefs)|"
    r"extensions\.(objectformat|worktreeconfig|noop)|"
    r"remote\.[^\n]+\.(url|pushurl|fetch|push|tagopt|prune|mirror|skipdefaultupdate)|"
    r"branch\.[^\n]+\.(remote|merge|rebase|pushremote|description)|"
    r"user\.(name|email)|init\.defaultbranch|pull\.(rebase|ff)|push\.default|fetch\.prune|"
    r"gc\.(auto|autodetach|reflogexpire|reflogexpireunreachable)|"
    r"i18n\.(commitencoding|logoutputencoding)|color\.ui|advice\.[a-z]+|"
    r"lfs\.repositoryformatversion|maintenance\.(auto|strategy)",
    re.I,
)


def check_args(args: list[str]) -> tuple[str, list[str]]:
    """(repository dir as given, ``git`` argv tail after it) or :class:`Refused`."""
    repo = "/"
    if args[:1] == ["-C"]:
        if len(args) < 2:
            raise Refused("git -C needs a directory")
        repo, args = args[1], args[2:]
    if not args or args[0] not in SUBCOMMANDS:
        raise Refused(f"git: only these subcommands run: {', '.join(sorted(SUBCOMMANDS))} "
                      "(optionally after -C DIR)")
    sub = args[0]
    for a in args[1:]:
        if a in _PATCH_OK and sub in ("log", "show"):
            continue
        if _FORBIDDEN.fullmatch(a) or a.startswith("--output") or a.startswith("--exec"):
            raise Refused(f"git: option {a!r} is not allowed")
        name = a.split("=", 1)[0]
        if len(name) > 3 and name.startswith("--") and any(
                full.startswith(name) for full in _FORBIDDEN_LONG):
            raise Refused(f"git: option {a!r} is not allowed (git reads it as "
                          f"{next(f for f in _FORBIDDEN_LONG if f.startswith(name))})")
        if (a.startswith(":/") or "^{/" in a) and "--" not in args[1:args.index(a)]:
            raise Refused(f"git: revision {a!r} is not allowed: it names the commit whose "
                          "message matches a regex, a yes/no answer about text the redaction "
                          "hides")
        if _PICKAXE.fullmatch(a):
            raise Refused(f"git: {a[:2]} (the pickaxe) is not allowed: it tests commits' "
                          "content one guess at a time, past the output's redaction")
        if _HEADERS.fullmatch(a):
            raise Refused(f"git: {a!r} is not allowed: it changes the diff headers that name "
                          "each file, and a file's name decides how its lines are redacted")
    _check_line_ranges(args[1:])
    if sub in ("branch", "tag"):
        _check_listing(sub, args[1:])
    if sub == "describe" and any(a.split("=")[0] in ("--dirty", "--broken") for a in args[1:]):
        # they refresh the index, which takes .git/index.lock; with no file writable the
        # lock is left behind and the user's next git command fails
        raise Refused("git describe --dirty/--broken writes the index lock; refused (use "
                      "git describe alone)")
    return repo, args


def _check_line_ranges(args: list[str]) -> None:
    """``-L START,END:FILE`` with line numbers only: a ``/REGEX/`` or ``:FUNCNAME:`` range is
    an oracle like the pickaxe (it matches the file's content before redaction; "No match"
    or not answers one guess at a time: red team round 2 read a 24-character value so)."""
    for i, a in enumerate(args):
        if not a.startswith("-L") or a.startswith("--"):
            continue
        spec = a[2:] if a != "-L" else (args[i + 1] if i + 1 < len(args) else "")
        rng = spec.rsplit(":", 1)[0] if ":" in spec else spec
        if not _LINE_RANGE.fullmatch(rng):
            raise Refused(f"git: -L {spec!r} is not allowed: only line numbers "
                          "(-L 10,20:FILE); a /regex/ or :function: range tests the file's "
                          "content past the output's redaction")


def _check_listing(sub: str, args: list[str]) -> None:
    listing = any(a in ("-l", "--list") for a in args)
    for a in args:
        if a.startswith("-"):
            if not _LIST_FLAG.fullmatch(a):
                raise Refused(f"git {sub}: option {a!r} is not allowed (listing options only)")
        elif not listing:
            raise Refused(f"git {sub} {a!r} would create a {sub}; give --list to match names")


_ODD_CONTROLS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029]")


def parse_config_keys(text: str) -> list[str]:
    """Lower-cased ``section[.subsection].key`` names set by a git config file."""
    keys: list[str] = []
    section = ""
    # Read as git reads it: lines end at "\n" only, and only ASCII blanks are blanks.
    # str.splitlines() also ends a line at \x1c-\x1e, \x85, \u2028 ..., so "# \x1c[advice]" was
    # a comment to git and a section header here, and the filter key below it looked inert
    # (red team round 2). A config holding such characters is refused outright: git has no
    # use for them, and any other reading difference would be the next hole.
    if _ODD_CONTROLS.search(text):
        raise Refused("git config holds control characters (other than tab and line ends) "
                      "that git and this check could read differently; refusing")
    for raw in text.split("\n"):
        line = raw.strip(" \t\r\v\f")
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            m = re.match(r'^\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]', line)
            if not m:
                raise Refused(f"git config section {line[:60]!r} is not understood; refusing")
            section = m.group(1) + (f".{m.group(2)}" if m.group(2) is not None else "")
            # `[section] key = value` on the header line
            line = line[m.end():].strip()
            if not line or line[0] in "#;":
                continue
        if not section:
            raise Refused("git config has a key outside any section; refusing")
        name = re.split(r"[\s=]", line, maxsplit=1)[0]
        keys.append(f"{section}.{name}".lower())
    return keys


def vet_repository(git_dir: str, list_dir: Callable[[str], list[tuple[str, str]]],
                   read: Callable[[str], str | None]) -> None:
    """Refuse a repository whose ``.git`` could make git run or read something else.

    ``list_dir`` gives (name, kind) of a host directory (raising :class:`Refused` when it is
    not one); ``read`` gives a host file's text or None when absent.
    """
    entries = dict(list_dir(git_dir))
    links = sorted(n for n, kind in entries.items() if kind == "link")
    if links:
        raise Refused(f"{git_dir} contains symlinks ({', '.join(links)}); git would follow "
                      "them out of the allowed paths")
    for rel in ("commondir", "objects/info/alternates", "objects/info/http-alternates"):
        if read(f"{git_dir}/{rel}") is not None:
            raise Refused(f"{git_dir}/{rel} points git at another repository; refusing")
    for rel in ("config", "config.worktree"):
        text = read(f"{git_dir}/{rel}")
        if text is None:
            continue
        for key in parse_config_keys(text):
            if not _INERT_KEYS.fullmatch(key):
                raise Refused(f"{git_dir}/{rel} sets {key}, which can make git run a program or "
                              "read other files; refusing to run git in this repository")


def command(repo_dir: str, git_dir: str, args: list[str]) -> tuple[list[str], dict[str, str]]:
    """argv (program name first) and environment for an accepted invocation."""
    forced = [x for kv in SAFE_CONFIG for x in ("-c", kv)]
    extra = ["--no-ext-diff", "--no-textconv"] if args[0] in ("log", "show") else []
    env = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null",
           "GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0", "GIT_PAGER": "cat",
           "PAGER": "cat", "GIT_DIR": git_dir, "GIT_WORK_TREE": repo_dir,
           "GIT_NO_REPLACE_OBJECTS": "1", "GIT_ATTR_NOSYSTEM": "1", "GIT_NO_LAZY_FETCH": "1",
           "GIT_PROTOCOL_FROM_USER": "0", "GIT_ALLOW_PROTOCOL": "none"}
    return ["git", "--no-pager", *forced, args[0], *extra, *args[1:]], env
