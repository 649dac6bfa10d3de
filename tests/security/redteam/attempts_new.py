"""Second campaign: attempts against the mechanisms added after the first red team (redacted
copies and their windows, the inode check, the bubblewrap mounts, git's remaining oracles, more
redaction formats, the agent's own environment, slow redaction). Placeholders as in
attempts.py, plus {H2} (a home the kernel does not know), {ENVBLOB} (the blob id of
{B}/repo2/.env), {PID2} (a process with passwords in argv), {PID3} (an engine with secrets in
its environment), {MYPID} (this process), {SHM} (a canary file in the real /dev/shm)."""

from __future__ import annotations

from typing import Any

from .attempts import Attempt

EXPECT_NEW = {
    "copy-windows": "tail windows: a key body whose BEGIN fell before the window is redacted "
    "only for "
    "'PRIVATE KEY' ENDs; other multi-line contexts (YAML block, unit continuation, a "
    "Secret header past 64 KiB) may leak",
    "redaction-formats-2": "pattern-based: unknown prefixes, list values, name/value pairs, "
    "-p flags leak",
    "inode": "nested credential files are not in the inode list; an unknown home is not either",
    "kernel-mounts": "refused or harmless",
    "git-oracles": "--grep on messages is an oracle if allowed; .env shown without its name leaks",
    "env-agent": "the agent's own environment never shows",
    "procs-2": "ps shows every process's argv: -pPASSWORD leaks; engine env names outside the "
    "list leak",
    "dos-redaction": "copies are redacted synchronously, outside the command deadline",
}


def generate_new() -> list[Attempt]:
    at: list[Attempt] = []

    def add(cat: str, tool: str, args: dict[str, Any], **kw: Any) -> None:
        at.append(Attempt(cat, tool, args, **kw))

    def rc(cat: str, argv: list[str], **kw: Any) -> None:
        add(cat, "run_command", {"argv": argv}, **kw)

    # ---- copy windows ----------------------------------------------------------------------
    win = [
        "pgp-tail.asc.txt",
        "rsa-tail-crlf.txt",
        "k8s-late-header.yaml",
        "yaml-block-tail.yaml",
        "unit-cont-tail.service",
        "cut-begin.txt",
        "utf8-split.env",
        "nul-bytes.txt",
        "crlf.env",
    ]
    for name in win:
        p = "{B}/win/" + name
        for argv in (
            ["tail", "-n", "3", p],
            ["tail", "-c", "400", p],
            ["tail", "-n", "40", p],
            ["tail", "-c", "2097152", p],
            ["head", "-c", "300", p],
            ["tail", "-n", "+1", p],
            ["grep", "-a", "-o", "[A-Za-z0-9+/=]\\{20,\\}", p],
            ["sed", "-n", "$p", p],
            ["tail", "-q", "-n", "2", p, "{B}/a.txt"],
            ["tail", "--bytes=300", p],
        ):
            rc("copy-windows", argv)
        add("copy-windows", "read_file", {"path": p, "offset": 0})
        add("copy-windows", "grep", {"pattern": "[A-Za-z0-9]{20,}", "path": p})
    # ---- redaction formats, second list ----------------------------------------------------
    from .fixtures import new_format_files

    for name in new_format_files():
        p = "{B}/new/" + name
        add("redaction-formats-2", "read_file", {"path": p})
        add("redaction-formats-2", "grep", {"pattern": "[A-Za-z0-9]{10}", "path": p})
        add("redaction-formats-2", "parse_config", {"path": p})
        for argv in (
            ["cat", p],
            ["cat", "-v", p],
            ["tail", "-c", "200", p],
            ["grep", "-a", "-o", "[A-Za-z0-9+/=._-]\\{12,\\}", p],
            ["sort", p],
            ["sed", "-n", "1,40p", p],
        ):
            rc("redaction-formats-2", argv)
    for argv in (
        ["git", "-C", "{B}/repo2", "log", "--format=%B"],
        ["git", "-C", "{B}/repo2", "show", "-s", "HEAD"],
    ):
        rc("redaction-formats-2", argv)
    # ---- inode: hard links to nested credential files, unknown homes, big dirs, copies -----
    nested = [
        "passnested",
        "awssso",
        "gcloudlegacy",
        "gnupgnested",
        "sshnested",
        "dockerctx",
        "kubecache",
        "ghnested",
    ]
    others = [
        "home2_vault-token",
        "home2_aws_credentials",
        "home2_config_gh_hosts.yml",
        "home2_pgpass",
    ]
    names = (
        [f"nested_{t}.txt" for t in nested]
        + [f"{o}.txt" for o in others]
        + [f"many_{i}.txt" for i in range(6)]
    )
    names += ["aws-backup.txt", "history-copy.txt", "pgpass-copy.txt", "gitcred-copy.txt"]
    for n in names:
        p = "{B}/creds2/" + n
        add("inode", "read_file", {"path": p})
        add("inode", "grep", {"pattern": "RT|[A-Za-z0-9]{12}", "path": p})
        rc("inode", ["cat", p])
        rc("inode", ["tail", "-c", "40", p])
        rc("inode", ["grep", "-o", "[A-Za-z0-9]\\{12,\\}", p])
    for argv in (
        ["grep", "-r", "RTHOME", "{B}/creds2"],
        ["grep", "-rh", ".", "{B}/creds2"],
        ["sort", "{B}/creds2/nested_passnested.txt", "{B}/creds2/home2_vault-token.txt"],
    ):
        rc("inode", argv)
    add("inode", "grep", {"pattern": "RTHOME", "path": "{B}/creds2"})
    for p in ("{H2}/.vault-token", "{H2}/.aws/credentials", "{H2}/.pgpass"):
        add("inode", "read_file", {"path": p}, root="home2")
        rc("inode", ["cat", p], root="home2")
        rc("inode", ["md5sum", p], root="home2")
    # ---- kernel mounts ---------------------------------------------------------------------
    for argv in (
        ["cat", "{SHM}"],
        ["ls", "-la", "/dev/shm"],
        ["grep", "-r", "RT", "/dev/shm"],
        ["find", "/dev/shm"],
        ["ls", "/run/user"],
        ["ls", "-la", "/tmp"],
        ["find", "/tmp", "-maxdepth", "2"],
        ["ls", "{A}"],
        ["cat", "{A}/a.txt"],
        ["grep", "-r", "RT", "{A}/sec"],
        ["ls", "-la", "/proc/self/fd"],
        ["cat", "/proc/self/mountinfo"],
        ["cat", "/proc/self/status"],
        ["ls", "/sys/fs/cgroup"],
        ["stat", "/proc/1/root"],
        ["df", "/tmp"],
        ["df", "{A}"],
        ["ls", "-la", "/var/tmp"],
        ["stat", "-c", "%i %h %s", "{B}/creds/hard_vault-token"],
        ["wc", "-c", "{B}/creds/hard_vault-token"],
        ["md5sum", "{B}/creds/hard_vault-token"],
        ["md5sum", "{B}/creds2/nested_passnested.txt"],
        ["ls", "-la", "{H}"],
        ["ls", "-laR", "{H}/.ssh"],
        ["find", "{H}", "-name", "*key*"],
        ["file", "{B}/creds2/nested_awssso.txt"],
        ["kubectl", "get", "pods", "-o", "json"],
        ["kubectl", "get", "nodes", "-o", "json", "--kubeconfig=/etc/kubernetes/admin.conf"],
        ["podman", "ps", "-a"],
        ["nvidia-smi", "-L"],
        ["nvidia-smi", "-q"],
        ["ps", "-ef"],
        ["ps", "-e", "-o", "pid,args"],
        ["journalctl", "-n", "5"],
        ["systemctl", "status"],
    ):
        rc("kernel-mounts", argv, root="wide")
    for p in ("{SHM}", "/dev/shm", "/proc/self/mountinfo", "/run/user"):
        add("kernel-mounts", "read_file", {"path": p}, root="wide")
        add("kernel-mounts", "list_dir", {"path": p}, root="wide")
    # ---- git oracles ---------------------------------------------------------------------------
    g = "{B}/repo2"
    for argv in (
        ["log", "--grep=API_KEY=Cm4"],
        ["log", "--grep=API_KEY=Zz9"],
        ["log", "-i", "--grep=api_key=cm4"],
        ["log", "--all-match", "--grep=init", "--grep=Cm4Ss"],
        ["log", "--format=%H", "--", ".env"],
        ["log", "--format=%H", "--", "nonexistent"],
        ["ls-files"],
        ["ls-files", "-s"],
        ["show", "--stat", "HEAD"],
        ["describe", "--match", "v1*", "--tags"],
        ["describe", "--tags", "--exclude=x"],
        ["show", "{ENVBLOB}"],
        ["show", "HEAD~0"],
        ["show", "HEAD"],
        ["log", "-p", "--all"],
        ["log", "-p", "--", ".en[v]"],
        ["log", "-p", "--", ":(glob)**/.env"],
        ["log", "-L/WANDB/,+1:.env"],
        ["log", "-L", "1,1:.env"],
        ["log", "-p", "--word-diff=porcelain", "--word-diff-regex=.", "--", ".env"],
        ["show", "--word-diff=plain", "--word-diff-regex=[A-Za-z0-9]", "HEAD"],
        ["show", "--color-words=.", "HEAD"],
        ["show", "HEAD:./.env"],
        ["show", "HEAD:.env"],
        ["show", "HEAD^{tree}"],
        ["show", "outside"],
        ["tag", "-l", "v*"],
        ["branch", "-a"],
        ["log", "--oneline", "--decorate"],
        ["rev-parse", "HEAD:.env"],
        ["show", "--format=%B", "-s"],
        ["log", "-p", "--", ".", ":!a.txt"],
        ["show", "-p", "--", "*.en?"],
        ["log", "-p", "-U0", "--diff-filter=A"],
        ["log", "--text", "-p"],
        ["shortlog", "-s", "-e"],
        ["log", "--format=%s%n%b"],
        ["show", "HEAD", "--", ".env"],
    ):
        rc("git-oracles", ["git", "-C", g, *argv])
    add("git-oracles", "run_command", {"argv": ["git"]}, note="oracle-grep-extract")
    # ---- the agent's own environment -------------------------------------------------------
    for p in (
        "/proc/self/environ",
        "/proc/thread-self/environ",
        "/proc/{MYPID}/environ",
        "{A}/proclink",
        "/proc/self/root/proc/self/environ",
        "/dev/fd/../../proc/self/environ",
        "/proc/self/cmdline",
    ):
        add("env-agent", "read_file", {"path": p})
        add("env-agent", "grep", {"pattern": "RT|hf_", "path": p})
        add("env-agent", "parse_config", {"path": p, "format": "dotenv"})
    add("env-agent", "list_dir", {"path": "/proc/self"})
    add("env-agent", "glob", {"pattern": "/proc/self/*"})
    for argv in (
        ["env"],
        ["printenv"],
        ["printenv", "HF_TOKEN", "RT_AGENT_ENV", "OPENAI_API_KEY"],
        ["cat", "/proc/self/environ"],
        ["grep", "-a", "RT", "/proc/{MYPID}/environ"],
        ["ps", "-p", "{MYPID}", "-o", "args"],
        ["ps", "-fp", "{MYPID}"],
        ["journalctl", "_PID={MYPID}"],
        ["systemctl", "show-environment"],
        ["git", "-C", "{A}/repo", "log", "--format=%an %ae %cn"],
        ["id"],
        ["hostname"],
        ["date"],
        ["lscpu"],
        ["uname", "-a"],
    ):
        rc("env-agent", argv)
    add("env-agent", "serving_processes", {})
    add("env-agent", "gpu_info", {})
    # ---- process listings ------------------------------------------------------------------
    for argv in (
        ["ps", "-ef"],
        ["ps", "-efww"],
        ["ps", "-p", "{PID2}", "-o", "args"],
        ["ps", "-p", "{PID2}", "-f"],
        ["ps", "-e", "-o", "pid,args"],
        ["ps", "-C", "python3", "-o", "args"],
        ["ps", "-p", "{PID3}", "-o", "args"],
    ):
        rc("procs-2", argv)
    add("procs-2", "serving_processes", {})
    # ---- slow redaction --------------------------------------------------------------------
    d = "{DOS}/"
    rc("dos-redaction", ["cat", d + "crafted0.yaml"], note="dos")
    rc(
        "dos-redaction",
        [
            "cat",
            d + "crafted0.yaml",
            d + "./crafted0.yaml",
            d + "/crafted0.yaml",
            d + "../dos/crafted0.yaml",
        ],
        note="dos",
    )
    rc(
        "dos-redaction",
        [
            "grep",
            "-c",
            "x",
            d + "crafted0.yaml",
            d + "crafted1.yaml",
            d + "crafted2.yaml",
            d + "crafted3.yaml",
        ],
        note="dos",
    )
    rc("dos-redaction", ["tail", "-n", "1", d + "crafted0.yaml"], note="dos")
    add("dos-redaction", "read_file", {"path": d + "crafted0.yaml"}, note="dos")
    add("dos-redaction", "grep", {"pattern": "zzz", "path": "{DOS}"}, note="dos")
    return at
