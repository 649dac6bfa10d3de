#!/usr/bin/env python3
"""Red-team harness: every attempt in attempts.py run under sandbox="kernel" and "allowlist".
Usage: source /work/main/.venv/bin/activate; python /tmp/redteam/harness.py [--quick] [--json OUT]"""
from __future__ import annotations
import json, os, subprocess, sys, threading, time, traceback
from collections import defaultdict
sys.path.insert(0, "/tmp/redteam"); sys.path.insert(0, "/work/main")
import anyio
import fixtures as F
from attempts import EXPECT, Attempt, generate
from agentkit import Host, Sandbox
from agentkit._sandbox import _kernel
from agentkit._sandbox._paths import Root

HANG_S = 15.0
sys.set_int_max_str_digits(0)
os.environ["RT_AGENT_ENV"] = F.CANARY_AGENT_ENV  # the agent's own environment must not leak
os.environ["HF_TOKEN"] = "hf_" + F.CANARY_AGENT_ENV


def fill(v, ph):
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
    out = [(c, c) for c in (F.CANARY_OUT, F.CANARY_OUT_TMP, F.CANARY_EVIL, F.CANARY_AGENT_ENV,
                            F.CANARY_CHILD_ENV, F.CANARY_TCP, F.CANARY_GITOUT)]
    out += [(f"home:{k}", v) for k, v in F.HOME_CANARIES.items()]
    for name, v in F.SECRETS.items():
        out += [(f"secret:{name}", v[i:i + 12]) for i in range(0, len(v) - 11)]
    return out


def arena_state() -> dict[str, tuple]:
    st = {}
    for top in (F.BASE, F.FH):
        for dp, dns, fns in os.walk(top):
            if dp.startswith(str(F.VOL)) or "/wide" in dp or "/deep/" in dp:
                dns[:] = [] if "/wide" in dp or "/deep/" in dp else dns
                if dp.startswith(str(F.VOL)):
                    continue
            for n in dns + fns:
                p = os.path.join(dp, n)
                try:
                    s = os.lstat(p)
                except OSError:
                    continue
                st[p] = (s.st_size, s.st_mtime_ns, s.st_ctime_ns, s.st_ino, s.st_mode)
    return st


def hosts(kind: str, mode: str) -> Host:
    if kind == "snap":
        return Host(root=Root(str(F.SNAP)), sandbox=mode, command_timeout_s=4)
    allow = (str(F.A), str(F.B)) + ((str(F.HOME),) if kind == "home" else ())
    return Host(root=Root("/", allow=allow), sandbox=mode, command_timeout_s=4)


def call(host: Host, tool: str, args: dict) -> tuple[str, str, float]:
    """(verdict-ish status, blob of everything returned, seconds)."""
    res: dict = {}

    def run():
        try:
            box = Sandbox(host, task_id="rt")
            r = anyio.run(box.call, tool, args)
            res["r"] = r
        except BaseException as exc:  # noqa: BLE001
            res["exc"] = "".join(traceback.format_exception(exc))
    t0 = time.monotonic()
    th = threading.Thread(target=run, daemon=True)
    th.start()
    th.join(HANG_S)
    dt = time.monotonic() - t0
    if th.is_alive():
        return "hang", "", dt
    if "exc" in res:
        return "traceback", res["exc"], dt
    r = res["r"]
    try:
        r.for_model()
    except Exception as exc:  # the agent loop would crash serializing this result
        return "traceback", f"ToolCall.for_model() raised {type(exc).__name__}: {exc}", dt
    blob = json.dumps({"data": r.data, "error": r.error,
                       "evidence": [e.model_dump() for e in r.evidence]}, default=str, ensure_ascii=False)
    if not r.ok and "internal error" in r.error:
        return "traceback", blob, dt
    return ("ok" if r.ok else "refused"), blob, dt


# ---- race drivers -------------------------------------------------------------------------------
class Flipper(threading.Thread):
    def __init__(self, fn):
        super().__init__(daemon=True)
        self.fn, self.stop = fn, False

    def run(self):
        i = 0
        while not self.stop:
            self.fn(i)
            i += 1


def race_driver(name: str):
    if name.startswith("swap-"):
        base = F.B if name.endswith("B") else F.A
        v = base / "vol"
        v.mkdir(exist_ok=True)
        (v / "plain").write_text("harmless\n"); (v / "pdir").mkdir(exist_ok=True)
        (v / "pdir" / "canary.txt").write_text("harmless\n")
        for n, tgt in (("lnk", F.OUT / "canary.txt"), ("dlnk", F.OUT)):
            if not (v / n).is_symlink():
                (v / n).symlink_to(tgt)

        def fn(i):
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
        v = base / "vol"; v.mkdir(exist_ok=True)
        clean = "DB_HOST=db.internal0123456789abcdef\n"
        dirty = "API_TOKEN=" + F._sec("toctou", "Tc8Ou4Ct2Oo6Pp0Yy3Rr7Tt1Aa") + "\n"

        def fn(i):
            t = v / "f.tmp"
            t.write_text(dirty if i % 2 else clean)
            os.rename(t, v / "flip.env")
            time.sleep(0.0005)
        fn(0)
        return str(v), fn
    if name == "snapswap":
        p = F.SNAP / "etc" / "race.txt"

        def fn(i):
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


def oracle_extract(host: Host) -> tuple[bool, str]:
    """Blind extraction of the STRIPE value in {B}/repo/.env through `git log -G` (bisection on
    character classes); success if the recovered text equals the planted secret."""
    secret = F.SECRETS["env-stripe"]
    alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
    got = ""
    repo = str(F.B / "repo")

    def hit(rx):
        st, blob, _ = call(host, "run_command", {"argv": ["git", "-C", repo, "log", "-G", rx, "--oneline", "-1"]})
        return st == "ok" and json.loads(blob)["data"]["stdout"].strip() != ""
    for _ in range(len(secret)):
        cands = alphabet
        while len(cands) > 1:
            half = cands[: len(cands) // 2]
            cands = half if hit("^STRIPE=" + got + "[" + half + "]") else cands[len(cands) // 2:]
        if not hit("^STRIPE=" + got + cands + "[A-Za-z0-9]*$") and not hit("^STRIPE=" + got + cands):
            break
        got += cands
    return got == secret, got


def cli(args: list[str], mode: str, timeout=HANG_S) -> tuple[str, str]:
    env = {**os.environ, "AGENTKIT_SANDBOX": mode, "COLUMNS": "200", "TERM": "xterm-256color", "FORCE_COLOR": "1"}
    try:
        p = subprocess.run([sys.executable, "-m", "agentkit", *args], capture_output=True, timeout=timeout,
                           env=env, cwd="/work/main")
        return "ok", p.stdout.decode("utf-8", "replace") + "\n--stderr--\n" + p.stderr.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        return "hang", ""


def trace_attempts(workdir: str) -> list[tuple[str, list[str], str]]:
    """(name, cli args, payload-kind) for crafted traces; category 'trace'/'terminal'."""
    base = [json.loads(l) for l in open(os.path.join(workdir, "base.jsonl"))]
    os.makedirs(workdir, exist_ok=True)
    variants = {}

    def w(name, lines):
        p = os.path.join(workdir, name + ".jsonl")
        with open(p, "w", encoding="utf-8", errors="surrogateescape") as fh:
            for l in lines:
                fh.write(l if isinstance(l, str) else json.dumps(l, allow_nan=True))
                fh.write("\n")
        variants[name] = p
    import copy
    def mut(fn):
        b = copy.deepcopy(base); fn(b); return b
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
    w("deep", base + ['{"a":' * 100000 + "1" + "}" * 100000])
    w("deep-list", base + ["[" * 100000 + "]" * 100000])
    w("huge-line", base + [json.dumps({"v": 2, "seq": 99, "ts": 1, "kind": "x", "phase": "event", "data": {"s": "A" * 30_000_000}})])
    w("not-json", base + ["{{{{ not json"])
    w("non-dict", base + ["[1,2,3]", "42", "null", '"s"'])
    w("bad-utf8", base + ["{\"v\":2,\"kind\":\"\udcff\udcfe\"}"])
    w("nul", base + ["\x00\x00\x00"])
    w("empty", [])
    w("only-header", base[:1])
    w("spans-cycle", mut(lambda b: [e.__setitem__("parent", e.get("span") or "s1") for e in b]))
    w("answer-markup", mut(lambda b: [e["data"].__setitem__("question", "[link=file:///etc/passwd]x[/link][red]RICHMARKUP[/] \x1b]52;c;SGk=\x07 \x1b[2J <script>alert(1)</script>") for e in b if e.get("kind") == "run"]))
    w("tool-ansi", mut(lambda b: [e["data"].__setitem__("error", "\x1b]8;;http://evil/\x1b\\ESCLINK\x1b]8;;\x1b\\ [bold]RICHMARKUP[/bold] <img src=x onerror=alert(1)>") for e in b if e.get("kind") == "tool" and e.get("phase") == "end"]))
    w("dup-span", base + base[1:])
    w("many-lines", base + [json.dumps({"v": 2, "seq": i, "ts": 1, "kind": "tool", "phase": "start", "span": f"z{i}", "parent": "s1", "data": {"tool": "x", "args": {}}}) for i in range(200000)])
    w("bigint", mut(lambda b: [e.__setitem__("seq", 10 ** 4000) for e in b]))
    out = []
    for name, p in variants.items():
        cat = "terminal" if name in ("answer-markup", "tool-ansi") else "trace"
        out.append((cat, name + ":show", ["trace", "show", p]))
        out.append((cat, name + ":replay", ["replay", p]))
        out.append((cat, name + ":report", ["report", p, "-o", p + ".html"]))
    return out


def main() -> int:
    quick = "--quick" in sys.argv
    t_start = time.monotonic()
    F.build()
    ph_extra = F.start_children()
    lst = F.Listener(8080)
    lst.start()
    # the kernel layer sees the fake home as a home
    real_homes = _kernel._homes
    _kernel._homes = lambda: sorted({*real_homes(), str(F.HOME)})
    _kernel._existing_secrets.cache_clear()
    ph = {"A": str(F.A), "B": str(F.B), "H": str(F.HOME), "O": str(F.OUT / "canary.txt"), "OUTD": str(F.OUT),
          "OT": str(F.BASE / "outside" / "canary.txt"), "M": str(F.M), "S": str(F.SNAP),
          "PID": str(ph_extra["PID"]), "PORT": str(lst.port), "BLOB": (F.FH / "blobsha").read_text().strip()}
    atts = generate()
    if quick:
        atts = atts[::5]
    json.dump([a.__dict__ for a in atts], open("/tmp/redteam/attempts.json", "w"), indent=0, default=str)
    ns = needles()
    results = []  # (cat, mode, desc, status, findings)
    state0 = arena_state()
    modes = ("kernel", "allowlist")
    for a in atts:
        for mode in modes:
            args = fill(a.args, ph)
            desc = f"{a.tool} {json.dumps(args, ensure_ascii=True)[:300]} [{a.root}]"
            findings = []
            host = hosts(a.root, mode)
            if a.note == "oracle-extract":
                ok, got = oracle_extract(host)
                if ok:
                    findings.append(f"blind-extracted secret {got!r} via git log -G")
                results.append((a.category, mode, "oracle: bisect `git log -G ^STRIPE=<prefix>[class]` on {B}/repo", "ok", findings))
                continue
            blobs = []
            status = "ok"
            if a.race:
                vdir, fn = race_driver(a.race)
                args = fill(a.args, {**ph, "V": vdir})
                desc = f"{a.tool} {json.dumps(args)[:300]} [race {a.race}, {RACE_TRIES} tries]"
                fl = Flipper(fn); fl.start()
                try:
                    for _ in range(RACE_TRIES):
                        st, blob, dt = call(host, a.tool, args)
                        blobs.append(blob)
                        if st in ("hang", "traceback"):
                            status = st
                finally:
                    fl.stop = True; fl.join()
            else:
                status, blob, dt = call(host, a.tool, args)
                blobs.append(blob)
                if dt > HANG_S:
                    status = "hang"
            text = "\n".join(blobs)
            for label, n in ns:
                if n in text:
                    findings.append(f"leak {label}")
            findings = sorted(set(findings))
            if status in ("hang", "traceback"):
                findings.append(f"{status}: {text[-300:]!r}")
            made = [p for p in os.listdir(F.M)]
            if made:
                findings.append(f"marker created {made}")
                for p in made:
                    subprocess.run(["rm", "-rf", os.path.join(F.M, p)])
            st1 = arena_state()
            if st1 != state0:
                diff = sorted({*st1.keys() ^ state0.keys(), *(k for k in st1.keys() & state0.keys() if st1[k] != state0[k])})
                findings.append(f"arena changed {diff[:5]}")
                state0 = st1
            results.append((a.category, mode, desc, status, findings))
    # CLI: tool calls, trace files, terminal injection
    tw = "/tmp/redteam/traces"
    os.makedirs(tw, exist_ok=True)
    from agentkit._trace import Trace
    subprocess.run([sys.executable, "-m", "agentkit", "ask", "which GPUs does this host have?", "--root",
                    str(F.A), "--trace", tw + "/base.jsonl"], capture_output=True, cwd="/work/main", timeout=120)
    cli_jobs = []
    for cat, name, args in trace_attempts(tw):
        cli_jobs.append((cat, name, args))
    for name, tool, targs in (("read_file-ansi", "read_file", {"path": "{A}/ansi.txt"}),
                              ("read_file-markup", "read_file", {"path": "{A}/markup.txt"}),
                              ("cat-ansi", "run_command", {"argv": ["cat", "{A}/ansi.txt"]}),
                              ("grep-ansi", "grep", {"pattern": "RED", "path": "{A}/ansi.txt"}),
                              ("bidi", "read_file", {"path": "{A}/bidi.txt"}),
                              ("cli-link", "read_file", {"path": "{A}/link"}),
                              ("cli-vault", "read_file", {"path": "{B}/creds/hard_vault-token"}),
                              ("cli-env", "run_command", {"argv": ["env"]}),
                              ("cli-git-env", "run_command", {"argv": ["git", "-C", "{B}/repo", "show", "HEAD:.env"]}),
                              ("cli-proc", "run_command", {"argv": ["cat", "/proc/{PID}/environ"]})):
        cat = "terminal" if "ansi" in name or "markup" in name or "bidi" in name else "cli"
        cli_jobs.append((cat, name, ["tools", "call", tool, "--args", json.dumps(fill(targs, ph)), "--root", "/"]))
    from concurrent.futures import ThreadPoolExecutor
    def run_job(job, mode):
        cat, name, args = job
        st, out = cli(args, mode)
        findings = []
        if st == "hang":
            findings.append("hang > 15 s")
        if "Traceback (most recent call last)" in out:
            findings.append("traceback: " + out.split("Traceback (most recent call last)")[1][-200:].replace("\n", " | "))
        for label, n in ns:
            if n in out:
                findings.append(f"leak {label}")
        if cat == "terminal":
            for bad, what in (("\x1b]52", "OSC52 clipboard escape"), ("\x1b]8;;http://evil", "OSC8 hyperlink"),
                              ("\x1b[2J", "clear-screen escape"), ("\u202e", "bidi override")):
                if bad in out:
                    findings.append(f"terminal: raw {what} reached output")
            if "RICHMARKUP" in out and "[bold" not in out and "[red]" not in out and "[bold red]" not in out:
                findings.append("terminal: rich markup interpreted (tags vanished)")
            html = args[-1] if args[0] == "report" else None
            if html and os.path.exists(html):
                h = open(html, encoding="utf-8", errors="replace").read()
                if "<script>alert(1)</script>" in h or "<img src=x onerror" in h:
                    findings.append("html: unescaped markup in report")
        return (cat, mode, f"agentkit {' '.join(a if len(a) < 120 else a[:120] + '…' for a in args)}", st, findings)
    with ThreadPoolExecutor(8) as ex:
        futs = [ex.submit(run_job, j, m) for j in cli_jobs for m in modes]
        results += [f.result() for f in futs]
    lst.sock.close()
    F.stop_children()
    # table
    cats = defaultdict(lambda: {"n": 0, "kernel": 0, "allowlist": 0})
    for cat, mode, desc, st, fnd in results:
        c = cats[cat]
        if mode == "kernel":
            c["n"] += 1
        if fnd:
            c[mode] += 1
    print(f"{'category':22} | attempts | succeeded with kernel | succeeded allowlist-only")
    print("-" * 80)
    tot = [0, 0, 0]
    for cat in sorted(cats):
        c = cats[cat]
        print(f"{cat:22} | {c['n']:8} | {c['kernel']:21} | {c['allowlist']:24}")
        tot[0] += c["n"]; tot[1] += c["kernel"]; tot[2] += c["allowlist"]
    print("-" * 80)
    print(f"{'TOTAL':22} | {tot[0]:8} | {tot[1]:21} | {tot[2]:24}")
    print(f"\n{len(results)} runs in {time.monotonic() - t_start:.0f}s")
    succ = [r for r in results if r[4]]
    with open("/tmp/redteam/results.json", "w") as fh:
        json.dump([{"category": r[0], "mode": r[1], "call": r[2], "status": r[3], "findings": r[4]} for r in results],
                  fh, indent=1, ensure_ascii=True)
    print("\nSUCCESSES (category | mode | call | findings):")
    for cat, mode, desc, st, fnd in succ:
        print(f"- {cat} | {mode} | {desc[:220]} | {'; '.join(fnd)[:300]}")
    print("\nexpected outcomes:", json.dumps(EXPECT, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
