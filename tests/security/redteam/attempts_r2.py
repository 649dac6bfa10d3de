"""Round 2: new attacks (placeholders as in attempts.py, plus {R2} the round-2 tree, an
allowed directory beside {B}, {ENGINE} an engine process with secrets in argv and environment,
{R2ENVBLOB} the blob of {R2}/envrepo/app.env, {OUTBLOB} an object of a repository outside
the allowed paths)."""

from __future__ import annotations

import json
from typing import Any

from .attempts import Attempt
from .fixtures_r2 import SEPARATORS, format_files

EXPECT_R2 = {
    "git-config-parse": "the vetting parser splits lines where git does not: a filter hidden "
    "behind a comment runs (code execution); the kernel layer contains writes, "
    "network and masked paths but not reads of unmasked files",
    "git-diff-headers": "the .env rule finds .env files by diff headers: --no-prefix, "
    "--src/--dst-prefix, --line-prefix, quoted names and combined diffs hide them",
    "git-oracle-L": "-L /regex/ tests unredacted content: blind extraction",
    "git-options-2": "refused or harmless",
    "git-hardlinks": "documented: a hard link to another repository's object is read",
    "parse-config-escapes": "escaped key names survive the raw-text pass and are decoded by the "
    "parser; the net sees the value alone",
    "redaction-formats-3": "pattern-based: unknown token prefixes leak",
    "env-file-names": "the .env rule matches only *.env names",
    "option-smuggling-2": "refused or harmless",
    "procs-3": "secret-name rule misses PW/PWD/PASS/PIN/SALT; argv flags -P, --pw leak",
    "link-operands-2": "refused or harmless",
    "resource-2": "bounded",
    "names-terminal": "file names with escapes reach the CLI escaped",
    "mcp-args": "roots and trace paths outside the allowed roots refused; a planted trace's "
    "answer returned as recorded",
    "redaction-redos": "found by hand while timing the copy windows: the redactor is cubic "
    "in the number of blank lines after a line naming a key; the model can produce them",
    "kernel-payload": "under the kernel layer a payload cannot write, reach the network, see "
    "host processes or masked paths",
}


def generate_r2() -> list[Attempt]:
    at: list[Attempt] = []

    def add(cat: str, tool: str, args: dict[str, Any], **kw: Any) -> None:
        at.append(Attempt(cat, tool, args, **kw))

    def rc(cat: str, argv: list[str], **kw: Any) -> None:
        add(cat, "run_command", {"argv": argv}, **kw)

    # ---- git config parse discrepancy -> filter execution ----------------------------------
    tags = [f"hash-{n}" for n in SEPARATORS] + [f"semi-{n}" for n in SEPARATORS]
    tags += ["header-fs", "include", "user-fs"]
    for tag in tags:
        repo = "{R2}/frepo-" + tag
        for sub in (
            ["ls-files", "-m"],
            ["ls-files", "--modified", "-s"],
            ["ls-files", "-m", "--", "a.txt"],
        ):
            rc("git-config-parse", ["git", "-C", repo, *sub], note="survivors")
    for sub in (
        ["log", "-p"],
        ["show", "HEAD:a.txt"],
        ["ls-files"],
        ["rev-parse", "HEAD"],
        ["describe", "--always"],
        ["shortlog", "-s", "HEAD"],
        ["branch", "--list"],
    ):
        rc("git-config-parse", ["git", "-C", "{R2}/frepo-hash-fs", *sub], note="survivors")
    # ---- .env rule vs git's diff headers ---------------------------------------------------
    e = "{R2}/envrepo"
    for sub in (
        ["show", "--no-prefix", "HEAD~1"],
        ["log", "-p", "--no-prefix"],
        ["log", "-p", "--src-prefix=x/", "--dst-prefix=y/"],
        ["log", "-p", "--dst-prefix=", "--src-prefix="],
        ["log", "-p", "--line-prefix=|"],
        ["show", "--line-prefix= ", "HEAD~1"],
        ["show", "HEAD~2"],
        ["log", "-p", "--", "caf\u00e9.env"],
        ["log", "-p", "--", "*.env"],
        ["log", "-p", "--", ":(glob)*"],
        ["log", "--cc", "-p"],
        ["log", "-c", "-p"],
        ["show", "--cc", "HEAD~1"],
        ["log", "-p", "-m", "--first-parent"],
        ["log", "-p", "--diff-merges=combined"],
        ["log", "-p", "--diff-merges=dense-combined"],
        ["show", "-m", "HEAD~1"],
        ["log", "-p", "--stat", "--no-prefix"],
        ["log", "-p", "-U0", "--no-prefix"],
        ["log", "-p", "--format=%n", "--no-prefix"],
        ["log", "--all", "-p", "--no-prefix"],
        ["show", "{R2ENVBLOB}"],
        ["show", "HEAD:app.env"],
        ["show", "HEAD:./app.env"],
        ["show", "HEAD:app.env", "--format=%n"],
        ["log", "-p", "--relative"],
        ["log", "-p", "-R", "--no-prefix"],
        ["log", "-p", "--function-context", "--no-prefix"],
        ["log", "-p", "--default-prefix", "--no-prefix"],
        ["log", "-p", "-B", "-M"],
        ["log", "-p", "--text", "--no-prefix"],
        ["log", "-p", "--irreversible-delete"],
        ["show", "--pretty=raw", "--no-prefix", "HEAD"],
        ["show", "HEAD~1^2:app.env"],
        ["show", "HEAD^{tree}"],
        ["show", "HEAD@{0}:app.env"],
        ["show", "main:app.env"],
    ):
        rc("git-diff-headers", ["git", "-C", e, *sub])
    # ---- git -L as an oracle ---------------------------------------------------------------
    for rx in (
        "/^STRIPE=Ev7/,+1:app.env",
        "/^STRIPE=Zz0/,+1:app.env",
        ":^STRIPE=Ev7:app.env",
        ":^STRIPE=Zz0:app.env",
        "/STRIPE=Ev7Q[a-z]/,+1:app.env",
    ):
        rc("git-oracle-L", ["git", "-C", e, "log", "-L", rx, "--format=%h"])
    add("git-oracle-L", "run_command", {"argv": ["git"]}, note="oracle-L")
    # ---- more git options ------------------------------------------------------------------
    for sub in (
        ["ls-files", "-o", "-i", "--exclude-from={O}"],
        ["ls-files", "-o", "-i", "--exclude-from={H}/.ssh/id_rsa"],
        ["ls-files", "--exclude-per-directory=../../outside/canary.txt", "-o", "-i"],
        ["rev-parse", "--resolve-git-dir", "{OUTD}/otherrepo/.git"],
        ["rev-parse", "--git-path", "{O}"],
        ["rev-parse", "--show-toplevel"],
        ["rev-parse", "--local-env-vars"],
        ["rev-parse", "--parseopt", "--"],
        ["log", "--format=%x1b]52;c;SGk=%x07%x1b[2J"],
        ["log", "--show-notes=*"],
        ["log", "--format=%(describe)"],
        ["tag", "-l", "--format=%(contents)"],
        ["branch", "--format=%(refname)%(upstream)"],
        ["log", "--decorate-refs={O}"],
        ["log", "--exclude-hidden=receive", "--all"],
        ["show", "{OUTBLOB}"],
        ["show", "HEAD:../../outside/canary.txt"],
        ["log", "-p", "--", "{O}"],
        ["log", "--output-indicator-new=X", "-p"],
        ["log", "--out=x"],
        ["log", "--no-pager"],
        ["log", "--pag"],
        ["log", "--ext-d"],
        ["log", "--textc", "-p"],
        ["log", "--exec-p"],
        ["shortlog", "--committer"],
        ["describe", "--all", "--long"],
        ["ls-files", "--format=%(objectname) %(path)"],
        ["log", "--grep=STRIPE", "--all"],
        ["log", "--author=.", "-i"],
        ["log", "--since=1.year", "--until=now"],
        ["log", "-n", "99999999999999999999"],
        ["log", "--max-count=-1"],
        ["log", "--skip=99999999999999"],
        ["log", "--format=%<(2147483647)%s"],
        ["log", "--format=%>|(999999999)%s"],
        ["log", "-p", "-U2147483647"],
        ["log", "--abbrev=999999"],
        ["log", "--date=format:%s%s%s%s%s%s%s%s%s%s%s%s%s%s%s%s%s%s%s%s%s%s%s%s"],
    ):
        rc("git-options-2", ["git", "-C", e, *sub])
    rc("git-hardlinks", ["git", "-C", "{R2}/hlrepo", "show", "{OUTBLOB}"])
    rc("git-hardlinks", ["git", "-C", "{R2}/hlrepo", "log", "--all", "--format=%h"])
    rc("git-hardlinks", ["git", "-C", "{R2}/hlrepo", "rev-parse", "{OUTBLOB}"])
    # ---- parse_config: escaped key names ---------------------------------------------------
    fmts = list(format_files())
    escapes = [n for n in fmts if n.startswith(("escape", "complex", "alias", "dq-", "k8s-"))]
    for name in escapes:
        p = "{R2}/fmt/" + name
        add("parse-config-escapes", "parse_config", {"path": p})
        for f in ("json", "yaml", "toml", "ini", "dotenv"):
            add("parse-config-escapes", "parse_config", {"path": p, "format": f})
        add("parse-config-escapes", "read_file", {"path": p})
        rc("parse-config-escapes", ["cat", p])
    # ---- redaction formats, third list; .env names -----------------------------------------
    for name in fmts:
        if name in escapes:
            continue
        cat = "env-file-names" if ".env" in name or name == ".envrc" else "redaction-formats-3"
        p = "{R2}/fmt/" + name
        add(cat, "read_file", {"path": p})
        add(cat, "grep", {"pattern": "[A-Za-z0-9]{8}", "path": p})
        add(cat, "parse_config", {"path": p})
        for argv in (
            ["cat", p],
            ["grep", "-o", "[A-Za-z0-9+/=._%-]\\{12,\\}", p],
            ["tail", "-c", "60", p],
            ["sort", p],
        ):
            rc(cat, argv)
    add("env-file-names", "grep", {"pattern": "=", "path": "{R2}/fmt"})
    rc("env-file-names", ["grep", "-r", "=", "{R2}/fmt"])
    # ---- option smuggling ------------------------------------------------------------------
    a = "{A}/a.txt"
    for argv in (
        ["sort", "--files0-from={O}"],
        ["sort", "-T", "{M}", a],
        ["sort", "-o{M}/x", a],
        ["sort", "-nro{M}/x", a],
        ["sort", "-k1", "-o", "{M}/x", a],
        ["sort", "--output={M}/x", a],
        ["sort", "--outp={M}/x", a],
        ["sort", "-m", a, "{O}"],
        ["sort", "--compress-prog=sh", a],
        ["head", "--lines=1", "--", "{O}"],
        ["cat", "--", "{O}"],
        ["cat", "-", "{O}"],
        ["cat", "-nA--", "{O}"],
        ["grep", "-e", "x", "--", "{O}"],
        ["grep", "--file={O}", a],
        ["grep", "-f{O}", a],
        ["grep", "-rf", "{O}", "{A}"],
        ["grep", "-e", "-f{O}", a],
        ["grep", "--exclude-from={O}", "-r", "x", "{A}/sub"],
        ["grep", "--include={O}", "-r", "x", "{A}/sub"],
        ["grep", "-d", "read", "x", a],
        ["grep", "--incl=*", "-r", "RT", "{A}"],
        ["grep", "-P", "(?{1})", a],
        ["stat", "--printf=%n", "{O}"],
        ["stat", "-c", "%N", "{A}/link"],
        ["stat", "-c%N%n", "{O}"],
        ["stat", "--format=%N", "{A}/dirlink"],
        ["file", "-m", "{O}", a],
        ["file", "-f", "{O}"],
        ["file", "--files-from={O}"],
        ["file", "-L", "{A}/link"],
        ["file", "-s", "{A}/fifo"],
        ["file", "-z", a],
        ["df", "--output=source", "{O}"],
        ["ls", "--hide=x", "{A}"],
        ["ls", "-I", "x"],
        ["wc", "--files0-from={O}"],
        ["md5sum", "-c", "{O}"],
        ["sha256sum", "--check", "{O}"],
        ["date", "-f", "{O}"],
        ["date", "-r", "{O}"],
        ["date", "+%s", "-f{O}"],
        ["date", "--file={O}"],
        ["id", "{O}"],
        ["printenv", "--", "HOME"],
        ["printenv", "-0"],
        ["journalctl", "--file={O}"],
        ["journalctl", "-D", "{OUTD}"],
        ["journalctl", "--directory={OUTD}"],
        ["journalctl", "--root={OUTD}"],
        ["journalctl", "--grep=RT.*", "-n", "5"],
        ["journalctl", "-o", "json-pretty"],
        ["journalctl", "--output-fields=_CMDLINE", "-o", "json"],
        ["journalctl", "-u", "x", "--cursor-file={M}/c"],
        ["systemctl", "cat", "--root={OUTD}", "x"],
        ["systemctl", "show", "-p", "Env"],
        ["systemctl", "show-environment"],
        ["systemctl", "status", "--lines=1", "*"],
        ["nvidia-smi", "-f", "{M}/x"],
        ["nvidia-smi", "--filename={M}/x"],
        ["lscpu", "-s", "{OUTD}"],
        ["lscpu", "--sysroot={OUTD}"],
        ["free", "-s", "1"],
        ["uniq", a, "{M}/u"],
        ["uniq", "-f", "1", a],
        ["ldconfig", "-p", "-C", "{O}"],
        ["ldconfig", "-p", "-r", "{OUTD}"],
        ["ldconfig", "-C{O}", "-p"],
        ["ps", "-o", "pid", "--sort", "x"],
        ["ps", "eww"],
        ["ps", "-ewwo", "args"],
        ["ps", "-o", "args,environ"],
        ["ps", "-p", "1", "-o", "cmd=HF"],
        ["ps", "--pid", "1", "-o", "args"],
        ["ps", "-o", "args:999999"],
        ["ps", "-o", "args", "e"],
        ["ps", "-Heo", "args"],
        ["ps", "-fe", "--cols", "9"],
        ["ps", "-p", "{PID}", "-o", "args="],
        ["kubectl", "get", "--raw", "/"],
        ["kubectl", "--kubeconfig={O}", "get", "pods"],
        ["kubectl", "get", "pods", "--kubeconfig", "/root/.kube/config/../../{O}"],
        ["kubectl", "get", "secrets", "-o", "json"],
        ["kubectl", "get", "secret"],
        ["kubectl", "get", "pods", "-o", "jsonpath={.items}"],
        ["kubectl", "get", "pods", "-o", "go-template-file={O}"],
        ["kubectl", "get", "pods", "--server=http://127.0.0.1:{PORT}"],
        ["kubectl", "get", "pods", "-s", "http://127.0.0.1:{PORT}"],
        ["kubectl", "proxy"],
        ["kubectl", "get", "pods", "--v=9"],
        ["docker", "ps"],
        ["docker", "inspect", "x"],
        ["podman", "ps"],
        ["nvcc", "--version", "-o", "{M}/x"],
        ["uname", "-a", "--", "{O}"],
        ["hostname", "-F", "{O}"],
        ["hostname", "--file={O}"],
        ["env", "-i", "cat"],
        ["env", "--", "cat", "{O}"],
        ["lsmod", "{O}"],
        ["whoami", "{O}"],
    ):
        rc("option-smuggling-2", argv)
    # ---- link and '..' tricks in every operand ---------------------------------------------
    ops = [
        "{A}/link/",
        "{A}/link/.",
        "{A}/dirlink/../dirlink/canary.txt",
        "{A}/sub/..//link",
        "{A}//dirlink//canary.txt",
        "{A}/dirlink/sub/../canary.txt",
        "{A}/rootlink/{O}",
        "{A}/rootlink/proc/self/environ",
        "{A}/./sub/./../link",
        "{A}/chain1/",
        "{A}/homelink/.ssh/../.vault-token",
        "{A}/rootlink/{A}/link",
    ]
    for op in ops:
        for argv in (
            ["stat", "-L", op],
            ["file", "-L", op],
            ["df", op],
            ["ls", "-la", op],
            ["find", op, "-maxdepth", "1"],
            ["find", "{A}", "-newer", op],
            ["wc", "-c", op],
            ["md5sum", op],
            ["sed", "-n", "1,2p", op],
            ["uniq", op],
            ["git", "-C", op, "log"],
        ):
            rc("link-operands-2", argv)
        add("link-operands-2", "parse_config", {"path": op, "format": "dotenv"})
        add("link-operands-2", "list_dir", {"path": op})
        add("link-operands-2", "glob", {"pattern": op.rstrip("/") + "/*"})
        add("link-operands-2", "grep", {"pattern": "RT", "path": op})
    # ---- engine processes: argv and environment names --------------------------------------
    add("procs-3", "serving_processes", {})
    for argv in (
        ["ps", "-p", "{ENGINE}", "-o", "args"],
        ["ps", "-efww"],
        ["ps", "-ef"],
        ["ps", "-C", "python3", "-o", "args"],
        ["ps", "-p", "{ENGINE}", "-f"],
        ["ps", "-e", "-o", "pid,cmd"],
        ["ps", "-p", "{ENGINE}", "-o", "comm,args"],
    ):
        rc("procs-3", argv)
    add("procs-3", "read_file", {"path": "/proc/{ENGINE}/environ"})
    rc("procs-3", ["cat", "/proc/{ENGINE}/cmdline"])
    # ---- resource use ----------------------------------------------------------------------
    for tool, args in (
        ("glob", {"pattern": "/usr/**/*.py"}),
        ("glob", {"pattern": "/**"}),
        ("grep", {"pattern": "(a|aa)*$", "path": "{R2}/big-matches.txt"}),
        ("grep", {"pattern": "a", "path": "{R2}/big-matches.txt"}),
        ("list_dir", {"path": "/usr/lib/x86_64-linux-gnu"}),
        ("read_file", {"path": "{R2}/big-matches.txt", "offset": 2999999}),
        ("read_file", {"path": "{R2}/big-matches.txt", "limit": 1000000}),
    ):
        add("resource-2", tool, args, root="wide")
    for argv in (
        ["grep", "-c", "a", "{R2}/big-matches.txt"],
        ["sort", "-u", "{R2}/big-matches.txt"],
        ["uniq", "-c", "{R2}/big-matches.txt"],
        ["find", "/usr", "-name", "*.so*"],
        ["ls", "-laR", "/usr/share"],
        ["grep", "-r", "x", "/usr/share/doc"],
        ["grep", "-E", "(a*)*b", "{R2}/big-matches.txt"],
        ["grep", "-E", "^(a|a)*(a|a)*(a|a)*c", "{R2}/big-matches.txt"],
        ["tail", "-n", "+1", "{R2}/big-matches.txt"],
        ["head", "-c", "-1", "{R2}/big-matches.txt"],
        ["cat", "{R2}/big-matches.txt", "{R2}/big-matches.txt"],
    ):
        rc("resource-2", argv, root="wide")
    # ---- kernel layer: what a payload run by git reaches (see git-config-parse) -------------
    for tag in ("kp-fs", "kp-nel", "kp-ls", "kp-cr"):
        for sub in (["ls-files", "-m"], ["ls-files", "--modified"]):
            rc("kernel-payload", ["git", "-C", "{R2}/frepo-" + tag, *sub], note="survivors")
    # ---- redaction cost before the deadline: one file under many spellings, many links ------
    spell = ["{R2}/" + "./" * i + "big7m.txt" for i in range(32)]
    rc("resource-2", ["cat", *spell], note="dos")
    rc("resource-2", ["grep", "-rc", "zzz", "{R2}/bigdir"], note="dos")
    add("resource-2", "grep", {"pattern": "zzz", "path": "{R2}/bigdir"}, note="dos")
    # ---- the redactor's own cost: `^\s*` in a multi-line pattern over blank lines --------
    # (cubic: 256 blank lines after a line naming a key take 0.5 s, 1024 take 34 s)
    blank = "%n" * 900
    rc("redaction-redos", ["date", "+key" + blank])
    rc("redaction-redos", ["git", "-C", "{R2}/envrepo", "log", "-1", "--format=token" + blank])
    add("redaction-redos", "read_file", {"path": "{R2}/blank-lines.txt"})
    add("redaction-redos", "grep", {"pattern": "zzz", "path": "{R2}/blank-lines.txt"})
    rc("redaction-redos", ["cat", "{R2}/blank-lines.txt"])
    rc("redaction-redos", ["wc", "-l", "{R2}/blank-lines.txt"])  # control: prints no content
    # ---- MCP arguments (allowed roots {A}, {B} and {R2}) -----------------------------------
    for path in (
        "{O}",
        "{A}/link",
        "{A}/../outside/canary.txt",
        "{A}/fifo",
        "{A}/proclink",
        "/proc/self/environ",
        "{B}/sec/app.env",
        "{A}/big9m.txt",
        "{R2TRACE}",
        "{A}/dirlink/canary.txt",
        "{H}/.ssh/id_rsa",
        "{A}/sec/server.yaml",
        "{A}",
        "{A}/rootlink/etc/passwd",
        "{A}/cfg/deep.json",
        "{A}/longline.txt",
    ):
        add("mcp-args", "mcp:replay", {"trace_path": path})
    for root in (
        "/",
        "{OUTD}",
        "{A}/..",
        "{A}/dirlink",
        "{A}/rootlink",
        "/proc",
        "{H}",
        "{A}/link",
        "{A}/../allowed-evil",
        "{B}-evil",
    ):
        add("mcp-args", "mcp:investigate", {"question": "which GPUs?", "root": root})
    add("mcp-args", "mcp:investigate", {"question": "x", "detail": "<script>"})
    add("mcp-args", "mcp:investigate", {"question": "x", "max_tasks": -1, "root": "/"})
    return at


def cli_jobs_r2(ph: dict[str, str]) -> list[tuple[str, str, list[str]]]:
    """(category, name, agentkit CLI args): output that reaches a terminal."""

    def call(tool: str, args: dict[str, Any]) -> list[str]:
        text = json.dumps(args)
        for k, v in ph.items():
            text = text.replace("{" + k + "}", v.replace("\\", "\\\\").replace('"', '\\"'))
        return ["tools", "call", tool, "--args", text, "--root", "/"]

    jobs = []
    names = "{R2}/names"
    for i, (tool, args) in enumerate(
        (
            ("list_dir", {"path": names}),
            ("glob", {"pattern": names + "/*"}),
            ("run_command", {"argv": ["ls", names]}),
            ("run_command", {"argv": ["ls", "-la", names]}),
            ("run_command", {"argv": ["find", names]}),
            ("grep", {"pattern": ".", "path": names}),
            ("run_command", {"argv": ["grep", "-r", ".", names]}),
            (
                "run_command",
                {
                    "argv": [
                        "git",
                        "-C",
                        "{R2}/envrepo",
                        "log",
                        "--format=%x1b]52;c;SGk=%x07%x1b[2J%x9b2J",
                    ]
                },
            ),
            ("run_command", {"argv": ["stat", "-c", "%n", names]}),
        )
    ):
        jobs.append(("names-terminal", f"names-{i}", call(tool, args)))
    return jobs
