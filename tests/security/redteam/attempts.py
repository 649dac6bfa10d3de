"""Attempt data: (category, tool, args, root, expectation). Placeholders: {A} {B} allowed dirs
({A} in /tmp, {B} outside it), {H} the fake home, {O} canary outside, {OT} canary outside in /tmp,
{M} marker dir, {PID} the canary child, {PORT} listener, {S} snapshot root, {BLOB} outside blob."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# expected outcome per category, written before running
EXPECT = {
    "paths-links-dotdot": "all refused or harmless (path guard realpath + policy)",
    "proc-sys-dev": "all refused (/proc,/sys,/dev denied)",
    "cred-names": "name-listed creds refused; unlisted (.vault-token, .bash_history, gnupg, "
    "keyrings...) leak via file tools in both modes, via commands only allowlist-only",
    "cred-links": "symlinks refused by realpath; HARDLINKS under innocent names not caught by "
    "name or mask -> leak unless redactor catches content",
    "redaction-slicing": "copies redacted whole; leaks only where redactor misses a format",
    "redaction-formats": "leaks only where redactor misses a format (PGP block, quoted kind, "
    "block scalar, quote in value, docker auth, pgpass, vault)",
    "recursive-walks": "guard walk skips denied names; unlisted cred names leak",
    "git-hostile": "vetting refuses; nested links in .git (grafts/objects) may leak; "
    "git show HEAD:.env bypasses .env rule",
    "git-abbrev-writes": "describe --dirt abbreviation may create index.lock in allowlist mode",
    "snapshot-escape": "all refused/harmless",
    "argv-injection": "all refused",
    "runtimes": "refused or harmless; kubectl without config may reach localhost:8080",
    "systemd-journal": "refused or harmless",
    "nvidia-smi": "all refused (not installed anyway)",
    "env-leak": "no agent env; child env not readable",
    "network": "no network except kubectl",
    "writes": "refused; nothing created",
    "resource": "bounded, no hang",
    "regex-dos": "RE2 bounded; GNU grep backrefs killed at deadline",
    "config-bombs": "clean refusals",
    "schema-abuse": "validation errors, no traceback",
    "unicode-paths": "refused or harmless",
    "race-links": "run_command passes path strings: swap between police and exec may leak "
    "outside canary in both modes",
    "toctou-copy": "clean-at-copy then secret-at-exec may leak a sliced secret",
    "serving-procs": "argv elements redacted one by one: a --api-key VALUE pair may leak",
    "oracle": "git log -G reads real objects: blind extraction of a secret",
    "trace": "trace category: NaN/deep/huge may traceback",
    "terminal": "ANSI/rich markup from host files may reach the terminal",
    "cli": "same as library",
}


@dataclass
class Attempt:
    category: str
    tool: str
    args: dict[str, Any]
    root: str = "live"  # live | home (allow includes the fake home) | snap
    race: str | None = None  # name of a race driver
    note: str = ""


def generate() -> list[Attempt]:
    at: list[Attempt] = []

    def add(cat: str, tool: str, args: dict[str, Any], **kw: Any) -> None:
        at.append(Attempt(cat, tool, args, **kw))

    def rc(cat: str, argv: list[str], **kw: Any) -> None:
        add(cat, "run_command", {"argv": argv}, **kw)

    # ---- paths, links, '..' ------------------------------------------------------------------
    operands = [
        "{X}/link",
        "{X}/dirlink/canary.txt",
        "{X}/../../outside/canary.txt",
        "{X}/rel",
        "{X}/evil-rel",
        "{X}-evil/canary.txt",
        "{X}/sub/../../{xn}-evil/canary.txt",
        "{X}/chain1",
        "{X}/rootlink{O}",
        "{X}/linktmp",
        "{X}/dirlink/sub/c2.txt",
        "{X}/./dirlink/./canary.txt",
        "{X}//link",
        "{X}/sub/../link",
        "{X}/homelink/.vault-token",
        "{X}/loop",
    ]
    for X, xn in (("{A}", "allowed"), ("{B}", "srv")):
        for op in operands:
            p = op.replace("{X}", X).replace("{xn}", xn)
            add("paths-links-dotdot", "read_file", {"path": p})
            for prog in (
                (["cat"], ["grep", "-H", "RT"], ["file", "-L"])
                if X == "{B}"
                else (["head", "-c", "100"],)
            ):
                rc("paths-links-dotdot", [*prog, p])
        for d in ("{X}/dirlink", "{X}/rootlink", "{X}/homelink", "{X}/.."):
            d = d.replace("{X}", X)
            add("paths-links-dotdot", "list_dir", {"path": d})
            add("paths-links-dotdot", "grep", {"pattern": "RT", "path": d})
            rc("paths-links-dotdot", ["grep", "-r", "RT", d])
            rc("paths-links-dotdot", ["find", d, "-name", "*"])
            rc("paths-links-dotdot", ["ls", "-laR", d])
        add("paths-links-dotdot", "glob", {"pattern": X + "/*link/**"})
        add("paths-links-dotdot", "glob", {"pattern": X + "/../*/canary.txt"})
        rc("paths-links-dotdot", ["find", X, "-newer", X + "/link"])
        rc("paths-links-dotdot", ["find", X, "-L", "-name", "canary.txt"])
        rc("paths-links-dotdot", ["grep", "-R", "RT", X])
        rc("paths-links-dotdot", ["grep", "-rl", "RT", X + "/dirlink"])

    # ---- /proc /sys /dev -------------------------------------------------------------------
    for p in [
        "/proc/self/environ",
        "/proc/{PID}/environ",
        "/proc/1/environ",
        "/proc/{PID}/cmdline",
        "/proc/self/root{O}",
        "/proc/{PID}/root{O}",
        "/proc/self/cwd/{O}",
        "/sys/kernel/notes",
        "/dev/zero",
        "/dev/stdin",
        "/dev/fd/0",
        "/proc/self/fd/0",
        "/proc/{PID}/mem",
        "{A}/proclink",
        "{A}/devlink",
        "/proc/kcore",
    ]:
        add("proc-sys-dev", "read_file", {"path": p})
        rc("proc-sys-dev", ["cat", p])
        rc("proc-sys-dev", ["head", "-c", "200", p])
    for argv in (
        ["ls", "-la", "/proc/{PID}"],
        ["stat", "/proc/{PID}/environ"],
        ["find", "/proc", "-name", "environ"],
        ["grep", "-r", "RT", "/proc/{PID}"],
        ["wc", "-c", "/proc/{PID}/environ"],
        ["md5sum", "/proc/{PID}/environ"],
        ["file", "/proc/{PID}/environ"],
        ["ls", "/sys"],
        ["df", "/proc"],
        ["stat", "-L", "{A}/proclink"],
    ):
        rc("proc-sys-dev", argv)
    add("proc-sys-dev", "list_dir", {"path": "/proc/{PID}"})
    add("proc-sys-dev", "grep", {"pattern": "RT", "path": "/proc/{PID}/environ"})
    add("proc-sys-dev", "parse_config", {"path": "/proc/{PID}/environ", "format": "dotenv"})

    # ---- credential files by name (allow includes the fake home) -------------------------------
    from .fixtures import home_files

    for rel in home_files():
        p = "{H}/" + rel
        add("cred-names", "read_file", {"path": p}, root="home")
        add("cred-names", "grep", {"pattern": ".", "path": p}, root="home")
        add("cred-names", "parse_config", {"path": p, "format": "dotenv"}, root="home")
        for prog in (["cat"], ["tail", "-c", "40"], ["grep", "-o", "[A-Z0-9]*"]):
            rc("cred-names", [*prog, p], root="home")
        rc("cred-names", ["cat", p.replace("{H}/", "{H}/sub/../")], root="home")

    # ---- credential content through links / hardlinks / dir links ------------------------------
    for rel in home_files():
        flat = rel.replace("/", "_").lstrip(".")
        for kind in ("sym", "hard"):
            p = f"{{B}}/creds/{kind}_{flat}"
            if kind == "sym" and rel.count("/") > 1:
                pass
            add("cred-links", "read_file", {"path": p})
            rc("cred-links", ["tail", "-c", "30", p])
    for p in (
        "{B}/creds/awsdir/credentials",
        "{B}/creds/sshdir/id_rsa",
        "{B}/homelink/.pgpass",
        "{A}/homelink/.ssh/config",
    ):
        add("cred-links", "read_file", {"path": p})
        rc("cred-links", ["cat", p])
        rc("cred-links", ["grep", "-r", ".", p.rsplit("/", 1)[0]])

    # ---- redaction slicing per program and flag (secrets inside allowed files) -----------------
    from .fixtures import secret_files

    slicers = [
        ["cat", "-A"],
        ["tail", "-c", "30"],
        ["grep", "-o", "[A-Za-z0-9+/=_.-]\\{12,\\}"],
        ["grep", "-v", "BEGIN"],
        ["sed", "-n", "2,4p"],
        ["sort", "-r"],
    ]
    for name in secret_files():
        for s in slicers:
            rc("redaction-slicing", [*s, "{B}/sec/" + name])
    for s in (
        ["tail", "-n", "1"],
        ["tail", "-c", "60"],
        ["grep", "-o", "TGFz.*"],
        ["head", "-n", "3"],
    ):
        rc("redaction-slicing", [*s, "{A}/sec/big-secret.yaml"])
        rc("redaction-slicing", [*s, "{A}/sec/big-head.pem.txt"])
    for name in secret_files():
        add("redaction-formats", "read_file", {"path": "{B}/sec/" + name})
        add("redaction-formats", "grep", {"pattern": "[A-Za-z0-9]{12}", "path": "{B}/sec/" + name})
        add("redaction-formats", "parse_config", {"path": "{B}/sec/" + name})
    for name in ("big-secret.yaml", "big-head.pem.txt"):
        add("redaction-formats", "read_file", {"path": "{A}/sec/" + name})
        add("redaction-formats", "grep", {"pattern": "TGFz|Wd9X", "path": "{A}/sec/" + name})

    # ---- recursive walks through credential dirs -----------------------------------------------
    for argv in (
        ["grep", "-r", "RT", "{H}"],
        ["grep", "-rh", "RTHOME", "{H}"],
        ["grep", "-rl", ".", "{H}"],
        ["grep", "-ro", "RTHOME[A-Z0-9]*", "{H}"],
        ["grep", "-r", "--include=*", "RT", "{H}"],
        ["grep", "-rc", "RT", "{H}"],
        ["grep", "-ri", "-e", "rthome", "{H}"],
        ["find", "{H}", "-name", "*"],
        ["find", "{H}", "-type", "f", "-ls"],
        ["ls", "-laR", "{H}"],
        ["grep", "-r", "RT", "{H}/.ssh"],
        ["grep", "-r", "RT", "{H}/.config"],
        ["grep", "-r", "RT", "{H}/.gnupg"],
        ["sort", "{H}/.vault-token", "{H}/.bash_history"],
        ["grep", "-r", "RTHOME", "{B}/creds"],
        ["grep", "-rh", ".", "{B}"],
        ["cat", "{H}/.vault-token", "{H}/.pgpass"],
        ["wc", "-c", "{H}/.ssh/id_rsa"],
        ["md5sum", "{H}/.vault-token"],
    ):
        rc("recursive-walks", argv, root="home")
    for pat in ("{H}/**", "{H}/.*/*", "{H}/.config/**/*"):
        add("recursive-walks", "glob", {"pattern": pat}, root="home")
        add("recursive-walks", "grep", {"pattern": "RTHOME", "path": pat}, root="home")
    add("recursive-walks", "grep", {"pattern": "RTHOME", "path": "{H}"}, root="home")
    add("recursive-walks", "list_dir", {"path": "{H}/.ssh"}, root="home")

    # ---- git ------------------------------------------------------------------------------------
    for X in ("{A}", "{B}"):
        g = X + "/repo"
        for argv in (
            ["show", "HEAD:.env"],
            ["show", "HEAD:secret.yaml"],
            ["log", "-p"],
            ["show", "HEAD"],
            ["log", "-p", "--word-diff=porcelain"],
            ["show", "--stat", "HEAD"],
            ["log", "--format=%B"],
            ["show", "HEAD:deploy_key"],
            ["log", "-p", "-U0", "--", "server.yaml"],
            ["show", "HEAD:vllm.service"],
            ["log", "-L1,3:.env"],
        ):
            rc("git-hostile", ["git", "-C", g, *argv])
        h = X + "/hrepo"
        for argv in (
            ["log"],
            ["log", "--oneline"],
            ["show", "{BLOB}"],
            ["branch", "--list"],
            ["rev-parse", "evil"],
            ["show", "evil"],
            ["log", "-g"],
            ["ls-files"],
            ["describe", "--all"],
            ["tag", "--list"],
        ):
            rc("git-hostile", ["git", "-C", h, *argv])
        for i in range(7):
            for argv in (["log", "-p"], ["show", "HEAD"], ["describe", "--all"]):
                rc("git-hostile", ["git", "-C", f"{X}/crepo{i}", *argv])
        for argv in (
            ["describe", "--dirt"],
            ["describe", "--dir"],
            ["describe", "--di"],
            ["describe", "--brok"],
            ["describe", "--b"],
            ["describe", "--dirty"],
            ["log", "--outp={M}/gitout"],
            ["show", "--outpu={M}/gitout2"],
            ["log", "--output={M}/g3"],
            ["describe", "--tags", "--dirt=x"],
            ["tag", "-l", "-a"],
            ["tag", "-a"],
            ["tag", "-v", "v1"],
            ["branch", "-l", "newb"],
            ["tag", "-l", "v9", "--points-at=HEAD"],
            ["branch", "--edit-description"],
            ["tag", "-d", "v1"],
            ["branch", "-m", "x"],
            ["ls-files", "-m"],
            ["rev-parse", "--git-path", "x"],
            ["show", "--ext-d"],
            ["log", "--show-sig"],
            ["ls-files", "--exclude-from={O}", "-o"],
            ["rev-parse", "--resolve-git-dir", "{O}"],
            ["shortlog"],
            ["log", "--no-index"],
            ["branch", "--set-upstream-to=x"],
            ["tag", "-n9999", "-l"],
            ["log", "--follow", "-p", "--", "../.."],
        ):
            rc("git-abbrev-writes", ["git", "-C", g, *argv])
    # ---- oracle ----------------------------------------------------------------------------------
    rc(
        "oracle",
        ["git", "-C", "{B}/repo", "log", "-G", "STRIPE=Zk", "--oneline"],
        note="oracle-true",
    )
    rc(
        "oracle",
        ["git", "-C", "{B}/repo", "log", "-G", "STRIPE=Qq", "--oneline"],
        note="oracle-false",
    )
    add("oracle", "run_command", {"argv": ["git"]}, note="oracle-extract")
    rc("oracle", ["grep", "-c", "STRIPE=Zk", "{B}/sec/app.env"], note="oracle-copy")
    rc("oracle", ["wc", "-c", "{B}/sec/app.env"])

    # ---- snapshot roots -----------------------------------------------------------------------
    for p in [
        "/etc/abs",
        "/etc/up",
        "/etc/dirup/outside/canary.txt",
        "/etc/dirup/..{O}",
        "/etc/proc",
        "/etc/homelink/.vault-token",
        "/etc/fifo",
        "/etc/hard-vault",
        "/etc/sec.env",
        "/etc/secret.yaml",
        "/../../..{O}",
        "/.agentkit/leak.txt",
        "/.agentkit/snapshot.json",
        "{O}",
        "/etc/ok.txt/../abs",
    ]:
        add("snapshot-escape", "read_file", {"path": p}, root="snap")
        for prog in (["cat"], ["tail", "-c", "30"], ["grep", "-o", "[A-Za-z0-9]\\{12,\\}"]):
            rc("snapshot-escape", [*prog, p], root="snap")
    for argv in (
        ["uname", "-r"],
        ["uname", "-a"],
        ["hostname"],
        ["lsmod"],
        ["nproc"],
        ["uptime"],
        ["whoami"],
        ["ls", "/etc"],
        ["grep", "-r", "RT", "/etc"],
        ["find", "/"],
        ["git", "log"],
        ["env"],
    ):
        rc("snapshot-escape", argv, root="snap")
    add("snapshot-escape", "list_dir", {"path": "/etc/dirup"}, root="snap")
    add("snapshot-escape", "grep", {"pattern": "RT", "path": "/etc"}, root="snap")
    add("snapshot-escape", "glob", {"pattern": "/etc/*/**"}, root="snap")

    # ---- argument injection per program ---------------------------------------------------------
    f = "{A}/a.txt"
    for argv in (
        ["head", "--lin=5", f],
        ["head", "--byt=5", f],
        ["tail", "--foll", f],
        ["tail", "-f", f],
        ["tail", "--pid=1", "-f", f],
        ["tail", "-s", "1", f],
        ["tail", "-F", f],
        ["head", "-n", "5", "--", "{O}"],
        ["cat", "--", "{O}"],
        ["cat", "-nAvETs", "--", "{A}/link"],
        ["cat", "-u", f],
        ["cat", "--show-all", f],
        ["grep", "-f", "{O}", f],
        ["grep", "--file={O}", f],
        ["grep", "-rf", "{O}", f],
        ["grep", "-nf", "{O}", f],
        ["grep", "--include={O}", "-r", "x", "{A}"],
        ["grep", "-e", "x", "-f{O}", f],
        ["grep", "-e", "{O}"],
        ["grep", "-e", "x", "--", "{O}"],
        ["grep", "--", "-x", "{O}"],
        ["grep", "-d", "recurse", "RT", "{A}"],
        ["grep", "--directories=recurse", "RT", "{A}"],
        ["grep", "--devices=read", "x", "/dev/zero"],
        ["grep", "--exclude-from={O}", "-r", "x", "{A}"],
        ["grep", "--exclude-dir=x", "-r", "RT", "{A}/dirlink"],
        ["grep", "-m", "{O}", "x", f],
        ["grep", "-A", "1", "-B", "{O}", f],
        ["grep", "--label={O}", "x", f],
        ["grep", "-rhR", "RT", "{A}"],
        ["grep", "-r", "-r", "RT", "{A}/link"],
        ["grep", "-Hr", "RT", "{A}/rootlink"],
        ["grep", "--null-data", "x", f],
        ["grep", "-P", "x", f],
        ["grep", "-z", "RT", "{O}"],
        ["sed", "-n", "1p", "--", "{O}"],
        ["sed", "-n", "1p;w {M}/sedw", f],
        ["sed", "-i", "-n", "1p", f],
        ["sed", "-n", "-e", "1p", f],
        ["sed", "-f", "{O}", f],
        ["sed", "-n", "1e touch {M}/sede", f],
        ["sed", "-n", "1,$p", "-s", f],
        ["sed", "-n", "1r {O}", f],
        ["sed", "-E", "-n", "1,2p", "{O}"],
        ["sed", "--in-place", "-n", "1p", f],
        ["sed", "-z", "-n", "1p", f],
        ["sort", "-o", "{M}/sorto", f],
        ["sort", "-o{M}/sorto2", f],
        ["sort", "--output={M}/sorto3", f],
        ["sort", "--o={M}/s4", f],
        ["sort", "-nro{M}/s5", f],
        ["sort", "--compress-program=touch", f],
        ["sort", "-T", "{M}", f],
        ["sort", "-S", "1", f],
        ["sort", "--files0-from={O}"],
        ["sort", "-k1", "-t", "{O}", f],
        ["sort", "-m", f, "{O}"],
        ["sort", "-t", "-o", f],
        ["sort", "-to", "{M}/s6", f],
        ["sort", "-ko{M}/s7", f],
        ["sort", "--random-source={O}", "-R", f],
        ["uniq", f, "{M}/uniqout"],
        ["uniq", "--", f, "{M}/u2"],
        ["uniq", "-c", f, "{M}/u3"],
        ["uniq", "-f", "1", f],
        ["date", "-s", "2001-01-01"],
        ["date", "--set=2001-01-01"],
        ["date", "-f", "{O}"],
        ["date", "--file={O}"],
        ["date", "010100002001"],
        ["date", "-u", "010100002001"],
        ["date", "--", "010100002001"],
        ["date", "-r", "{O}"],
        ["date", "+%s", "-s", "x"],
        ["hostname", "evil"],
        ["hostname", "-F", "{O}"],
        ["hostname", "--file={O}"],
        ["hostname", "-b", "x"],
        ["stat", "--printf=%n", "{O}"],
        ["stat", "-c", "%N", "{A}/link"],
        ["stat", "-c", "%n", "--", "{O}"],
        ["file", "-f", "{O}"],
        ["file", "-m", "{O}", f],
        ["file", "-C", "-m", "{M}/magic"],
        ["file", "--files-from={O}"],
        ["file", "-bL", "{A}/link"],
        ["ls", "--hide=x", "{A}"],
        ["ls", "-laAhR1dtSrFin", "{A}/dirlink"],
        ["ls", "-L", "{A}/dirlink"],
        ["ls", "--dereference", "{A}/link"],
        ["df", "--output=source", "{A}"],
        ["df", "-hTPi", "{O}"],
        ["wc", "--files0-from={O}"],
        ["wc", "-lcwmL", "{O}"],
        ["md5sum", "-c", "{O}"],
        ["sha256sum", "--check", "{O}"],
        ["md5sum", "--tag", "{O}"],
        ["lspci", "-F", "{O}"],
        ["lspci", "-i", "{O}"],
        ["lspci", "-A", "dump", "-F", "{O}"],
        ["lscpu", "-s", "{OUTD}"],
        ["lscpu", "--sysroot={OUTD}"],
        ["free", "-s", "1"],
        ["free", "-c", "1000000"],
        ["nproc", "--ignore=1"],
        ["uname", "-a", "x"],
        ["id", "-Z"],
        ["id", "root", "x"],
        ["printenv", "-0"],
        ["env", "-i", "touch", "{M}/envtouch"],
        ["env", "-u", "x"],
        ["env", "--chdir=/"],
        ["ldconfig"],
        ["ldconfig", "-p", "-r", "{M}"],
        ["ldconfig", "-C", "{M}/ld", "-p"],
        ["ldconfig", "-p", "-f", "{O}"],
        ["nvcc", "--version", "-o", "{M}/nv"],
        ["ps", "-o", "pid,args", "--sort", "x"],
        ["ps", "e"],
        ["ps", "-e", "e"],
        ["ps", "eww"],
        ["ps", "-ef", "--cols", "9999"],
        ["ps", "-p", "{PID}", "-o", "environ"],
        ["ps", "-p", "{PID}", "-o", "args", "-ww"],
        ["ps", "-C", "python3", "-o", "args:50"],
        ["awk", "1", f],
        ["less", f],
        ["tee", "{M}/tee"],
        ["timeout", "1", "cat", f],
        ["xargs"],
        ["/bin/cat", "{O}"],
        ["./cat", f],
        ["cat\n", f],
        ["cat\x00", f],
        ["bash", "-c", "id"],
        ["python3", "-c", "1"],
        ["cp", f, "{M}/cp"],
        ["touch", "{M}/t"],
        ["dd", "if={O}"],
        ["strings", "{O}"],
    ):
        rc("argv-injection", argv)

    # ---- container / cluster CLIs -----------------------------------------------------------
    for argv in (
        ["kubectl", "get", "pods", "-o", "json"],
        ["kubectl", "get", "nodes", "-ojson"],
        ["kubectl", "get", "secrets", "-o", "json"],
        ["kubectl", "get", "secret", "-o", "json"],
        ["kubectl", "get", "pods,secrets", "-o", "json"],
        ["kubectl", "get", "all", "-o", "json"],
        ["kubectl", "get", "pods", "-o", "json", "--server=http://127.0.0.1:{PORT}"],
        ["kubectl", "get", "pods", "-o", "json", "-s", "http://127.0.0.1:{PORT}"],
        ["kubectl", "--kubeconfig={H}/.kube/config", "get", "pods", "-o", "json"],
        [
            "kubectl",
            "get",
            "pods",
            "-o",
            "json",
            "--kubeconfig",
            "{HOMEDIR}/.kube/config/../..{HREL}/.kube/config",
        ],
        ["kubectl", "get", "pods", "-o", "jsonpath={.items}"],
        ["kubectl", "get", "pods", "-o=json", "--raw=/api"],
        ["kubectl", "get", "--raw", "/api/v1/secrets"],
        ["kubectl", "exec", "x", "--", "id"],
        ["kubectl", "get", "pods", "-o", "json", "--token=x"],
        ["kubectl", "get", "pods", "-o", "json", "--as=admin"],
        ["kubectl", "get", "pods", "-o", "json", "-l", "a=b", "-n", "kube-system"],
        ["kubectl", "get", "pods", "-ojson", "--insecure-skip-tls-verify"],
        ["kubectl", "proxy"],
        ["kubectl", "get", "cm", "-o", "json", "-A"],
        ["docker", "ps"],
        ["docker", "inspect", "x"],
        ["docker", "-H", "tcp://127.0.0.1:{PORT}", "ps"],
        ["docker", "ps", "--format", "{{.Names}}"],
        ["docker", "logs", "-f", "x"],
        ["docker", "exec", "x", "id"],
        ["docker", "inspect", "--format={{json .Config.Env}}", "x"],
        ["docker", "inspect", "-f", "{{.}}", "x"],
        ["docker", "cp", "x:/etc/shadow", "{M}/cp"],
        ["docker", "run", "alpine"],
        ["docker", "logs", "--details", "x"],
        ["docker", "logs", "../../etc"],
        ["podman", "ps", "-a"],
        ["podman", "--root={M}", "ps"],
        ["podman", "inspect", "--type=container", "x"],
        ["podman", "logs", "-n", "5", "x"],
        ["podman", "ps", "--format", "json"],
        ["podman", "--url=tcp://127.0.0.1:{PORT}", "ps"],
    ):
        rc("runtimes", argv)

    # ---- journalctl / systemctl --------------------------------------------------------------
    for argv in (
        ["journalctl", "-D", "{A}"],
        ["journalctl", "--directory={A}"],
        ["journalctl", "--file={O}"],
        ["journalctl", "--root=/"],
        ["journalctl", "-M", "x"],
        ["journalctl", "-f"],
        ["journalctl", "--follow"],
        ["journalctl", "--rotate"],
        ["journalctl", "--vacuum-size=1"],
        ["journalctl", "--flush"],
        ["journalctl", "--setup-keys"],
        ["journalctl", "--update-catalog"],
        ["journalctl", "--cursor-file={M}/cur"],
        ["journalctl", "--output=export"],
        ["journalctl", "-o", "json-pretty"],
        ["journalctl", "--lines=all"],
        ["journalctl", "-n", "5", "--merge"],
        ["journalctl", "-g", "--rotate"],
        ["journalctl", "--grep=(a+)+$"],
        ["journalctl", "-u", "x", "--unit=../../etc"],
        ["journalctl", "--fol"],
        ["journalctl", "--vac=1"],
        ["journalctl", "-b", "-1", "--no-pager"],
        ["journalctl", "--since=today", "--until=now"],
        ["journalctl", "/usr/bin/bash"],
        ["journalctl", "_PID=1"],
        ["journalctl", "--image={O}"],
        ["journalctl", "--namespace=*"],
        ["journalctl", "--sync"],
        ["journalctl", "--relinquish-var"],
        ["systemctl", "-H", "x", "status"],
        ["systemctl", "--host=x", "status"],
        ["systemctl", "-M", "x", "status"],
        ["systemctl", "--root=/", "cat", "x"],
        ["systemctl", "start", "x"],
        ["systemctl", "status", "--now", "x"],
        ["systemctl", "daemon-reload"],
        ["systemctl", "kill", "x"],
        ["systemctl", "set-property", "x", "a=b"],
        ["systemctl", "edit", "x"],
        ["systemctl", "link", "{A}/x.service"],
        ["systemctl", "show", "-p", "Environment", "*"],
        ["systemctl", "cat", "*"],
        ["systemctl", "status", "--lines=100000000"],
        ["systemctl", "-p", "status", "stop", "x"],
        ["systemctl", "show", "--property=Environment", "--value", "x"],
        ["systemctl", "status", "--ho=x"],
        ["systemctl", "--user", "status"],
        ["systemctl", "status", "-l", "--", "--host=x"],
        ["systemctl", "list-units", "--type=service", "--state=running", "--image=x"],
    ):
        rc("systemd-journal", argv)

    # ---- nvidia-smi -----------------------------------------------------------------------
    for argv in (
        ["-r"],
        ["-pm", "1"],
        ["-pl", "100"],
        ["-c", "3"],
        ["-e", "0"],
        ["-ac", "1,1"],
        ["-lgc", "1,1"],
        ["--gpu-reset"],
        ["-f", "{M}/nv"],
        ["-q", "-f", "{M}/nv"],
        ["-q", "--filename={M}/nv"],
        ["-l", "1"],
        ["-lms", "1"],
        ["drain", "-p", "0", "-m", "1"],
        ["mig", "-cgi", "1"],
        ["-mig", "1"],
        ["nvlink", "-sc", "0bz"],
        ["nvlink", "-r", "0"],
        ["topo", "-m", "-i", "0", "-r"],
        ["-i", "0", "-r"],
        ["--id=0", "--gpu-reset"],
        ["-i", "0", "drain"],
        ["conf-compute", "-srs", "1"],
        ["vgpu", "-q"],
        ["-q", "-d", "PERFORMANCE", "--loop=1"],
        ["--persistence-mode=1"],
        ["--power-limit=1"],
        ["--compute-mode=1"],
        ["-i", "0", "-c", "1"],
        ["nvlink", "-c", "-i", "0", "-r"],
        ["-d", "x", "-r"],
        ["-s"],
        ["--query-gpu=name", "--format=csv", "-f", "{M}/q"],
    ):
        rc("nvidia-smi", ["nvidia-smi", *argv])

    # ---- environment leakage ------------------------------------------------------------------
    for argv in (
        ["env"],
        ["printenv"],
        ["printenv", "RT_AGENT_ENV"],
        ["printenv", "HF_TOKEN"],
        ["printenv", "RT_CHILD"],
        ["ps", "-ef"],
        ["ps", "-efww"],
        ["ps", "-p", "{PID}", "-o", "pid,args"],
        ["ps", "-efH"],
        ["ps", "-e", "-o", "args"],
        ["id"],
        ["whoami"],
        ["uname", "-a"],
        ["hostname"],
        ["cat", "/proc/self/environ"],
        ["grep", "-a", "RT", "/proc/{PID}/environ"],
        ["ps", "-o", "pid,args:1000", "-p", "{PID}"],
    ):
        rc("env-leak", argv)
    add("env-leak", "read_file", {"path": "/proc/{PID}/environ"})
    add("env-leak", "serving_processes", {})
    add("env-leak", "gpu_info", {})

    # ---- network ---------------------------------------------------------------------------
    for argv in (
        ["kubectl", "get", "pods", "-o", "json"],
        ["kubectl", "get", "nodes", "-o", "json", "-A"],
        ["git", "-C", "{A}/repo", "log", "http://127.0.0.1:{PORT}/"],
        ["git", "-C", "{A}/repo", "show", "origin/main"],
        ["journalctl", "--url=http://127.0.0.1:{PORT}"],
        ["ls", "/dev/tcp/127.0.0.1/{PORT}"],
        ["cat", "/dev/tcp/127.0.0.1/{PORT}"],
        ["docker", "-H", "tcp://127.0.0.1:{PORT}", "ps"],
        ["grep", "x", "/dev/tcp/127.0.0.1/{PORT}"],
        ["file", "/dev/tcp/127.0.0.1/{PORT}"],
    ):
        rc("network", argv)
    add("network", "read_file", {"path": "/dev/tcp/127.0.0.1/{PORT}"})
    add("network", "parse_config", {"path": "http://127.0.0.1:{PORT}/x.json"})

    # ---- writes / creation / truncation ------------------------------------------------------
    for argv in (
        ["sort", "-o", "{A}/a.txt", "{A}/a.txt"],
        ["uniq", "{A}/a.txt", "{A}/a.txt"],
        ["sed", "-i", "1d", "{A}/a.txt"],
        ["sed", "-n", "1w {A}/a.txt", "{A}/a.txt"],
        ["find", "{A}", "-delete"],
        ["find", "{A}", "-fprint", "{M}/f"],
        ["find", "{A}", "-exec", "touch", "{M}/fe", ";"],
        ["find", "{A}", "-fls", "{M}/fl"],
        ["find", "{A}", "-okdir", "id", ";"],
        ["find", "{A}", "-fprintf", "{M}/ff", "%p"],
        ["find", "-D", "exec", "{A}"],
        ["git", "-C", "{A}/repo", "branch", "newbranch"],
        ["git", "-C", "{A}/repo", "tag", "newtag"],
        ["git", "-C", "{A}/repo", "tag", "-l", "-f", "v1"],
        ["git", "-C", "{A}/repo", "branch", "-l", "-D", "master"],
        ["git", "-C", "{A}/repo", "log", "--output={A}/a.txt"],
        ["git", "-C", "{A}/repo", "rev-parse", "--git-path", "index.lock"],
        ["git", "-C", "{A}/repo", "ls-files", "--debug"],
        ["git", "-C", "{A}/repo", "show", "HEAD", "--", "x"],
        ["git", "-C", "{A}/repo", "describe", "--dirty=x"],
        ["git", "-C", "{A}/repo", "describe", "--broken"],
        ["git", "-C", "{B}/repo", "describe", "--always", "--dirt"],
        ["tail", "-c", "0", "{A}/a.txt"],
        ["head", "-c", "0", "{A}/a.txt"],
        ["date", "-s", "@0"],
        ["hostname", "x"],
        ["ldconfig"],
        ["nvidia-smi", "-f", "{A}/a.txt"],
        ["journalctl", "--vacuum-time=1s"],
        ["sort", "-u", "-o{A}/a.txt", "{A}/a.txt"],
    ):
        rc("writes", argv)

    # ---- resource exhaustion ----------------------------------------------------------------
    for argv in (
        ["cat", "{A}/big9m.txt"],
        ["head", "-c", "100000000", "{A}/big9m.txt"],
        ["tail", "-n", "5", "{A}/big9m.txt"],
        ["wc", "-c", "{A}/sparse.bin"],
        ["md5sum", "{A}/sparse.bin"],
        ["sha256sum", "{A}/sparse.txt"],
        ["head", "-c", "50", "{A}/sparse.bin"],
        ["tail", "-c", "50", "{A}/sparse.txt"],
        ["cat", "{A}/sparse.txt"],
        ["sort", "{A}/sparse.txt"],
        ["uniq", "{A}/sparse.bin"],
        ["grep", "x", "{A}/sparse.bin"],
        ["file", "{A}/sparse.bin"],
        ["cat", "{A}/fifo"],
        ["head", "{A}/fifo"],
        ["grep", "x", "{A}/fifo"],
        ["wc", "{A}/fifo"],
        ["tail", "{A}/fifo"],
        ["md5sum", "{A}/fifo"],
        ["file", "{A}/fifo"],
        ["find", "{A}/deep"],
        ["ls", "-R", "{A}/deep"],
        ["grep", "-r", "leaf", "{A}/deep"],
        ["grep", "-r", "line", "{A}/wide"],
        ["cat", "{A}/manylines.txt"],
        ["sort", "{A}/manylines.txt"],
        ["uniq", "-c", "{A}/manylines.txt"],
        ["grep", "-c", "x", "{A}/manylines.txt"],
        ["sort", "{A}/big9m.txt"],
        ["grep", "-E", "(a*)*b", "{A}/longline.txt"],
        ["find", "/", "-name", "x"],
        ["ls", "-R", "/"],
        ["grep", "-r", "x", "/"],
        ["cat"] + ["{A}/a.txt"] * 64,
        ["cat"] + ["{A}/a.txt"] * 65,
        ["head", "-n", "99999999999999999999", "{A}/a.txt"],
    ):
        rc("resource", argv)
    for tool, args in (
        ("read_file", {"path": "{A}/sparse.bin"}),
        ("read_file", {"path": "{A}/fifo"}),
        ("read_file", {"path": "{A}/big9m.txt"}),
        ("grep", {"pattern": "x", "path": "{A}/sparse.txt"}),
        ("grep", {"pattern": "x", "path": "{A}/fifo"}),
        ("grep", {"pattern": "leaf", "path": "{A}/deep"}),
        ("grep", {"pattern": "line", "path": "{A}/wide"}),
        ("glob", {"pattern": "{A}/**/**/**/*"}),
        ("glob", {"pattern": "{A}/deep/" + "*/" * 150 + "*"}),
        ("list_dir", {"path": "{A}/wide"}),
        ("list_dir", {"path": "{A}/deep/" + "d/" * 199}),
        ("parse_config", {"path": "{A}/fifo", "format": "json"}),
        ("parse_config", {"path": "{A}/sparse.bin", "format": "json"}),
        ("grep", {"pattern": "a", "path": "{A}/longline.txt"}),
        ("read_file", {"path": "{A}/manylines.txt"}),
    ):
        add("resource", tool, args)

    # ---- regex DoS --------------------------------------------------------------------------
    for pat in [
        "(a+)+$",
        "(a|a)*b",
        "(a|aa)*c",
        "a{1000}{1000}",
        "((a{100}){100}){100}",
        "(.*){1000}",
        "x" * 200000,
        "(?=a)",
        "(a)\\1",
        "[" * 1000,
        "\\p{L}{1000}",
        ".{65535}",
        "(a?){5000}a{5000}",
        "(?i)" + "[a-z]" * 5000,
        "|".join(f"w{i}" for i in range(30000)),
        "(\\w+\\s?)*$",
        "^(([a-z])+.)+[A-Z]([a-z])+$",
    ]:
        add("regex-dos", "grep", {"pattern": pat, "path": "{A}/longline.txt"})
    for pat in ["\\(a*\\)*\\1b", "\\(a\\|aa\\)*\\1\\1c"]:
        rc("regex-dos", ["grep", pat, "{A}/longline.txt"])
        rc(
            "regex-dos",
            [
                "grep",
                "-E",
                pat.replace("\\(", "(").replace("\\)", ")").replace("\\|", "|"),
                "{A}/longline.txt",
            ],
        )
    rc("regex-dos", ["journalctl", "--grep=(a+)+$"])

    # ---- config parser bombs ------------------------------------------------------------------
    from . import fixtures

    for p in sorted((fixtures.A / "cfg").iterdir()) if (fixtures.A / "cfg").exists() else []:
        add("config-bombs", "parse_config", {"path": "{A}/cfg/" + p.name})
    for name, fmt in (
        ("lol.yaml", "json"),
        ("deep.json", "yaml"),
        ("bigint.json", "toml"),
        ("ini.ini", "systemd"),
        ("cont.service", "dotenv"),
        ("deep.toml", "ini"),
        ("recursive.yaml", "yaml"),
        ("big.env", "systemd"),
    ):
        add("config-bombs", "parse_config", {"path": "{A}/cfg/" + name, "format": fmt})
    add("config-bombs", "parse_config", {"path": "{A}/cfg/x@.service", "instance": "../../etc"})
    add("config-bombs", "parse_config", {"path": "{A}/sec/vllm.service", "instance": "a" * 129})

    # ---- schema / tool abuse -------------------------------------------------------------------
    for tool, args in (
        ("nope", {}),
        ("read_file", {}),
        ("read_file", {"path": 1}),
        ("read_file", {"path": None}),
        ("read_file", {"path": "{A}/a.txt", "evil": "x"}),
        ("read_file", {"path": "{A}/a.txt" + "/" * 1000000}),
        ("read_file", {"path": "x" * 5000000}),
        ("read_file", {"path": "{A}/a.txt\x00/etc/passwd"}),
        ("read_file", {"path": ["{O}"]}),
        ("read_file", {"path": {"$ref": "{O}"}}),
        ("read_file", {"path": "{A}/a.txt", "offset": -1}),
        ("read_file", {"path": "{A}/a.txt", "max_bytes": 10**30}),
        ("run_command", {"argv": []}),
        ("run_command", {"argv": "cat {O}"}),
        ("run_command", {"argv": [1, 2]}),
        ("run_command", {"argv": ["cat", "{A}/a.txt"], "timeout_s": float("nan")}),
        ("run_command", {"argv": ["cat", "{A}/a.txt"], "timeout_s": float("inf")}),
        ("run_command", {"argv": ["cat", "{A}/a.txt"], "timeout_s": 1e308}),
        ("run_command", {"argv": ["cat", "{A}/a.txt"], "timeout_s": -1}),
        ("run_command", {"argv": ["cat", "{A}/a.txt"], "timeout_s": "5"}),
        ("run_command", {"argv": ["cat", "{A}/a.txt"], "timeout_s": True}),
        ("run_command", {"argv": ["cat"] + ["{A}/a.txt"] * 100000}),
        ("run_command", {"argv": ["echo", "x" * 3000000]}),
        ("run_command", {"argv": ["cat", "x" * 300000]}),
        ("run_command", {"argv": ["cat", "{A}/a.txt"], "env": {"LD_PRELOAD": "x"}}),
        ("run_command", {"argv": ["cat", "{A}/a.txt"], "cwd": "{OUTD}"}),
        ("grep", {"pattern": "x", "path": "{A}", "max_matches": 10**12}),
        ("grep", {"pattern": "x", "path": "{A}", "max_matches": 0}),
        ("grep", {"pattern": None, "path": "{A}"}),
        ("glob", {"pattern": ""}),
        ("glob", {"pattern": "/"}),
        ("glob", {"pattern": "**"}),
        ("list_dir", {"path": ""}),
        ("parse_config", {"path": "{A}/a.txt", "format": "pickle"}),
        ("serving_processes", {"pid": 1}),
        ("gpu_info", {"x": 1}),
        ("read_file", {"path": "\udcff"}),
        ("read_file", {"path": "{A}/\udcff\udcfe"}),
        ("list_dir", {"path": "/\ud800"}),
    ):
        add("schema-abuse", tool, args)

    # ---- unicode / normalization ------------------------------------------------------------
    for p in [
        "{A}\uff0f..\uff0f..\uff0foutside/canary.txt",
        "{A}/\u2215..\u2215link",
        "{A}/%2e%2e/%2e%2e/outside/canary.txt",
        "{A}/..\u200b/..\u200b/outside/canary.txt",
        "{A}/ link",
        "{A}/link ",
        "{A}/link\t",
        "{A}/LINK",
        "{A}/caf\u00e9.txt",
        "{A}/cafe\u0301.txt",
        "{A}/\u202elink",
        "{A}/.\u2024/outside",
        "{A}/..;/link",
        "{A}/..\\..\\outside\\canary.txt",
        "{A}/\u0000link",
        "{H}/.SSH/id_rsa",
        "{H}/.ssh/ID_RSA",
        "{H}/.ssh\u200b/id_rsa",
        "{H}/.\u0073sh/id_rsa",
        "{H}/.netrc ",
        "{H}/.Netrc",
        "{A}/\ufeffa.txt",
        "\u2044{A}/a.txt",
        "{A}/bidi.txt",
    ]:
        add("unicode-paths", "read_file", {"path": p}, root="home")
        rc("unicode-paths", ["cat", p], root="home")

    # ---- races ------------------------------------------------------------------------------
    for tool, args in (
        ("run_command", {"argv": ["cat", "{V}/race"]}),
        ("run_command", {"argv": ["head", "-c", "200", "{V}/race"]}),
        ("run_command", {"argv": ["grep", "-H", "RT", "{V}/race"]}),
        ("run_command", {"argv": ["sort", "{V}/race"]}),
        ("run_command", {"argv": ["file", "{V}/race"]}),
        ("run_command", {"argv": ["cat", "{V}/dir/canary.txt"]}),
        ("run_command", {"argv": ["grep", "-r", "RT", "{V}/dir"]}),
        ("run_command", {"argv": ["ls", "-la", "{V}/dir/"]}),
        ("read_file", {"path": "{V}/race"}),
        ("grep", {"pattern": "RT", "path": "{V}/dir"}),
        ("list_dir", {"path": "{V}/dir"}),
        ("run_command", {"argv": ["uniq", "{V}/race"]}),
    ):
        add("race-links", tool, args, race="swap-B")
    for tool, args in (
        ("run_command", {"argv": ["tail", "-c", "31", "{V}/flip.env"]}),
        ("run_command", {"argv": ["grep", "-o", "[A-Za-z0-9]\\{20,\\}", "{V}/flip.env"]}),
        ("run_command", {"argv": ["sed", "-n", "1p", "{V}/flip.env"]}),
        ("run_command", {"argv": ["cut", "{V}/flip.env"]}),
        ("run_command", {"argv": ["sort", "{V}/flip.env"]}),
    ):
        for where in ("B", "A"):
            add("toctou-copy", tool, args, race="flip-" + where)
    for argv in (
        ["cat", "/etc/race.txt"],
        ["tail", "-c", "40", "/etc/race.txt"],
        ["grep", "-h", "RT", "/etc/race.txt"],
    ):
        add("toctou-copy", "run_command", {"argv": argv}, root="snap", race="snapswap")

    # ---- serving processes ------------------------------------------------------------------
    add("serving-procs", "serving_processes", {})
    for argv in (
        ["ps", "-p", "{PID}", "-o", "args"],
        ["ps", "-ef"],
        ["ps", "-p", "{PID}", "-o", "args:40"],
        ["ps", "-p", "{PID}", "-o", "args:75"],
        ["ps", "-p", "{PID}", "-o", "args:90"],
        ["ps", "-C", "python3", "-o", "cmd"],
        ["ps", "-p", "{PID}", "-f", "-w"],
    ):
        rc("serving-procs", argv)
    return at
