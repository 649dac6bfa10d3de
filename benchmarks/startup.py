"""What `agentkit ask` pays before it answers: the process on the reference example (median of
N, beside `python -c pass` in the same run, interleaved), its CPU time, and the modules whose
import costs most (``python -X importtime``, self time, the minimum over three runs).

agentkit's bytecode is compiled before timing, as an installed package's is: a shell that sets
PYTHONDONTWRITEBYTECODE (this project's machine does) would otherwise have every run compile
the modules Python never wrote a ``.pyc`` for, and the benchmark would measure the compiler.

    python -m benchmarks.startup [--reps 10] [--top 12] [--json]
"""

from __future__ import annotations

import argparse
import compileall
import importlib.util
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
QUESTION = ("Do previous optimizations, esp around allreduce apply? Would setting k/v cache to "
            "fp8 as the model recommends also improve perf?")


def _ask_argv(example: str) -> list[str]:
    return [sys.executable, "-m", "agentkit", "ask", QUESTION, "--root",
            str(ROOT / "examples" / example), "-q", "--trace", os.devnull]


def compile_package() -> int:
    """agentkit's modules without current bytecode, compiled now (0 when all were current)."""
    pkg = ROOT / "agentkit"
    stale = [p for p in pkg.rglob("*.py") if not _bytecode_current(p)]
    if stale and not compileall.compile_dir(pkg, quiet=1):
        raise SystemExit("compileall failed on agentkit")
    return len(stale)


def _bytecode_current(src: Path) -> bool:
    """The check Python's import makes: a .pyc of this interpreter's magic number recording
    the source's mtime and size (timestamp invalidation, compileall's default)."""
    pyc = Path(importlib.util.cache_from_source(str(src)))
    try:
        head = pyc.read_bytes()[:16]
    except OSError:
        return False
    st = src.stat()
    return (head[:4] == importlib.util.MAGIC_NUMBER and head[4:8] == bytes(4)
            and int.from_bytes(head[8:12], "little") == int(st.st_mtime) & 0xFFFFFFFF
            and int.from_bytes(head[12:16], "little") == st.st_size & 0xFFFFFFFF)


def _timed(argv: list[str]) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True, cwd=ROOT)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def processes(reps: int, example: str) -> dict[str, Any]:
    ask, base = [], []
    for _ in range(reps):
        base.append(_timed([sys.executable, "-c", "pass"]))
        ask.append(_timed(_ask_argv(example)))
    med = statistics.median
    pairs = list(zip(ask, base, strict=True))
    return {"ask_wall_s": round(med(w for w, _ in ask), 3),
            "ask_cpu_s": round(med(c for _, c in ask), 3),
            "python_wall_s": round(med(w for w, _ in base), 3),
            "ask_wall_min_s": round(min(w for w, _ in ask), 3),
            # the target is a ratio measured by pairs: each ask beside the bare start just
            # before it, so a change of load between them moves both
            "ratio_by_pairs": round(med(a[0] / b[0] for a, b in pairs), 1),
            "cpu_ratio_by_pairs": round(med(a[1] / max(b[1], 1e-3) for a, b in pairs), 1)}


def importers(example: str, top: int) -> list[tuple[str, float]]:
    best: dict[str, float] = {}
    for _ in range(3):
        done = subprocess.run([sys.executable, "-X", "importtime", *_ask_argv(example)[1:]],
                              capture_output=True, text=True, cwd=ROOT, check=True)
        seen: dict[str, float] = {}
        for line in done.stderr.splitlines():
            if not line.startswith("import time:") or "|" not in line:
                continue
            parts = line.split("|")
            try:
                self_us = float(parts[0].split(":")[1])
            except ValueError:  # the header line
                continue
            seen[parts[2].strip()] = self_us / 1000
        for mod, ms in seen.items():
            best[mod] = min(ms, best.get(mod, ms))
    total = sum(best.values())
    return [("(all imports)", round(total, 1))] + [
        (m, round(ms, 1)) for m, ms in sorted(best.items(), key=lambda x: -x[1])[:top]]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--reps", type=int, default=10)
    p.add_argument("--top", type=int, default=12)
    p.add_argument("--example", default="blackwell-kimi")
    p.add_argument("--json", action="store_true")
    a = p.parse_args()
    compiled = compile_package()
    out = {"compiled_modules": compiled, **processes(a.reps, a.example),
           "importers_ms": importers(a.example, a.top)}
    if a.json:
        print(json.dumps(out))
        return
    print(f"agentkit's bytecode: {compiled} modules compiled before timing, "
          "the others already current")
    print(f"agentkit ask: {out['ask_wall_s']} s wall (min {out['ask_wall_min_s']}), "
          f"{out['ask_cpu_s']} s CPU; python -c pass: {out['python_wall_s']} s; "
          f"{out['ratio_by_pairs']}x by pairs (CPU {out['cpu_ratio_by_pairs']}x)")
    for mod, ms in out["importers_ms"]:
        print(f"  {ms:7.1f} ms  {mod}")


if __name__ == "__main__":
    main()
