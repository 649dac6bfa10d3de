"""Fan-out benchmark: agentkit, its peers and a plain-aiohttp floor, against one mock server,
all in one session, interleaved; every figure is read as a ratio to the floor of that session.

    python -m benchmarks.fanout --quick        # floor + agentkit, N=128, one JSON line
    python -m benchmarks.fanout --full --doc docs/benchmarks.md   # the documented run
    python -m benchmarks.fanout --n 16 128 --reps 1 --runners floor agentkit:default \\
        --out /tmp/r.jsonl

Each measurement is a fresh process (pinned to CPU 0, the server to CPU 1 where there are
two): imports first (start-up cost, not measured here), then set-up (timed: ``setup_s``),
then the fan-out (timed: ``wall_s``, client CPU, peak RSS growth). Every measurement is
appended to the results file (JSON lines) as soon as it finishes, so a runner that fails,
hangs or is killed loses nothing of the others': it is a row with ``status`` ``failed`` or
``timeout`` and its error. A runner that failed or timed out at one N is not run at larger N
(a ``skipped`` row says why). Render the results with ``python -m benchmarks.render``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import shlex
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "fanout.jsonl"

AGENTKIT = ["agentkit:default", "agentkit:nocache", "agentkit:tuned"]
PEERS = [f"{p}:{c}" for p in ("langgraph", "openai-agents", "pydantic-ai")
         for c in ("best", "default")]
# The documented full run: N = 16..2048 for everyone, 4096 for the floor and agentkit only
# (the peers' slowest configurations take minutes at 2048 on a 2-core machine: 180 s is
# their limit, past which the row says "timeout"). About 40 minutes on 2 cores.
FULL = dict(n=[16, 128, 512, 2048, 4096], reps=2, big_n=2048, big_reps=1,
            peers_max_n=2048, runners=["floor", *AGENTKIT, *PEERS], tools=["def", "async"],
            timeout=180.0)
PACKAGES = ["aiohttp", "httpx", "anyio", "pydantic", "orjson", "openai", "openai-agents",
            "pydantic-ai-slim", "langgraph", "langchain-openai", "langchain-core"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _pin(cpu: int) -> None:
    if hasattr(os, "sched_setaffinity") and (os.cpu_count() or 1) > 1:
        os.sched_setaffinity(0, {cpu % (os.cpu_count() or 1)})


# ---------------------------------------------------------------------------------------
# one measurement (the child process)


def measure_one(runner: str, tool: str, url: str, n: int, k: int) -> dict[str, Any]:
    import asyncio

    from ._runners import PREPARE, tool_calls_so_far, warm_up

    prepare = PREPARE[runner]
    warm_up(runner)
    out: dict[str, Any] = {}

    async def main() -> None:
        s_cpu, s_t = time.process_time(), time.perf_counter()
        run, close = await prepare(url, n, tool)
        out["setup_s"] = time.perf_counter() - s_t
        out["setup_cpu_s"] = time.process_time() - s_cpu
        base_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        calls0 = tool_calls_so_far()
        cpu0, t0 = time.process_time(), time.perf_counter()
        extra = await run(k)
        out["wall_s"], out["cpu_s"] = time.perf_counter() - t0, time.process_time() - cpu0
        out["tool_body_calls"] = tool_calls_so_far() - calls0 - 1
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        out["rss_kib_per_subagent"] = (rss - base_rss) / n  # ru_maxrss is KiB on Linux
        out.update(extra)
        out.update(await close() or {})

    asyncio.run(main())
    calls = n * (k + 1)  # K tool steps and a final answer per subagent
    out["model_calls"] = calls
    out["cpu_ms_per_call"] = 1000 * out["cpu_s"] / calls
    if "trace_bytes" in out:
        out["trace_bytes_per_subagent"] = out["trace_bytes"] / n
    return out


# ---------------------------------------------------------------------------------------
# the session (the parent process)


class Server:
    def __init__(self, latency: float, k: int) -> None:
        self.port = _free_port()
        cpus = os.cpu_count() or 1
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.mock_server", "--port", str(self.port),
             "--latency", str(latency), "--k", str(k), *(["--cpu", "1"] if cpus > 1 else [])],
            stdout=subprocess.PIPE, text=True, cwd=ROOT)
        assert self.proc.stdout is not None
        self.proc.stdout.readline()
        self.url = f"http://127.0.0.1:{self.port}/v1/chat/completions"

    def stats(self) -> dict[str, Any]:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/stats", timeout=60) as r:
            return dict(json.load(r))

    def reset(self) -> None:
        urllib.request.urlopen(urllib.request.Request(
            f"http://127.0.0.1:{self.port}/reset", data=b"", method="POST"), timeout=60).read()

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)


PYTHON = os.environ.get("BENCH_PYTHON", sys.executable)  # a venv with the peers, if separate


def _child_env() -> dict[str, str]:
    # Nothing leaves 127.0.0.1 and nobody's configuration changes a run: no OpenAI key (the
    # Agents SDK would upload its traces with one), no LangSmith tracing, no AGENTKIT_*.
    drop = ("OPENAI_", "LANGSMITH_", "LANGCHAIN_", "AGENTKIT_", "HTTP_PROXY", "HTTPS_PROXY",
            "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


_EXC = re.compile(r"^(?:[A-Za-z_][\w.]*\.)?[A-Za-z_]\w*(?:Error|Exception|Timeout|Exit"
                  r"|Interrupt|Group)\b.*")


def error_line(stderr: str) -> str:
    """The exception a child died of: the last ``SomeError: message`` line of its stderr
    (warnings printed while it shut down come after it), else its last unindented line."""
    lines = [ln for ln in stderr.strip().splitlines() if ln and not ln.startswith(" ")]
    for ln in reversed(lines):
        if _EXC.match(ln):
            return ln
    return lines[-1] if lines else ""


def run_child(runner: str, tool: str, url: str, n: int, k: int, timeout: float
              ) -> dict[str, Any]:
    cmd = [PYTHON, "-m", "benchmarks.fanout", "--one", runner, "--tool", tool, "--url", url,
           "--n", str(n), "--k", str(k)]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, check=False,
                              timeout=timeout, cwd=ROOT, env=_child_env())
    except subprocess.TimeoutExpired as exc:
        err = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else ""
        return {"status": "timeout", "error": f"no result within {timeout:g} s (killed)",
                "stderr_tail": err[-2000:]}
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        return {"status": "failed",
                "error": f"exit {done.returncode}: {error_line(done.stderr)}"[:500],
                "stderr_tail": done.stderr[-2000:]}
    return {"status": "ok", **json.loads(lines[-1])}


def _versions() -> dict[str, str]:
    from importlib import metadata

    got = {}
    for p in PACKAGES:
        try:
            got[p] = metadata.version(p)
        except metadata.PackageNotFoundError:
            got[p] = "not installed"
    return got


def _machine() -> dict[str, Any]:
    cpu = platform.processor()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        load = os.getloadavg()[0]
    except OSError:
        load = None
    return {"cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version(),
            "platform": platform.platform(), "load_1m_at_start": load}


def _git() -> dict[str, Any]:
    def git(*a: str) -> str:
        return subprocess.run(["git", *a], cwd=ROOT, capture_output=True, text=True,
                              check=False).stdout

    return {"commit": git("rev-parse", "HEAD").strip(),
            "dirty_paths": [ln[3:] for ln in git("status", "--porcelain").splitlines()]}


def _write(fh: IO[str], row: dict[str, Any]) -> None:
    fh.write(json.dumps({k: (round(v, 6) if isinstance(v, float) else v)
                         for k, v in row.items()}) + "\n")
    fh.flush()
    os.fsync(fh.fileno())


def session(a: argparse.Namespace, command: str) -> Path:
    from ._runners import NO_TOOL_VARIANTS, PREPARE

    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    combos = [(r, t) for r in a.runners
              for t in (["-"] if r in NO_TOOL_VARIANTS else a.tools)]
    server = Server(a.latency, a.k)
    broken: dict[tuple[str, str], str] = {}  # failed or timed out at a smaller N
    t_start = time.time()
    with out.open("a" if a.append else "w", encoding="utf-8") as fh:
        _write(fh, {"kind": "session", "started": time.strftime("%Y-%m-%d %H:%M:%S %z"),
                    "command": command, "k": a.k, "latency_s": a.latency, "ns": a.n,
                    "reps": a.reps, "big_n": a.big_n, "big_reps": a.big_reps,
                    "peers_max_n": a.peers_max_n, "timeout_s": a.timeout,
                    "runners": a.runners, "tools": a.tools, "machine": _machine(),
                    "versions": _versions(), "git": _git()})
        try:
            for n in a.n:
                reps = a.big_reps if n >= a.big_n else a.reps
                todo = [(r, t) for r, t in combos
                        if not (r.split(":")[0] not in ("floor", "httpx", "agentkit")
                                and n > a.peers_max_n)]
                for rep in range(reps):
                    order = todo if rep % 2 == 0 else list(reversed(todo))  # interleave
                    for r, t in order:
                        base = {"kind": "run", "runner": r, "tool": t, "n": n, "k": a.k,
                                "rep": rep}
                        if (r, t) in broken:
                            if rep == 0:
                                _write(fh, {**base, "status": "skipped",
                                            "error": broken[(r, t)]})
                            continue
                        if r not in PREPARE:
                            got = {"status": "failed", "error": f"unknown runner {r!r} (not "
                                   "installed? pip install -e '.[bench]')"}
                        else:
                            server.reset()
                            got = run_child(r, t, server.url, n, a.k, a.timeout)
                            st = server.stats()
                            want = n * (a.k + 1)
                            got.update(server_requests=st["requests"],
                                       peak_in_flight=st["peak"],
                                       request_kib_per_call=st["bytes_in"] / 1024 / want,
                                       server_cpu_ms_per_call=1000 * st["cpu_s"] / want)
                            if got["status"] == "ok" and st["requests"] != want:
                                got.update(status="failed", error=f"server saw "
                                           f"{st['requests']} requests, not {want}")
                        if got["status"] != "ok":
                            broken[(r, t)] = f"{got['status']} at N={n}: {got['error']}"[:300]
                        _write(fh, {**base, **got})
                        print(f"N={n} rep={rep} {r} {t}: {got['status']} "
                              f"{got.get('wall_s', 0):.3f}s", file=sys.stderr, flush=True)
        finally:
            server.close()
            _write(fh, {"kind": "end", "elapsed_s": time.time() - t_start})
    return out


def quick(a: argparse.Namespace) -> None:
    server = Server(a.latency, a.k)
    try:
        got = {}
        for r in ("floor", "agentkit:default"):
            server.reset()
            got[r] = run_child(r, "async", server.url, 128, a.k, a.timeout)
            if got[r]["status"] != "ok":
                raise SystemExit(f"{r}: {got[r]['error']}")
    finally:
        server.close()
    ak, fl = got["agentkit:default"], got["floor"]
    print(json.dumps({"n": 128, "k": a.k, "ratio_to_floor": round(ak["wall_s"] / fl["wall_s"], 3),
                      "cpu_ms_per_call": round(ak["cpu_ms_per_call"], 3),
                      "floor_cpu_ms_per_call": round(fl["cpu_ms_per_call"], 3),
                      "cpu_ratio_to_floor": round(ak["cpu_ms_per_call"]
                                                  / fl["cpu_ms_per_call"], 3)}))


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--quick", action="store_true", help="floor + agentkit, N=128, one rep")
    p.add_argument("--full", action="store_true",
                   help="the documented run: " + ", ".join(f"{k}={v}" for k, v in FULL.items()))
    p.add_argument("--one", help=argparse.SUPPRESS)
    p.add_argument("--url", help=argparse.SUPPRESS)
    p.add_argument("--tool", default="async", help=argparse.SUPPRESS)
    p.add_argument("--n", type=int, nargs="+", default=[16, 128, 512])
    p.add_argument("--k", type=int, default=3, help="tool steps per subagent")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--big-n", type=int, default=2048, help="from this N on, --big-reps reps")
    p.add_argument("--big-reps", type=int, default=1)
    p.add_argument("--peers-max-n", type=int, default=2048,
                   help="the peers are not run above this N")
    p.add_argument("--latency", type=float, default=0.05, help="the mock's reply delay, s")
    p.add_argument("--runners", nargs="+", default=["floor", *AGENTKIT])
    p.add_argument("--tools", nargs="+", default=["def", "async"], choices=["def", "async"])
    p.add_argument("--timeout", type=float, default=420.0, help="per measurement, s")
    p.add_argument("--out", default=str(RESULTS), help="results file (JSON lines)")
    p.add_argument("--append", action="store_true", help="append to --out, do not replace it")
    p.add_argument("--doc", help="then render the results into this file's fan-out section "
                   "(python -m benchmarks.render --doc DOC)")
    a = p.parse_args(argv)
    if a.one:
        _pin(0)
        print(json.dumps(measure_one(a.one, a.tool, a.url, a.n[0], a.k)))
        return
    if a.quick:
        quick(a)
        return
    if a.full:
        for key, value in FULL.items():
            setattr(a, key, value)
    command = "python -m benchmarks.fanout " + shlex.join(sys.argv[1:] if argv is None
                                                          else argv)
    out = session(a, command)
    print(out)
    if a.doc:
        from . import render

        render.main([str(out), "--doc", a.doc])


if __name__ == "__main__":
    main()
