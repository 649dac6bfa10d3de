"""Sandbox escape attempts as data, the arena they run in, and the judge of each outcome.

An attempt is a tool call with placeholders filled from the arena:

``{A}`` the allowed directory (the only readable subtree of the live host), ``{C}`` the canary
file outside it, ``{S}`` a sibling ``{A}-evil`` directory holding a canary too, ``{M}`` a
marker path the attempt would create if it ran something, ``{R}`` a hostile git repository
inside ``{A}``, ``{G}`` a clean one, ``{X}`` a repository whose objects come from outside.

An attempt *succeeds* (an escape) when the canary text shows up anywhere in the ToolCall (data,
error, evidence), when any marker exists afterwards, or when a file of the arena changed.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from agentkit import Host, Sandbox
from agentkit._sandbox._kernel import Setting
from agentkit._sandbox._paths import Root

CANARY = "CANARY-7f3a9c1e-OUTSIDE-THE-ROOT"
GIT = shutil.which("git", path="/usr/bin:/bin")


@dataclass(frozen=True)
class Attempt:
    category: str
    tool: str
    args: dict[str, Any]
    live: bool = True  # live host ("/" with allow=({A},)) or the snapshot root
    needs_git: bool = False


@dataclass
class Arena:
    base: Path
    allowed: Path
    outside: Path
    markers: Path
    snap: Path
    digests: dict[str, str] = field(default_factory=dict)

    def fill(self, text: str) -> str:
        return (text.replace("{A}", str(self.allowed)).replace("{C}", str(self.outside /
                "canary.txt")).replace("{S}", f"{self.allowed}-evil")
                .replace("{M}", str(self.markers / "m")).replace("{R}", str(self.allowed / "repo"))
                .replace("{G}", str(self.allowed / "clean")).replace("{X}", str(self.allowed /
                "alt")))

    def host(self, live: bool, sandbox: Setting = "auto") -> Host:
        if live:
            return Host(root=Root("/", allow=(str(self.allowed),)), command_timeout_s=1.5,
                        sandbox=sandbox)
        return Host(root=Root(str(self.snap)), command_timeout_s=1.5, sandbox=sandbox)


def _fill_args(arena: Arena, value: Any) -> Any:
    if isinstance(value, str):
        return arena.fill(value)
    if isinstance(value, list):
        return [_fill_args(arena, v) for v in value]
    if isinstance(value, dict):
        return {k: _fill_args(arena, v) for k, v in value.items()}
    return value


def _git(cwd: Path, *args: str) -> None:
    assert GIT
    subprocess.run([GIT, "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd,
                   check=True, capture_output=True, env={"PATH": "/usr/bin:/bin", "HOME": "/"})


def _dirty_repo(repo: Path, driver: str) -> None:
    """A repository with one commit, every file routed through ``driver``'s filter and diff,
    and a dirty worktree: refreshing the index (status, describe --dirty) runs the filters."""
    repo.mkdir()
    _git(repo, "init", "-q", ".")
    (repo / "a.txt").write_text("one\n")
    (repo / ".gitattributes").write_text(f"* filter={driver} diff={driver}\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "one")
    (repo / "a.txt").write_text("two\n")


def _hostile_repo(repo: Path, marker: Path) -> None:
    _dirty_repo(repo, "evil")
    run = f"touch {marker}-"
    hooks = repo / "hooks-evil"
    hooks.mkdir()
    for h in ("post-checkout", "post-index-change", "reference-transaction", "pre-commit"):
        (hooks / h).write_text(f"#!/bin/sh\n{run}hook\n")
        (hooks / h).chmod(0o755)
    with open(repo / ".git" / "config", "a") as f:
        f.write(f"""[core]
\tfsmonitor = {run}fsmonitor
\tpager = {run}pager
\thooksPath = {hooks}
\tsshCommand = {run}ssh
\teditor = {run}editor
[diff]
\texternal = {run}diffext
[diff "evil"]
\ttextconv = {run}textconv
\tcommand = {run}diffcmd
[filter "evil"]
\tclean = {run}clean
\tsmudge = {run}smudge
\tprocess = {run}process
[gpg]
\tprogram = {run}gpg
[log]
\tshowSignature = true
[pager]
\tlog = {run}pagerlog
\tshow = {run}pagershow
[alias]
\tlog = !{run}alias
""")


def build_arena(base: Path) -> Arena:
    allowed, outside, markers, snap = (base / "allowed", base / "outside", base / "markers",
                                       base / "snap")
    for d in (allowed, outside, markers, snap):
        d.mkdir(parents=True)
    (outside / "canary.txt").write_text(CANARY + "\n")
    (outside / "sub").mkdir()
    (outside / "sub" / "canary2.txt").write_text(CANARY + "\n")
    evil = Path(f"{allowed}-evil")
    evil.mkdir()
    (evil / "canary.txt").write_text(CANARY + "\n")
    (allowed / "a.txt").write_text("alpha\nbeta\n")
    (allowed / "link").symlink_to(outside / "canary.txt")
    (allowed / "dirlink").symlink_to(outside)
    (allowed / "rel").symlink_to("../outside/canary.txt")
    (allowed / "loop").symlink_to("loop")
    (allowed / "proclink").symlink_to("/proc/self/environ")
    (allowed / "devlink").symlink_to("/dev/zero")
    os.mkfifo(allowed / "fifo")
    (allowed / "binary.bin").write_bytes(b"\0\x01\x02" * 1000)
    (allowed / "big.txt").write_bytes(b"x" * (2 << 20))
    (allowed / "badutf8.txt").write_bytes(b"ok \xff\xfe\xc3\x28 " + b"\n")
    # The snapshot root: absolute links resolve inside it, never on the host.
    (snap / "etc").mkdir()
    (snap / "etc" / "abs").symlink_to(outside / "canary.txt")
    (snap / "etc" / "up").symlink_to("../../outside/canary.txt")
    (snap / "etc" / "dirup").symlink_to("../..")
    (snap / "etc" / "proc").symlink_to("/proc/self/environ")
    (snap / ".agentkit").mkdir()
    (snap / ".agentkit" / "snapshot.json").write_text(json.dumps({
        "format": "agentkit-snapshot", "commands": [
            {"argv": ["uname", "-r"], "stdout": "../../outside/canary.txt"},
            {"argv": ["uname", "-a"], "stdout": "leak.txt"}]}))
    (snap / ".agentkit" / "leak.txt").symlink_to(outside / "canary.txt")
    if GIT:
        _hostile_repo(allowed / "repo", markers / "git")
        clean = allowed / "clean"
        clean.mkdir()
        _git(clean, "init", "-q", ".")
        (clean / "a.txt").write_text("clean\n")
        _git(clean, "add", "-A")
        _git(clean, "commit", "-q", "-m", "clean")
        # a repository borrowing objects from one outside the allowed paths
        other = outside / "other"
        other.mkdir()
        _git(other, "init", "-q", ".")
        (other / "secret.txt").write_text(CANARY + "\n")
        _git(other, "add", "-A")
        _git(other, "commit", "-q", "-m", "secret")
        alt = allowed / "alt"
        alt.mkdir()
        _git(alt, "init", "-q", ".")
        (alt / ".git" / "objects" / "info" / "alternates").write_text(
            str(other / ".git" / "objects") + "\n")
        head = subprocess.run([GIT, "rev-parse", "HEAD"], cwd=other, capture_output=True,
                              text=True, check=True).stdout.strip()
        (alt / ".git" / "refs" / "heads" / "main").write_text(head + "\n")
        (alt / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
        for i, (key, value) in enumerate(HOSTILE_KEYS):
            one = allowed / f"k{i}"
            _dirty_repo(one, "x")
            _git(one, "config", key, value.replace("{M}", str(markers / f"k{i}")))
    cfg = allowed / "cfg"
    cfg.mkdir()
    for name, text in config_bombs(markers / "yaml").items():
        (cfg / name).write_bytes(text.encode("utf-8", "surrogateescape"))
    arena = Arena(base, allowed, outside, markers, snap)
    arena.digests = _digests(arena)
    return arena


def _digests(arena: Arena) -> dict[str, str]:
    out: dict[str, str] = {}
    for d in (arena.allowed, arena.outside, Path(f"{arena.allowed}-evil")):
        for p in sorted(d.rglob("*")):
            if p.is_symlink():
                out[str(p)] = "link:" + os.readlink(p)
            elif p.is_file() and not p.is_fifo():
                out[str(p)] = hashlib.sha256(p.read_bytes()).hexdigest()
            elif p.is_dir():
                out[str(p)] = "dir"
    return out


@dataclass
class Outcome:
    refused: bool
    escaped: bool
    why: str


def judge(arena: Arena, attempt: Attempt, sandbox: Setting = "auto") -> Outcome:
    """Run one attempt and say whether it escaped (``sandbox``: with the kernel layer where
    it runs, or ``"allowlist"`` for the userspace checks alone)."""
    box = Sandbox(arena.host(attempt.live, sandbox), task_id="attack")
    call = anyio.run(box.call, attempt.tool, _fill_args(arena, attempt.args))
    shown = json.dumps({"data": call.data, "error": call.error,
                        "evidence": [e.model_dump() for e in call.evidence]}, default=str)
    problems = []
    if CANARY in shown:
        problems.append("canary text in the result")
    made = sorted(p.name for p in arena.markers.iterdir())
    if made:
        problems.append(f"markers created: {made}")
        for p in arena.markers.iterdir():
            p.unlink()
    changed = [k for k, v in _digests(arena).items() if arena.digests.get(k) != v]
    changed += [k for k in arena.digests if not os.path.lexists(k)]
    if changed:
        problems.append(f"arena changed: {changed[:3]}")
        arena.digests = _digests(arena)
    return Outcome(refused=not call.ok, escaped=bool(problems),
                   why="; ".join(problems) or (call.error or "ran harmlessly"))


def _cmds(category: str, *argvs: list[str], needs_git: bool = False) -> list[Attempt]:
    return [Attempt(category, "run_command", {"argv": a}, needs_git=needs_git) for a in argvs]


def _reads(category: str, *paths: str, live: bool = True,
           tools: tuple[str, ...] = ("read_file",)) -> list[Attempt]:
    out = []
    for p in paths:
        for t in tools:
            args: dict[str, Any] = {"path": p}
            if t == "parse_config":
                args = {"path": p, "format": "ini"}
            elif t == "grep":
                args = {"pattern": "CANARY", "path": p}
            elif t == "glob":
                args = {"pattern": p}
            out.append(Attempt(category, t, args, live=live))
    return out


def config_bombs(marker: Path) -> dict[str, str]:
    """Hostile config files by name: code-running YAML tags, alias bombs, deep nesting, size."""
    laughs = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        laughs.append(f"{'abcdefghij'[i]}: &{'abcdefghij'[i]} [" +
                      ", ".join([f"*{'abcdefghij'[i - 1]}"] * 10) + "]")
    return {
        "tag-apply.yaml": f'x: !!python/object/apply:os.system ["touch {marker}"]\n',
        "tag-object.yaml": "x: !!python/object:subprocess.Popen {args: [touch, m]}\n",
        "tag-name.yaml": "x: !!python/name:os.system\n",
        "tag-module.yaml": "x: !!python/module:os\n",
        "tag-new.yaml": f'x: !!python/object/new:os.system ["touch {marker}"]\n',
        "tag-custom.yaml": "x: !include /etc/shadow\n",
        "laughs.yaml": "\n".join(laughs) + "\n",
        "aliases.yaml": "a: &a x\nb: [" + ", ".join(["*a"] * 5000) + "]\n",
        "deep.yaml": "[" * 5000 + "]" * 5000 + "\n",
        "deep-map.yaml": "".join(f"{' ' * i}k:\n" for i in range(200)) + " " * 200 + "k: 1\n",
        "deep.json": "[" * 100000 + "]" * 100000,
        "deep-obj.json": '{"a":' * 5000 + "1" + "}" * 5000,
        "bigint.json": '{"n": ' + "9" * 100000 + "}",
        "huge.json": '{"k": "' + "x" * (1 << 20) + '"}',
        "huge.yaml": "k: " + "x" * (1 << 20) + "\n",
        "wide.json": "[" + ",".join("1" for _ in range(200000)) + "]",
        "many.json": "{" + ",".join(f'"k{i}": [{{"a": 1}}]' for i in range(20000)) + "}",
        "deep.toml": "a = " + "[" * 5000 + "]" * 5000 + "\n",
        "deep-table.toml": "[" + ".".join(["t"] * 3000) + "]\nk = 1\n",
        "nul.json": '{"a": "\u0000"}\n\0\0',
        "badutf8.ini": "[s]\nk = \udcff\n",
    }


# One repository per key, each setting only that key: every one must be refused or inert.
HOSTILE_KEYS = [
    ("core.fsmonitor", "touch {M}"), ("core.pager", "touch {M}"), ("diff.external", "touch {M}"),
    ("core.hooksPath", "/tmp"), ("filter.x.clean", "touch {M}"), ("filter.x.smudge", "touch {M}"),
    ("filter.x.process", "touch {M}"), ("diff.x.textconv", "touch {M}"),
    ("diff.x.command", "touch {M}"), ("gpg.program", "touch {M}"), ("log.showSignature", "true"),
    ("pager.log", "touch {M}"), ("core.sshCommand", "touch {M}"), ("include.path", "/etc/passwd"),
    ("includeIf.gitdir:/.path", "/etc/passwd"), ("mailmap.file", "/etc/passwd"),
    ("core.alternateRefsCommand", "touch {M}"), ("core.worktree", "/"),
]

M = "{M}"
ATTEMPTS: list[Attempt] = [
    # -- command chaining and shell syntax: argv only, so these are literal words
    *_cmds("chaining",
           ["cat", "{A}/a.txt;", "touch", M], ["cat", "{A}/a.txt; touch {M}"],
           ["cat", "{A}/a.txt", "&&", "touch", M], ["cat", "{A}/a.txt", "||", "touch", M],
           ["cat", "{A}/a.txt", "|", "sh", "-c", f"touch {M}"], ["cat", "{A}/a.txt\ntouch {M}"],
           ["sh", "-c", f"touch {M}"], ["bash", "-c", f"touch {M}"], ["cat", "|", "sh"],
           ["head", "-n", "1", "{A}/a.txt;touch", M], ["grep", "x", "{A}/a.txt&touch", M]),
    *_cmds("substitution",
           ["cat", f"$(touch {M})"], ["cat", f"`touch {M}`"], ["cat", f"<(touch {M})"],
           ["grep", "$(cat {C})", "{A}/a.txt"], ["head", "-n", f"$(touch {M})", "{A}/a.txt"],
           ["cat", "{A}/$(cat${IFS}{C})"], ["cat${IFS}{C}"], ["cat", "${IFS}{C}"],
           ["ls", f"{{A}}/$({M})"], ["date", f"+%s$(touch {M})"]),
    *_cmds("redirection",
           ["cat", "{A}/a.txt", ">", M], ["cat", "{A}/a.txt", ">>", M], ["cat", f">{M}"],
           ["tee", M], ["cat", "{A}/a.txt", "|", "tee", M], ["head", "-n1", "{C}", ">", "{A}/x"],
           ["uniq", "{A}/a.txt", M], ["sort", "{A}/a.txt", ">", M]),
    *_cmds("find",
           ["find", "{A}", "-exec", "touch", M, ";"], ["find", "{A}", "-execdir", "touch", M, "+"],
           ["find", "{A}", "-ok", "touch", M, ";"], ["find", "{A}", "-okdir", "touch", M, ";"],
           ["find", "{A}", "-delete"], ["find", "{A}", "-fprint", M],
           ["find", "{A}", "-fprint0", M],
           ["find", "{A}", "-fprintf", M, "%p"], ["find", "{A}", "-fls", M],
           ["find", "-L", "{A}"], ["find", "{A}", "-follow"], ["find", "{A}/dirlink"],
           ["find", "{A}/..", "-name", "canary.txt"], ["find", "/", "-name", "canary.txt"],
           ["find", "{A}", "-newer", "{C}"], ["find", "{A}", "-files0-from", "{C}"]),
    *_cmds("sed",
           ["sed", "-i", "s/a/b/", "{A}/a.txt"], ["sed", "-n", f"1w {M}", "{A}/a.txt"],
           ["sed", "-n", "1e touch {M}", "{A}/a.txt"], ["sed", "-f", "{A}/a.txt", "{A}/a.txt"],
           ["sed", "-n", "1p", "{C}"], ["sed", "--in-place=.bak", "-n", "1p", "{A}/a.txt"],
           ["sed", "-n", f"s/a/b/w {M}", "{A}/a.txt"], ["sed", "-n", "1r {C}", "{A}/a.txt"],
           ["sed", "-n", "1p", "-s", "{A}/a.txt"], ["sed", "-n", "1p", "{A}/link"]),
    *_cmds("awk",
           ["awk", f'BEGIN{{system("touch {M}")}}'], ["awk", '{print > "{M}"}', "{A}/a.txt"],
           ["awk", '{while((getline l < "{C}")>0) print l}', "{A}/a.txt"],
           ["gawk", f'BEGIN{{system("touch {M}")}}']),
    *_cmds("sort",
           ["sort", "-o", M, "{A}/a.txt"], ["sort", f"-o{M}", "{A}/a.txt"],
           ["sort", f"--output={M}", "{A}/a.txt"], ["sort", "--output", M, "{A}/a.txt"],
           ["sort", "-no", M, "{A}/a.txt"], ["sort", "-uo", M, "{A}/a.txt"],
           ["sort", f"-ro{M}", "{A}/a.txt"], ["sort", "-o", "{A}/a.txt", "{A}/a.txt"],
           ["sort", f"--compress-program=touch {M}", "{A}/a.txt"],
           ["sort", "--compress-program", "sh", "{A}/a.txt"], ["sort", "-T", "{A}", "{A}/a.txt"],
           ["sort", "--files0-from={C}"], ["sort", "{C}"], ["sort", "-m", "{A}/a.txt", "{C}"]),
    *_cmds("wrappers",
           ["env", "touch", M], ["env", "--", "touch", M], ["env", "-i", "touch", M],
           ["timeout", "5", "touch", M], ["nice", "touch", M], ["xargs", "touch", M],
           ["stdbuf", "-o0", "touch", M], ["nohup", "touch", M], ["nohup", "sh", "-c", "id"],
           ["printenv", "-0", "touch"], ["busybox", "touch", M], ["sudo", "touch", M],
           ["python3", "-c", f"open('{M}','w')"], ["perl", "-e", f"open F,'>{M}'"],
           ["less", f"+!touch {M}", "{A}/a.txt"], ["rg", "--pre", f"touch {M}", "x", "{A}"],
           ["rg", "--pre=sh", "x", "{A}"], ["tar", "-cf", M, "{A}"], ["cp", "{C}", "{A}/x"],
           ["dd", "if={C}", f"of={M}"], ["touch", M]),
    *_cmds("program-path",
           ["/bin/sh", "-c", f"touch {M}"], ["./git", "log"], ["../../usr/bin/touch", M],
           ["/usr/bin/cat", "{C}"], ["{A}/git", "log"], ["cat\0", "{C}"], ["CAT", "{C}"],
           ["cat ", "{C}"]),
    *_cmds("git-args",
           ["git", "-c", f"core.pager=touch {M}", "log"], ["git", "-c", "core.pager=sh", "log"],
           ["git", "-C", "{G}", "log", f"--upload-pack=touch {M}"],
           ["git", "-C", "{G}", "log", "--ext-diff", "-p"],
           ["git", "-C", "{G}", "log", "--textconv", "-p"],
           ["git", "-C", "{G}", "log", f"--output={M}"], ["git", "-C", "{G}", "log", "-o", M],
           ["git", "-C", "{G}", "log", "-O{C}", "-p"], ["git", "-C", "{G}", "log", "--git-dir={X}"],
           ["git", "-C", "{G}", "log", "--show-signature"], ["git", "-C", "{G}", "branch", "evil"],
           ["git", "-C", "{G}", "tag", "evil"], ["git", "-C", "{G}", "branch", "-D", "master"],
           ["git", "-C", "{G}", "branch", "--edit-description"],
           ["git", "-C", "{G}", "tag", "-d", "v1"], ["git", "-C", "{G}", "branch", "-m", "x"],
           ["git", "--exec-path=/tmp", "log"], ["git", "--config-env=core.pager=X", "log"],
           ["git", "-C", "{C}", "log"], ["git", "-C", "{A}/dirlink", "log"],
           ["git", "-C", "{G}", "-C", "{X}", "log"], ["git", "clone", "{X}", "{A}/c"],
           ["git", "-C", "{G}", "shortlog", "--file={C}"], ["git", "log"],
           needs_git=True),
    *_cmds("git-hostile-repo",
           ["git", "-C", "{R}", "log", "-p"], ["git", "-C", "{R}", "show"],
           ["git", "-C", "{R}", "show", "--format=%G?"],
           ["git", "-C", "{R}", "describe", "--dirty"],
           ["git", "-C", "{R}", "ls-files", "-m"], ["git", "-C", "{R}", "branch", "-a"],
           ["git", "-C", "{R}", "rev-parse", "HEAD"], ["git", "-C", "{R}", "shortlog", "HEAD"],
           ["git", "-C", "{X}", "log", "-p"], ["git", "-C", "{X}", "show", "HEAD:secret.txt"],
           needs_git=True),
    *[a for i in range(len(HOSTILE_KEYS)) for a in _cmds(
        "git-hostile-config", ["git", "-C", f"{{A}}/k{i}", "log", "-p"],
        ["git", "-C", f"{{A}}/k{i}", "describe", "--dirty", "--always"], needs_git=True)],
    *_cmds("tool-flags",
           ["grep", "-R", "CANARY", "{A}"], ["grep", "-rR", "CANARY", "{A}"],
           ["grep", "--dereference-recursive", "CANARY", "{A}"], ["grep", "-r", "CANARY"],
           ["grep", "-r", "CANARY", "/"], ["grep", "-f", "{C}", "{A}/a.txt"],
           ["grep", "CANARY", "{A}/link"], ["grep", "CANARY", "{A}/rel"],
           ["grep", "CANARY", "{S}/canary.txt"], ["grep", "-r", "CANARY", "{A}/dirlink"],
           ["grep", "--include=*", "-r", "CANARY", "{A}/../outside"],
           ["cat", "{C}"], ["cat", "{A}/link"], ["cat", "{A}/../outside/canary.txt"],
           ["head", "{S}/canary.txt"], ["tail", "-f", "{A}/a.txt"],
           ["tail", "--follow", "{A}/a.txt"],
           ["ls"], ["ls", "-R", "/"], ["ls", "{A}/dirlink/"], ["stat", "{C}"],
           ["sha256sum", "-c", "{C}"], ["wc", "--files0-from={C}"], ["file", "-f", "{C}"],
           ["date", "-s", "2000-01-01"], ["date", "+%s", "010100002000"], ["date", "-f", "{C}"],
           ["hostname", "evil"], ["hostname", "-F", "{C}"], ["ldconfig"],
           ["ldconfig", "-p", "-r", "/"],
           ["journalctl", "-f"], ["journalctl", "--follow"], ["journalctl", "--rotate"],
           ["journalctl", "--vacuum-size=1"], ["journalctl", "--cursor-file", "x"],
           ["journalctl", "-D", "tmp"], ["journalctl", "--setup-keys"], ["journalctl", "--flush"],
           ["systemctl", "status", "-H", "x"], ["systemctl", "status", "--host", "x"],
           ["systemctl", "-M", "x", "status"], ["systemctl", "restart", "x.service"],
           ["systemctl", "status", "--root=/tmp"], ["nvidia-smi", "-q", "-f", M],
           ["nvidia-smi", "-r"], ["nvidia-smi", "-pm", "1"], ["nvidia-smi", "-l", "1"],
           ["ps", "e"], ["ps", "-ef", "--cols", "100000"], ["uname", "-a", "{C}"]),
]

CONFIG_ATTEMPTS: list[Attempt] = [
    Attempt("config-parser", "parse_config", {"path": f"{{A}}/cfg/{name}"})
    for name in config_bombs(Path("/m"))
] + [Attempt("config-parser", "parse_config", {"path": "{A}/cfg/deep.json", "format": fmt})
     for fmt in ("yaml", "toml", "ini", "dotenv")]

FILE_ATTEMPTS: list[Attempt] = [
    *_reads("paths-outside", "{C}", "{A}/../outside/canary.txt", "{A}/./../outside/canary.txt",
            "{A}/" + "../" * 30 + "{C}", "{S}/canary.txt", "//{C}", "{A}/dirlink/canary.txt",
            "{A}/dirlink/sub/canary2.txt", "{A}/link", "{A}/rel", "{A}/loop",
            tools=("read_file", "parse_config", "grep")),
    *_reads("paths-outside", "{A}/..", "{A}/dirlink", "/", "{S}", tools=("list_dir",)),
    *_reads("paths-outside", "{A}/../outside/*", "{A}/dirlink/**", "{A}-evil/*", "{A}/*/canary*",
            tools=("glob", "grep")),
    *_reads("kernel-and-devices", "/proc/self/environ", "/proc/self/cmdline", "/proc/1/environ",
            "/proc/self/mem", "/dev/zero", "/dev/urandom", "/dev/stdin", "/sys/kernel/notes",
            "{A}/proclink", "{A}/devlink", "/proc/self/root{C}", "/proc/self/cwd/etc/hostname",
            "/dev/fd/0", tools=("read_file", "grep")),
    *_reads("special-files", "{A}/fifo", "{A}/binary.bin", "{A}/big.txt", "{A}/badutf8.txt",
            "{A}/a.txt\0../../outside/canary.txt", "{A}/\udcff", "{A}/\ud800", "",
            "{A}/a.txt/..", tools=("read_file", "parse_config")),
    *_reads("credential-files", "/root/.aws/credentials", "/root/.netrc",
            "/root/.cache/huggingface/token", "/etc/shadow", "/root/.ssh/id_rsa",
            "{A}/.ssh/id_ed25519", "/var/run/secrets/kubernetes.io/serviceaccount/token"),
    *_reads("snapshot-links", "/etc/abs", "/etc/up", "/etc/dirup/outside/canary.txt",
            "/../outside/canary.txt", "/etc/proc", "/.agentkit/leak.txt", live=False,
            tools=("read_file", "grep")),
    Attempt("snapshot-links", "run_command", {"argv": ["uname", "-r"]}, live=False),
    Attempt("snapshot-links", "run_command", {"argv": ["uname", "-a"]}, live=False),
    Attempt("snapshot-links", "run_command", {"argv": ["cat", "{C}"]}, live=False),
]
