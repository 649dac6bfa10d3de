"""Catalog mode on the reference example: the investigation itself (plan → tasks → answer,
in process, warm) and `agentkit ask` as a whole process (cold), each beside a baseline
measured in the same run (an in-process no-op investigation step; `python -c pass`).

    python -m benchmarks.catalog [--reps 10]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
QUESTION = ("Do previous optimizations, esp around allreduce apply? Would setting k/v cache to "
            "fp8 as the model recommends also improve perf?")


def in_process(reps: int, example: str) -> list[float]:
    import anyio

    from agentkit import Host, Orchestrator

    host = Host.at(ROOT / "examples" / example)
    times = []
    for _ in range(reps + 1):
        orch = Orchestrator.catalog(host)
        t0 = time.perf_counter()
        anyio.run(orch.investigate, QUESTION)
        times.append(time.perf_counter() - t0)
    return times[1:]  # the first run compiles templates and regexes


def whole_process(reps: int, example: str) -> tuple[list[float], list[float]]:
    ask, base = [], []
    for _ in range(reps):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        base.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "agentkit", "ask", QUESTION, "--root",
                        str(ROOT / "examples" / example), "-q", "--trace", "/dev/null"],
                       check=True, capture_output=True)
        ask.append(time.perf_counter() - t0)
    return ask, base


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--reps", type=int, default=10)
    p.add_argument("--example", default="blackwell-kimi")
    a = p.parse_args()
    inv = in_process(a.reps, a.example)
    ask, base = whole_process(max(3, a.reps // 2), a.example)
    print(json.dumps({
        "example": a.example,
        "investigation_ms_median": round(1000 * statistics.median(inv), 1),
        "investigation_ms_min_max": [round(1000 * min(inv), 1), round(1000 * max(inv), 1)],
        "ask_process_s_median": round(statistics.median(ask), 3),
        "python_startup_s_median": round(statistics.median(base), 3),
        "ask_ratio_to_python_startup": round(statistics.median(ask) / statistics.median(base),
                                             1)}))


if __name__ == "__main__":
    main()
