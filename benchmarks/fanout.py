"""Fan-out benchmark: agentkit against a plain-aiohttp floor (and optional peers), all in one
session, interleaved, server and client pinned to different cores where possible.

    python -m benchmarks.fanout --quick                  # agentkit + floor, N=128, K=3, once
    python -m benchmarks.fanout --n 1 16 128 512 --reps 3 --runners floor httpx agentkit

Each measurement runs in a fresh process and reports wall time, client CPU per model call and
peak RSS growth per concurrent subagent. Results are ratios to the floor measured in the same
session: the machine is shared and noisy, absolute times mean little.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import time
from typing import Any


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _pin(cpu: int) -> None:
    if hasattr(os, "sched_setaffinity") and (os.cpu_count() or 1) > 1:
        os.sched_setaffinity(0, {cpu % (os.cpu_count() or 1)})


def measure_one(runner: str, url: str, n: int, k: int) -> dict[str, Any]:
    from ._runners import RUNNERS, warm_up

    fn = RUNNERS[runner]
    warm_up(runner)  # imports and one-time set-up are start-up cost, measured separately
    base_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    cpu0, t0 = time.process_time(), time.perf_counter()
    extra = asyncio.run(fn(url, n, k))
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    calls = n * (k + 1)  # K tool steps and a final answer per subagent
    return {"runner": runner, "n": n, "k": k, "wall_s": wall, "cpu_s": cpu, "calls": calls,
            "cpu_ms_per_call": 1000 * cpu / calls,
            "rss_growth_kib_per_subagent": (rss - base_rss) / n, **extra}


class Server:
    def __init__(self, latency: float, k: int) -> None:
        self.port = _free_port()
        cpus = os.cpu_count() or 1
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.mock_server", "--port", str(self.port),
             "--latency", str(latency), "--k", str(k), *(["--cpu", "1"] if cpus > 1 else [])],
            stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        self.proc.stdout.readline()
        self.url = f"http://127.0.0.1:{self.port}/v1/chat/completions"

    def stats(self) -> dict[str, Any]:
        import urllib.request

        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/stats") as r:
            return dict(json.load(r))

    def reset(self) -> None:
        import urllib.request

        urllib.request.urlopen(urllib.request.Request(
            f"http://127.0.0.1:{self.port}/reset", data=b"", method="POST")).read()

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)


PYTHON = os.environ.get("BENCH_PYTHON", sys.executable)  # a venv with the peers, if separate


def run_child(runner: str, url: str, n: int, k: int) -> dict[str, Any]:
    out = subprocess.run([PYTHON, "-m", "benchmarks.fanout", "--one", runner, "--url",
                          url, "--n", str(n), "--k", str(k)], capture_output=True, text=True,
                         check=False, timeout=600)
    if out.returncode != 0:
        raise RuntimeError(f"{runner} n={n} failed: {out.stderr[-2000:]}")
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def session(runners: list[str], ns: list[int], k: int, reps: int, latency: float
            ) -> list[dict[str, Any]]:
    server = Server(latency, k)
    rows: list[dict[str, Any]] = []
    try:
        for n in ns:
            samples: dict[str, list[dict[str, Any]]] = {r: [] for r in runners}
            for rep in range(reps):
                order = runners if rep % 2 == 0 else list(reversed(runners))  # interleave
                for r in order:
                    server.reset()
                    got = run_child(r, server.url, n, k)
                    st = server.stats()
                    got["server_requests"], got["peak_in_flight"] = st["requests"], st["peak"]
                    if st["requests"] != got["calls"]:
                        raise RuntimeError(f"{r}: server saw {st['requests']} of {got['calls']}")
                    samples[r].append(got)
            floor = statistics.median(s["wall_s"] for s in samples.get("floor", [])) \
                if "floor" in samples else None
            ideal = (k + 1) * latency
            for r, runs in samples.items():
                walls = [s["wall_s"] for s in runs]
                cpus = [s["cpu_ms_per_call"] for s in runs]
                row = {"runner": r, "n": n, "k": k, "reps": reps,
                       "wall_s": statistics.median(walls), "wall_min": min(walls),
                       "wall_max": max(walls), "cpu_ms_per_call": statistics.median(cpus),
                       "ratio_to_ideal": statistics.median(walls) / ideal,
                       "rss_growth_kib_per_subagent": statistics.median(
                           s["rss_growth_kib_per_subagent"] for s in runs),
                       "peak_in_flight": max(s["peak_in_flight"] for s in runs)}
                if floor:
                    row["ratio_to_floor"] = row["wall_s"] / floor
                for extra in ("cache_hits", "trace_bytes"):
                    if extra in runs[0]:
                        row[extra] = runs[0][extra]
                rows.append(row)
    finally:
        server.close()
    return rows


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--quick", action="store_true", help="agentkit + floor, N=128, one rep")
    p.add_argument("--one", help=argparse.SUPPRESS)
    p.add_argument("--url", help=argparse.SUPPRESS)
    p.add_argument("--n", type=int, nargs="+", default=[1, 16, 128, 512])
    p.add_argument("--k", type=int, default=3)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--latency", type=float, default=0.05)
    p.add_argument("--runners", nargs="+", default=["floor", "agentkit"])
    a = p.parse_args()
    if a.one:
        _pin(0)
        print(json.dumps(measure_one(a.one, a.url, a.n[0], a.k)))
        return
    if a.quick:
        rows = session(["floor", "agentkit"], [128], a.k, 1, a.latency)
        ak = next(r for r in rows if r["runner"] == "agentkit")
        fl = next(r for r in rows if r["runner"] == "floor")
        print(json.dumps({"n": 128, "k": a.k, "ratio_to_floor": round(ak["ratio_to_floor"], 3),
                          "cpu_ms_per_call": round(ak["cpu_ms_per_call"], 3),
                          "floor_cpu_ms_per_call": round(fl["cpu_ms_per_call"], 3),
                          "cpu_ratio_to_floor": round(ak["cpu_ms_per_call"]
                                                      / fl["cpu_ms_per_call"], 3)}))
        return
    rows = session(a.runners, a.n, a.k, a.reps, a.latency)
    for r in rows:
        print(json.dumps({k: (round(v, 4) if isinstance(v, float) else v)
                          for k, v in r.items()}))


if __name__ == "__main__":
    main()
