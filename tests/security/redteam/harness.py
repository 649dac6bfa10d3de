"""Red-team harness: every attempt run under sandbox="kernel" and sandbox="allowlist".

Usage: python -m tests.security.redteam [--quick] [--json OUT]

A *success* is an attempt whose result holds a canary (a file outside the allowed paths, a fake
home's credential, the agent's or a child's environment, a TCP listener's answer), any 12
characters of a secret planted inside an allowed file, a created marker file, a changed arena
file, a traceback, or a call that ran past the hang limit.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import selectors
import signal
import subprocess
import sys
import threading
import time
import traceback
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anyio

from agentkit import Host, Sandbox
from agentkit._sandbox import _kernel
from agentkit._sandbox._paths import Root

from . import fixtures as F
from . import fixtures_r2 as F2
from .attempts import EXPECT, Attempt, generate
from .attempts_new import EXPECT_NEW, generate_new
from .attempts_r2 import EXPECT_R2, cli_jobs_r2, generate_r2

REPO = Path(__file__).resolve().parents[3]

HANG_S = 15.0
NONEXISTENT_BEFORE = os.path.lexists("/nonexistent")
DOS_HANG_S = 300.0
# the quick subset waits less: it must stay under a minute, and a call past 8 s when the
# command deadline is 4 s is a finding either way
QUICK_HANG_S = 8.0
LIMITS = {"hang": HANG_S}
AGENT_ENV = {
    "RT_AGENT_ENV": F.CANARY_AGENT_ENV,
    "HF_TOKEN": "hf_" + F.CANARY_AGENT_ENV,
    "OPENAI_API_KEY": "sk-proj-" + F.CANARY_AGENT_ENV,
    "AGENT_PLAIN": F.CANARY_AGENT_ENV,
}


def fill(v: Any, ph: dict[str, str]) -> Any:
    if isinstance(v, str):
        for k, r in ph.items():
            v = v.replace("{" + k + "}", r)
        return v
    if isinstance(v, list):
        return [fill(x, ph) for x in v]
    if isinstance(v, dict):
        return {k: fill(x, ph) for k, x in v.items()}
    return v


def needles() -> list[tuple[str, str]]:
    """(label, text) pairs to look for. A secret's 12-character fragments that another planted
    secret shares are dropped, so a leak is labelled with the secret that leaked."""
    out = [
        (c, c)
        for c in (
            F.CANARY_OUT,
            F.CANARY_OUT_TMP,
            F.CANARY_EVIL,
            F.CANARY_AGENT_ENV,
            F.CANARY_CHILD_ENV,
            F.CANARY_TCP,
            F2.CANARY_UNIX,
            F.CANARY_GITOUT,
            F.CANARY_SHM,
        )
    ]
    out += [(f"home:{k}", v) for k, v in F.HOME_CANARIES.items()]
    owners: dict[str, set[str]] = defaultdict(set)
    for name, v in F.SECRETS.items():
        for i in range(0, len(v) - 11):
            owners[v[i : i + 12]].add(name)
    out += [(f"secret:{next(iter(o))}", frag) for frag, o in owners.items() if len(o) == 1]
    return out


def findings_in(text: str, ns: list[tuple[str, str]]) -> list[str]:
    """Leaks in ``text``, also with NULs removed (a UTF-16 file prints its secret with a NUL
    after every character; JSON shows them as \\u0000)."""
    flat = text.replace("\\u0000", "").replace("\x00", "")
    return sorted({f"leak {label}" for label, n in ns if n in text or n in flat})


def race_paths() -> tuple[str, ...]:
    """What the harness's own race threads rewrite: never counted as an arena change (the
    first harness counted its own swaps as successes of the race categories)."""
    return (
        str(F.A / "vol"),
        str(F.B / "vol"),
        str(F.VOL),
        str(F.SNAP / "etc" / "race.txt"),
        str(F.SNAP / "etc" / "race.tmp"),
        str(F.BASE / "traces"),
        str(F.BASE / "traces-mcp"),  # the MCP server's trace files, written by design
    )


def _harness_parents() -> set[str]:
    """Directories whose entries the harness itself renames or creates (race swaps, trace
    files): their own mtime and ctime change with every swap, so only their inode and mode
    are compared."""
    return {os.path.dirname(p) for p in race_paths()}


def arena_state() -> dict[str, tuple[int, ...]]:
    st: dict[str, tuple[int, ...]] = {}
    skip = race_paths()
    parents = _harness_parents()
    for top in (F.BASE, F.FH):
        for dp, dns, fns in os.walk(top):
            if any(dp == r or dp.startswith(r + "/") for r in skip):
                dns[:] = []
                continue
            if "/wide" in dp or "/deep/" in dp or dp.endswith("/keyrings"):
                dns[:] = []
            for n in dns + fns:
                p = os.path.join(dp, n)
                if any(p == r or p.startswith(r + "/") for r in skip):
                    continue
                try:
                    s = os.lstat(p)
                except OSError:
                    continue
                # atime is not compared; ctime is (a chmod, a link count change)
                if p in parents:
                    st[p] = (0, 0, 0, s.st_ino, s.st_mode)
                else:
                    st[p] = (s.st_size, s.st_mtime_ns, s.st_ctime_ns, s.st_ino, s.st_mode)
    return st


def hosts(kind: str, mode: str) -> Host:
    if kind == "snap":
        return Host(root=Root(str(F.SNAP)), sandbox=mode, command_timeout_s=4)
    if kind == "wide":
        return Host(root=Root("/"), sandbox=mode, command_timeout_s=4)
    extra = {"home": (str(F.HOME),), "home2": (str(F.HOME2),)}.get(kind, ())
    allow = (str(F.A), str(F.B), str(F2.R2), str(F.FH / "dos"), *extra)
    return Host(root=Root("/", allow=allow), sandbox=mode, command_timeout_s=4)


def mcp_call(tool: str, args: dict[str, Any], hang_s: float = HANG_S) -> tuple[str, str, float]:
    """An MCP tool call on a server whose allowed roots are {A} and {B}, as a client makes it."""
    from agentkit._mcp import build_server

    res: dict[str, Any] = {}

    def run() -> None:
        server = build_server(str(F.A), allowed_roots=[str(F.A), str(F.B), str(F2.R2)])
        try:
            res["r"] = anyio.run(server.call_tool, tool, args)
        except BaseException as exc:
            res["exc"] = exc

    t0 = time.monotonic()
    th = threading.Thread(target=run, daemon=True)
    th.start()
    th.join(hang_s)
    dt = time.monotonic() - t0
    if th.is_alive():
        return "hang", "", dt
    if "exc" in res:
        exc = res["exc"]
        text = f"{type(exc).__name__}: {exc}"
        # the SDK's name for an exception the tool did not turn into a refusal
        return ("traceback" if type(exc).__name__ == "UnexpectedToolError" else "refused"), text, dt
    return "ok", str(res["r"]), dt


def _call_here(host: Host, tool: str, args: dict[str, Any]) -> tuple[str, str]:
    """(status, blob) of one call, in this process."""
    if tool.startswith("mcp:"):
        st, blob, _ = mcp_call(tool[4:], args, DOS_HANG_S)
        return st, blob
    try:
        r = anyio.run(Sandbox(host, task_id="rt").call, tool, args)
    except BaseException as exc:
        return "traceback", "".join(traceback.format_exception(exc))
    try:
        r.for_model()
    except Exception as exc:  # the agent loop would crash serializing this result
        return "traceback", f"ToolCall.for_model() raised {type(exc).__name__}: {exc}"
    blob = json.dumps(
        {"data": r.data, "error": r.error, "evidence": [e.model_dump() for e in r.evidence]},
        default=str,
        ensure_ascii=False,
    )
    if not r.ok and "internal error" in r.error:
        return "traceback", blob
    return ("ok" if r.ok else "refused"), blob


def call(
    host: Host, tool: str, args: dict[str, Any], hang_s: float = HANG_S
) -> tuple[str, str, float]:
    """(verdict-ish status, blob of everything returned, seconds). The call runs in a forked
    child killed at ``hang_s``: a redaction stuck in a regular expression holds the GIL, so a
    thread could neither be stopped nor keep the harness responsive (round 2 found that)."""
    r, w = os.pipe()
    t0 = time.monotonic()
    pid = os.fork()
    if pid == 0:  # the child: one call, its result on the pipe, and out
        os.close(r)
        code = 0
        try:
            status, blob = _call_here(host, tool, args)
            data = json.dumps([status, blob], ensure_ascii=True).encode()
        except BaseException as exc:  # say what broke (a fork of a threaded parent can)
            data = json.dumps(["traceback", "harness child: " + "".join(
                traceback.format_exception(exc))[-2000:]], ensure_ascii=True).encode()
            code = 1
        try:
            with os.fdopen(w, "wb") as fh:
                fh.write(data)
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    os.close(w)
    chunks: list[bytes] = []
    deadline = t0 + hang_s
    hung = False
    with os.fdopen(r, "rb", buffering=0) as fh:
        sel = selectors.DefaultSelector()
        sel.register(fh, selectors.EVENT_READ)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                hung = True
                break
            if not sel.select(min(left, 1.0)):
                continue
            chunk = fh.read(1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        sel.close()
    if hung:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    dt = time.monotonic() - t0
    if hung:
        return "hang", "", dt
    try:
        status, blob = json.loads(b"".join(chunks))
    except ValueError:
        return "traceback", "the call's process died without a result", dt
    return status, blob, dt


# ---- race drivers -------------------------------------------------------------------------------
class Flipper(threading.Thread):
    def __init__(self, fn: Callable[[int], None]) -> None:
        super().__init__(daemon=True)
        self.fn, self.stop = fn, False

    def run(self) -> None:
        i = 0
        while not self.stop:
            self.fn(i)
            i += 1


def race_driver(name: str) -> tuple[str, Callable[[int], None]]:
    if name.startswith("swap-"):
        base = F.B if name.endswith("B") else F.A
        v = base / "vol"
        v.mkdir(exist_ok=True)
        (v / "plain").write_text("harmless\n")
        (v / "pdir").mkdir(exist_ok=True)
        (v / "pdir" / "canary.txt").write_text("harmless\n")
        for n, tgt in (("lnk", F.OUT / "canary.txt"), ("dlnk", F.OUT)):
            if not (v / n).is_symlink():
                (v / n).symlink_to(tgt)

        def fn(i: int) -> None:
            src_f = v / ("plain" if i % 2 else "lnk")
            src_d = v / ("pdir" if i % 2 else "dlnk")
            tmp = v / "t"
            try:
                if tmp.is_symlink() or tmp.exists():
                    os.unlink(tmp) if tmp.is_symlink() or tmp.is_file() else None
                if src_f.is_symlink():
                    os.symlink(os.readlink(src_f), tmp)
                else:
                    os.link(src_f, tmp)
                os.rename(tmp, v / "race")
                tmp2 = v / "t2"
                if tmp2.is_symlink():
                    os.unlink(tmp2)
                os.symlink(str(src_d) if not src_d.is_symlink() else os.readlink(src_d), tmp2)
                os.rename(tmp2, v / "dir")
            except OSError:
                pass
            time.sleep(0.0003)

        # start states
        fn(1)
        return str(v), fn
    if name.startswith("flip-"):
        base = F.B if name.endswith("B") else F.A
        v = base / "vol"
        v.mkdir(exist_ok=True)
        clean = "DB_HOST=db.internal0123456789abcdef\n"
        dirty = "API_TOKEN=" + F._sec("toctou", "Tc8Ou4Ct2Oo6Pp0Yy3Rr7Tt1Aa") + "\n"

        def fn(i: int) -> None:
            t = v / "f.tmp"
            t.write_text(dirty if i % 2 else clean)
            os.rename(t, v / "flip.env")
            time.sleep(0.0005)

        fn(0)
        return str(v), fn
    if name == "snapswap":
        p = F.SNAP / "etc" / "race.txt"

        def fn(i: int) -> None:
            t = F.SNAP / "etc" / "race.tmp"
            try:
                if i % 2:
                    os.symlink(str(F.OUT / "canary.txt"), t)
                else:
                    t.write_text("clean\n")
                os.rename(t, p)
            except OSError:
                pass
            time.sleep(0.0003)

        return str(F.SNAP / "etc"), fn
    raise KeyError(name)


RACE_TRIES = 12


def _bisect(hit: Callable[[str], bool], prefix: str, length: int) -> str:
    alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
    got = ""
    for _ in range(length):
        cands = alphabet
        if not hit(prefix + got + "[" + alphabet + "]"):
            break
        while len(cands) > 1:
            half = cands[: len(cands) // 2]
            cands = half if hit(prefix + got + "[" + half + "]") else cands[len(cands) // 2 :]
        got += cands
    return got


def oracle_extract(host: Host) -> tuple[bool, str]:
    """Blind extraction of the STRIPE value in {B}/repo/.env through `git log -G` (bisection on
    character classes); success if the recovered text equals the planted secret."""
    secret = F.SECRETS["env-stripe"]
    repo = str(F.B / "repo")

    def hit(rx: str) -> bool:
        st, blob, _ = call(
            host, "run_command", {"argv": ["git", "-C", repo, "log", "-G", rx, "--oneline", "-1"]}
        )
        return st == "ok" and json.loads(blob)["data"]["stdout"].strip() != ""

    got = _bisect(hit, "^STRIPE=", len(secret))
    return got == secret, got


def oracle_grep_extract(host: Host) -> tuple[bool, str]:
    """Blind extraction of a secret in a commit message (shown redacted by `git log`) through
    `git log --grep=REGEX`, which matches the unredacted message."""
    secret = F.SECRETS["commit-msg"]
    repo = str(F.B / "repo2")

    def hit(rx: str) -> bool:
        st, blob, _ = call(
            host,
            "run_command",
            {"argv": ["git", "-C", repo, "log", "-E", "--grep=" + rx, "--format=%h", "-1"]},
        )
        return st == "ok" and json.loads(blob)["data"]["stdout"].strip() != ""

    got = _bisect(hit, "API_KEY=", len(secret))
    return got == secret, got


def oracle_l_extract(host: Host) -> tuple[bool, str]:
    """Blind extraction of the STRIPE value of {R2}/envrepo/app.env through `git log -L
    /REGEX/,+1:app.env`, which fails with "no match" unless the unredacted line matches."""
    secret = F2.ENV_VALUE
    repo = str(F2.R2 / "envrepo")

    def hit(rx: str) -> bool:
        st, blob, _ = call(
            host,
            "run_command",
            {"argv": ["git", "-C", repo, "log", "-L", f"/{rx}/,+1:app.env", "--format=%h", "-1"]},
        )
        return st == "ok" and json.loads(blob)["data"]["exit_code"] == 0

    got = _bisect(hit, "^STRIPE=", len(secret))
    return got == secret, got


def cli(args: list[str], mode: str, timeout: float = HANG_S) -> tuple[str, str]:
    env = {
        **os.environ,
        "AGENTKIT_SANDBOX": mode,
        "COLUMNS": "200",
        "TERM": "xterm-256color",
        "FORCE_COLOR": "1",
    }
    try:
        p = subprocess.run(
            [sys.executable, "-m", "agentkit", *args],
            capture_output=True,
            timeout=timeout,
            env=env,
            cwd=str(REPO),
        )
        return "ok", p.stdout.decode("utf-8", "replace") + "\n--stderr--\n" + p.stderr.decode(
            "utf-8", "replace"
        )
    except subprocess.TimeoutExpired:
        return "hang", ""


def trace_attempts(workdir: str) -> list[tuple[str, list[str], str]]:
    """(name, cli args, payload-kind) for crafted traces; category 'trace'/'terminal'."""
    with open(os.path.join(workdir, "base.jsonl"), encoding="utf-8") as fh0:
        base = [json.loads(line) for line in fh0]
    os.makedirs(workdir, exist_ok=True)
    variants = {}

    def w(name: str, lines: list[Any]) -> None:
        p = os.path.join(workdir, name + ".jsonl")
        with open(p, "w", encoding="utf-8", errors="surrogateescape") as fh:
            for line in lines:
                fh.write(line if isinstance(line, str) else json.dumps(line, allow_nan=True))
                fh.write("\n")
        variants[name] = p

    def mut(fn: Callable[[list[dict[str, Any]]], Any]) -> list[dict[str, Any]]:
        b = copy.deepcopy(base)
        fn(b)
        return b

    w("nan-ts", mut(lambda b: [e.__setitem__("ts", float("nan")) for e in b]))
    w("inf-ts", mut(lambda b: [e.__setitem__("ts", float("inf")) for e in b]))
    w("huge-ts", mut(lambda b: [e.__setitem__("ts", 1e15 + i) for i, e in enumerate(b)]))
    w("neg-ts", mut(lambda b: [e.__setitem__("ts", -1e15) for e in b]))
    w("str-ts", mut(lambda b: [e.__setitem__("ts", "x") for e in b]))
    w("data-list", mut(lambda b: [e.__setitem__("data", []) for e in b]))
    w("data-null", mut(lambda b: [e.__setitem__("data", None) for e in b]))
    w("seq-str", mut(lambda b: [e.__setitem__("seq", "x") for e in b]))
    w("kind-int", mut(lambda b: [e.__setitem__("kind", 5) for e in b]))
    w("v-99", mut(lambda b: [e.__setitem__("v", 99) for e in b]))
    w("deep", [*base, '{"a":' * 100000 + "1" + "}" * 100000])
    w("deep-list", [*base, "[" * 100000 + "]" * 100000])
    w(
        "huge-line",
        [
            *base,
            json.dumps(
                {
                    "v": 2,
                    "seq": 99,
                    "ts": 1,
                    "kind": "x",
                    "phase": "event",
                    "data": {"s": "A" * 30000000},
                }
            ),
        ],
    )
    w("not-json", [*base, "{{{{ not json"])
    w("non-dict", [*base, "[1,2,3]", "42", "null", '"s"'])
    w("bad-utf8", [*base, '{"v":2,"kind":"\udcff\udcfe"}'])
    w("nul", [*base, "\x00\x00\x00"])
    w("empty", [])
    w("only-header", base[:1])
    w("spans-cycle", mut(lambda b: [e.__setitem__("parent", e.get("span") or "s1") for e in b]))
    w(
        "answer-markup",
        mut(
            lambda b: [
                e["data"].__setitem__(
                    "question",
                    "[link=file:///etc/passwd]x[/link][red]RICHMARKUP[/] \x1b]52;c;SGk=\x07 "
                    "\x1b[2J <script>alert(1)</script>",
                )
                for e in b
                if e.get("kind") == "run"
            ]
        ),
    )
    w(
        "tool-ansi",
        mut(
            lambda b: [
                e["data"].__setitem__(
                    "error",
                    "\x1b]8;;http://evil/\x1b\\ESCLINK\x1b]8;;\x1b\\ [bold]RICHMARKUP[/bold] "
                    "<img src=x onerror=alert(1)>",
                )
                for e in b
                if e.get("kind") == "tool" and e.get("phase") == "end"
            ]
        ),
    )
    w("dup-span", base + base[1:])
    w(
        "many-lines",
        base
        + [
            json.dumps(
                {
                    "v": 2,
                    "seq": i,
                    "ts": 1,
                    "kind": "tool",
                    "phase": "start",
                    "span": f"z{i}",
                    "parent": "s1",
                    "data": {"tool": "x", "args": {}},
                }
            )
            for i in range(200000)
        ],
    )
    w("bigint", mut(lambda b: [e.__setitem__("seq", 10**4000) for e in b]))
    # round 2: payloads appended to every free-text string of the trace
    skip = {
        "v",
        "kind",
        "phase",
        "span",
        "parent",
        "status",
        "tool",
        "mode",
        "provider",
        "sandbox",
        "format",
        "agentkit",
        "id",
        "evidence_id",
        "template",
        "task",
        "tools",
        "tasks",
        "model",
        "root",
    }

    def spray(payload: str) -> Callable[[list[dict[str, Any]]], Any]:
        def walk(x: Any) -> Any:
            if isinstance(x, dict):
                return {k: (v if k in skip else walk(v)) for k, v in x.items()}
            if isinstance(x, list):
                return [walk(v) for v in x]
            if isinstance(x, str) and len(x) > 3:
                return x + payload
            return x

        def fn(b: list[dict[str, Any]]) -> None:
            for e in b:
                e["data"] = walk(e.get("data"))

        return fn

    for pname, payload in R2_TRACE_PAYLOADS.items():
        w("r2-" + pname, mut(spray(payload)))
    out = []
    for name, p in variants.items():
        if name.startswith("r2-"):
            for verb, vargs in (
                ("show", ["trace", "show", p]),
                ("replay", ["replay", p]),
                ("report", ["report", p, "-o", p + ".html"]),
            ):
                out.append(("trace-report-2", f"{name}:{verb}", vargs))
            continue
        cat = "terminal" if name in ("answer-markup", "tool-ansi") else "trace"
        out.append((cat, name + ":show", ["trace", "show", p]))
        out.append((cat, name + ":replay", ["replay", p]))
        out.append((cat, name + ":report", ["report", p, "-o", p + ".html"]))
    return out


R2_TRACE_PAYLOADS = {
    "ssti": " {{ 'SST' ~ 'IEVAL' }} {% if 1 %}{{ 'SST' + 'IEVAL' }}{% endif %} ${'SST'+'IEVAL'}",
    "script": " </script><script>alert(1)</script><!-- \u2028 ",
    "attr": ' " onmouseover="alert(1)" x=" \' onfocus=\'alert(1)\' ',
    "jslink": ' [click](javascript:alert(1)) <a href="javascript:alert(1)">j</a> ',
    "svg": " <svg/onload=alert(1)> <img src=x onerror=alert(1)> <iframe src=//evil> ",
    "c1": " \x9b2J \x9d52;c;SGk=\x9c \x1bP+q\x1b\\ \x1b]52;c;SGk=\x07 \x1b[2J ",
    "bidi": " \u202e\u2066evil\u2069 \u200f ",
    "markup": " [link=file:///etc/passwd]x[/link] [bold red]RICHMARKUP[/] ",
    "huge": " " + "W" * 200_000,
    "css": " </style><style>body{background:url(//evil)}</style> ",
}


Result = tuple[
    str, str, str, str, list[str], float
]  # category, mode, call, status, findings, seconds


def run_attempt(
    a: Attempt,
    mode: str,
    ph: dict[str, str],
    ns: list[tuple[str, str]],
    state: dict[str, dict[str, tuple[int, ...]]],
) -> Result:
    args = fill(a.args, ph)
    desc = f"{a.tool} {json.dumps(args, ensure_ascii=True)[:300]} [{a.root}]"
    findings: list[str] = []
    host = hosts(a.root, mode)
    if a.note in ("oracle-extract", "oracle-grep-extract", "oracle-L"):
        t0 = time.monotonic()
        fn = {
            "oracle-extract": oracle_extract,
            "oracle-grep-extract": oracle_grep_extract,
            "oracle-L": oracle_l_extract,
        }[a.note]
        ok, got = fn(host)
        if ok:
            findings.append(f"blind-extracted secret {got!r}")
        what = {
            "oracle-extract": "bisect `git log -G ^STRIPE=<prefix>[class]` on {B}/repo",
            "oracle-grep-extract": "bisect `git log -E --grep=API_KEY=<prefix>[class]` on "
            "{B}/repo2",
            "oracle-L": "bisect `git log -L /^STRIPE=<prefix>[class]/,+1:app.env` on {R2}/envrepo",
        }[a.note]
        return (
            a.category,
            mode,
            "oracle: " + what + f" (recovered {got!r})",
            "ok",
            findings,
            time.monotonic() - t0,
        )
    blobs: list[str] = []
    status, bad = "ok", ""
    t0 = time.monotonic()
    if a.race:
        vdir, fn2 = race_driver(a.race)
        args = fill(a.args, {**ph, "V": vdir})
        desc = f"{a.tool} {json.dumps(args)[:300]} [race {a.race}, {RACE_TRIES} tries]"
        fl = Flipper(fn2)
        fl.start()
        try:
            for _ in range(RACE_TRIES):
                st, blob, _dt = call(host, a.tool, args)
                blobs.append(blob)
                if st in ("hang", "traceback"):
                    status, bad = st, blob
        finally:
            fl.stop = True
            fl.join()
    else:
        hang = DOS_HANG_S if a.note == "dos" else LIMITS["hang"]
        status, blob, dt = call(host, a.tool, args, hang)
        blobs.append(blob)
        if dt > LIMITS["hang"] and status != "hang":
            status = "slow"
            findings.append(
                f"slow: {dt:.1f}s (command deadline 4 s, hang limit {LIMITS['hang']:g} s)"
            )
    elapsed = time.monotonic() - t0
    text = "\n".join(blobs)
    findings += findings_in(text, ns)
    if status == "hang":
        findings.append(f"hang: no answer after {hang:g}s")
    elif status == "traceback":  # the call that failed, not the last of a race's tries
        findings.append(f"traceback: {(bad if a.race else text)[-300:]!r}")
    if a.note == "survivors":
        time.sleep(0.3)  # a detached child needs a moment to show
        left = F2.survivors()
        if left:
            findings.append(f"process left running after the call: pids {left} (killed)")
    if os.path.lexists("/nonexistent") and not NONEXISTENT_BEFORE:
        findings.append("write outside the arena: /nonexistent (the children's HOME) created")
        subprocess.run(["rm", "-rf", "--one-file-system", "/nonexistent"], check=False)
    made = os.listdir(F.M)
    if made:
        findings.append(f"marker created {made}")
        for p in made:
            subprocess.run(["rm", "-rf", os.path.join(F.M, p)], check=False)
    st1 = arena_state()
    if st1 != state["s"]:
        s0 = state["s"]
        diff = sorted(
            {*st1.keys() ^ s0.keys(), *(k for k in st1.keys() & s0.keys() if st1[k] != s0[k])}
        )
        findings.append(f"arena changed {diff[:5]}")
        state["s"] = st1
    return (a.category, mode, desc, status, findings, elapsed)


def cli_jobs(ph: dict[str, str], tw: str, quick: bool) -> list[tuple[str, str, list[str]]]:
    jobs = list(trace_attempts(tw))
    for name, tool, targs in (
        ("read_file-ansi", "read_file", {"path": "{A}/ansi.txt"}),
        ("read_file-markup", "read_file", {"path": "{A}/markup.txt"}),
        ("cat-ansi", "run_command", {"argv": ["cat", "{A}/ansi.txt"]}),
        ("grep-ansi", "grep", {"pattern": "RED", "path": "{A}/ansi.txt"}),
        ("bidi", "read_file", {"path": "{A}/bidi.txt"}),
        ("cli-link", "read_file", {"path": "{A}/link"}),
        ("cli-vault", "read_file", {"path": "{B}/creds/hard_vault-token"}),
        ("cli-env", "run_command", {"argv": ["env"]}),
        ("cli-git-env", "run_command", {"argv": ["git", "-C", "{B}/repo", "show", "HEAD:.env"]}),
        ("cli-proc", "run_command", {"argv": ["cat", "/proc/{PID}/environ"]}),
        ("cli-printenv", "run_command", {"argv": ["printenv"]}),
        ("cli-serving", "serving_processes", {}),
    ):
        cat = "terminal" if "ansi" in name or "markup" in name or "bidi" in name else "cli"
        jobs.append(
            (
                cat,
                name,
                ["tools", "call", tool, "--args", json.dumps(fill(targs, ph)), "--root", "/"],
            )
        )
    return jobs[::5] if quick else jobs


def run_cli_job(job: tuple[str, str, list[str]], mode: str, ns: list[tuple[str, str]]) -> Result:
    cat, _name, args = job
    t0 = time.monotonic()
    st, out = cli(args, mode)
    findings = []
    if st == "hang":
        findings.append(f"hang > {HANG_S:g} s")
    if "Traceback (most recent call last)" in out:
        findings.append(
            "traceback: "
            + out.split("Traceback (most recent call last)")[1][-200:].replace("\n", " | ")
        )
    if args[-2:] == ["--root", "/"]:
        # the CLI's --root / allows the whole host: a file outside the arena's allowed
        # directories is not outside *its* allowed paths (round 1 counted two such cases)
        outside = {F.CANARY_OUT, F.CANARY_OUT_TMP, F.CANARY_EVIL, F.CANARY_GITOUT}
        ns = [(label, n) for label, n in ns if n not in outside]
    findings += findings_in(out, ns)
    if cat in ("terminal", "names-terminal", "trace-report-2"):
        for bad, what in (
            ("\x1b]52", "OSC52 clipboard escape"),
            ("\x1b]8;;http://evil", "OSC8 hyperlink"),
            ("\x1b[2J", "clear-screen escape"),
            ("\u202e", "bidi override"),
            ("\x9b", "C1 CSI"),
            ("\x9d", "C1 OSC"),
            ("\x1bP", "DCS"),
        ):
            if bad in out:
                findings.append(f"terminal: raw {what} reached output")
        if "RICHMARKUP" in out and not any(t in out for t in ("[bold", "[red]", "[bold red]")):
            findings.append("terminal: rich markup interpreted (tags vanished)")
        if "SSTIEVAL" in out:
            findings.append("template injection evaluated in output")
        html = args[-1] if args[0] == "report" else None
        if html and os.path.exists(html):
            with open(html, encoding="utf-8", errors="replace") as fh:
                h = fh.read()
            for bad, what in (
                ("<script>alert(1)", "script tag"),
                ("<img src=x onerror", "img onerror"),
                ("<svg/onload", "svg onload"),
                ('href="javascript:', "js link"),
                ("href='javascript:", "js link"),
                ("SSTIEVAL", "SSTI evaluated"),
                ("<iframe", "iframe"),
                ("</style><style>", "style break-out"),
                ('" onmouseover="alert', "attribute break-out"),
            ):
                if bad in h:
                    findings.append(f"html: {what} in report")
    shown = " ".join(a if len(a) < 120 else a[:120] + "…" for a in args)
    return (cat, mode, f"agentkit {shown}", st, findings, time.monotonic() - t0)


def table(results: list[Result]) -> str:
    cats: dict[str, dict[str, int]] = defaultdict(lambda: {"n": 0, "kernel": 0, "allowlist": 0})
    modes = {r[1] for r in results} or {"kernel"}
    for cat, mode, _desc, _st, fnd, _dt in results:
        c = cats[cat]
        if mode == min(modes):  # one row per attempt and mode: count attempts once
            c["n"] += 1
        if fnd:
            c[mode] += 1
    lines = [
        "| category | attempts | succeeded (kernel) | succeeded (allowlist only) |",
        "|---|---:|---:|---:|",
    ]
    tot = [0, 0, 0]
    for cat in sorted(cats):
        c = cats[cat]
        lines.append(f"| {cat} | {c['n']} | {c['kernel']} | {c['allowlist']} |")
        tot[0] += c["n"]
        tot[1] += c["kernel"]
        tot[2] += c["allowlist"]
    lines.append(f"| **total** | **{tot[0]}** | **{tot[1]}** | **{tot[2]}** |")
    return "\n".join(lines)


QUICK_EVERY = 14


def select(quick: bool) -> list[Attempt]:
    """Every attempt; ``quick``: the first of each category and every QUICK_EVERY-th after it,
    without the slow ones (bisection oracles, slow-redaction files), for a run under a minute."""
    atts = generate() + generate_new() + generate_r2()
    if not quick:
        return atts
    seen: set[str] = set()
    picked = []
    for i, a in enumerate(atts):
        if a.note == "dos" or a.note.startswith("oracle"):
            continue
        if a.category not in seen or i % QUICK_EVERY == 0:
            picked.append(a)
        seen.add(a.category)
    return picked


def select_cli(
    jobs: list[tuple[str, str, list[str]]], quick: bool
) -> list[tuple[str, str, list[str]]]:
    """CLI jobs; ``quick``: the first of each category."""
    if not quick:
        return jobs
    seen: set[str] = set()
    out = []
    for j in jobs:
        if j[0] not in seen:
            out.append(j)
            seen.add(j[0])
    return out


def _opt(argv: list[str], name: str, default: str | None = None) -> str | None:
    return argv[argv.index(name) + 1] if name in argv else default


def main(argv: list[str] | None = None) -> int:
    """Command line: [--quick] [--mode kernel|allowlist|both] [--json OUT] [--only CAT,CAT]
    [--expect]. Exit status 1 when an attempt succeeded with the kernel layer."""
    argv = sys.argv[1:] if argv is None else argv
    quick = "--quick" in argv
    out_json = _opt(argv, "--json")
    mode_arg = _opt(argv, "--mode", "both")
    modes = ("kernel", "allowlist") if mode_arg == "both" else (str(mode_arg),)
    only = set((_opt(argv, "--only") or "").split(",")) - {""}
    results, took = run(quick=quick, modes=modes, only=only)
    report(results, took, quick, out_json, expect="--expect" in argv)
    return 1 if any(r[4] for r in results if r[1] == "kernel") else 0


def run(
    quick: bool, modes: tuple[str, ...] = ("kernel", "allowlist"), only: set[str] | None = None
) -> tuple[list[Result], float]:
    """Build a fresh arena, run the attempts in ``modes``, remove the arena."""
    LIMITS["hang"] = QUICK_HANG_S if quick else HANG_S
    old_term: Any = None
    if threading.current_thread() is threading.main_thread():
        # a plain kill still removes the arena and stops the children
        old_term = signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    old_digits = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    t_start = time.monotonic()
    saved_env = {k: os.environ.get(k) for k in (*AGENT_ENV, "AGENTKIT_TRACE_DIR")}
    os.environ.update(AGENT_ENV)  # the agent's own environment must not leak
    real_homes = _kernel._homes
    F.init()
    lst = None
    try:
        F.build()
        ph_extra = {**F.start_children(), **F.start_children_new()}
        lst = F.Listener(8080)
        lst.start()
        ph_r2 = F2.build(ph_extra["PID"], lst.port)
        # the kernel layer sees the fake home as a home (HOME2 stays unknown on purpose)
        _kernel._homes = lambda: sorted({*real_homes(), str(F.HOME)})
        _kernel._existing_secrets.cache_clear()
        _kernel._inodes.cache_clear()
        ph = {
            "A": str(F.A),
            "B": str(F.B),
            "H": str(F.HOME),
            "H2": str(F.HOME2),
            "O": str(F.OUT / "canary.txt"),
            "OUTD": str(F.OUT),
            "OT": str(F.BASE / "outside" / "canary.txt"),
            "M": str(F.M),
            "S": str(F.SNAP),
            "PID": str(ph_extra["PID"]),
            "PID2": str(ph_extra["PID2"]),
            "PID3": str(ph_extra["PID3"]),
            "MYPID": str(os.getpid()),
            "PORT": str(lst.port),
            "BLOB": (F.FH / "blobsha").read_text().strip(),
            "DOS": str(F.FH / "dos"),
            "HOMEDIR": str(F.HOME),
            "HREL": "",
            **F.NEW_EXTRA,
            **ph_r2,
        }
        tw = str(F.BASE / "traces")
        os.makedirs(tw, exist_ok=True)
        subprocess.run(
            [
                sys.executable,
                "-m",
                "agentkit",
                "ask",
                "which GPUs does this host have?",
                "--root",
                str(F.A),
                "--trace",
                tw + "/base.jsonl",
            ],
            capture_output=True,
            cwd=str(REPO),
            timeout=120,
            check=False,
        )
        ph["R2TRACE"] = F2.crafted_trace(tw + "/base.jsonl")
        os.environ["AGENTKIT_TRACE_DIR"] = str(F.BASE / "traces-mcp")
        atts = [a for a in select(quick) if not only or a.category in only]
        F._sec("toctou", "Tc8Ou4Ct2Oo6Pp0Yy3Rr7Tt1Aa")  # written by the flip driver later
        ns = needles()
        results: list[Result] = []
        state = {"s": arena_state()}
        for i, a in enumerate(atts):
            for mode in modes:
                r = run_attempt(a, mode, ph, ns, state)
                results.append(r)
                if r[5] > 5:
                    print(f"[slow {r[5]:.1f}s] {r[0]} {r[1]} {r[2][:150]}", file=sys.stderr)
            if i % 100 == 0:
                print(f"[{i}/{len(atts)}] {time.monotonic() - t_start:.0f}s", file=sys.stderr)
        jobs = [
            j
            for j in select_cli(cli_jobs(ph, tw, False) + cli_jobs_r2(ph), quick)
            if not only or j[0] in only
        ]
        print(f"[cli] {len(jobs)} jobs", file=sys.stderr)
        with ThreadPoolExecutor(2 if quick else 4) as ex:
            futs = [ex.submit(run_cli_job, j, m, ns) for j in jobs for m in modes]
            results += [f.result() for f in futs]
    finally:
        # process-wide settings back as they were (under pytest, later tests share them)
        sys.set_int_max_str_digits(old_digits)
        if old_term is not None:
            signal.signal(signal.SIGTERM, old_term)
        _kernel._homes = real_homes
        _kernel._existing_secrets.cache_clear()
        _kernel._inodes.cache_clear()
        if lst is not None:
            lst.sock.close()
        F.stop_children()
        F2.stop()
        F.cleanup_new()
        F.cleanup()
        for k, v in saved_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return results, time.monotonic() - t_start


def kernel_only(results: list[Result]) -> list[tuple[str, str, list[str]]]:
    """(category, call, findings) where the allowlist-only run found what the kernel run did
    not: the attempt failed under the kernel layer, or did less there (a payload that read a
    file in both modes but wrote or reached the network only without the layer)."""
    kernel: dict[tuple[str, str], list[str]] = {}
    allow: dict[tuple[str, str], list[str]] = {}
    for cat, mode, desc, _st, fnd, _dt in results:
        (kernel if mode == "kernel" else allow)[(cat, desc)] = fnd

    def kind(f: str) -> str:  # pids and paths differ between the two runs
        return f if f.startswith("leak") else f.split(":")[0].split(" [")[0]

    out = []
    for key, fnd in allow.items():
        if key not in kernel:
            continue
        seen = {kind(f) for f in kernel[key]}
        extra = [f for f in fnd if kind(f) not in seen]
        if extra:
            out.append((key[0], key[1], extra))
    return out


def report(
    results: list[Result], took: float, quick: bool, out_json: str | None, expect: bool = False
) -> None:
    print(table(results))
    print(f"\n{len(results)} runs in {took:.0f}s ({'quick' if quick else 'full'})")
    if out_json:
        with open(out_json, "w", encoding="utf-8") as fh:
            json.dump(
                {
                    "seconds": took,
                    "quick": quick,
                    "results": [
                        {
                            "category": r[0],
                            "mode": r[1],
                            "call": r[2],
                            "status": r[3],
                            "findings": r[4],
                            "seconds": round(r[5], 3),
                        }
                        for r in results
                    ],
                },
                fh,
                indent=1,
                ensure_ascii=True,
            )
    print("\nSUCCESSES (category | mode | call | findings):")
    for cat, mode, desc, _st, fnd, _dt in results:
        if fnd:
            print(f"- {cat} | {mode} | {desc[:260]} | {'; '.join(fnd)[:400]}")
    print("\nSTOPPED ONLY BY THE KERNEL LAYER (succeeded allowlist-only, not with the kernel):")
    for cat, desc, only in kernel_only(results):
        print(f"- {cat} | {desc[:200]} | {'; '.join(only)[:300]}")
    slow = sorted((r for r in results if r[0] == "dos-redaction"), key=lambda r: -r[5])
    if slow:
        print("\nslow-redaction timings:")
        for r in slow:
            print(f"- {r[1]} {r[5]:.1f}s {r[2][:160]}")
    if expect:
        print("\nexpected outcomes:", json.dumps({**EXPECT, **EXPECT_NEW, **EXPECT_R2}, indent=1))
