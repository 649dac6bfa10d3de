"""What the kernel layer (bubblewrap) costs: each command, and a whole catalog answer, with the
sandbox in `kernel` mode against `allowlist` mode (the allowlist alone) in the same run. The
ratio is the figure; absolute times depend on the machine.

    python -m benchmarks.kernel_cost [--reps 30] [--ask-reps 5]

Per command: the median wall time of one `run_command` call through the Sandbox, for a few
commands an investigation makes (a small file read, a sliced file read that gets a redacted
copy, a recursive grep, a program with no operands). Per answer: `agentkit ask` as a process
on the live host (`--root /`, where commands run) and on the reference example.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

from agentkit import Host, Sandbox
from agentkit._sandbox._kernel import layer
from agentkit._sandbox._paths import Root

ROOT = Path(__file__).resolve().parent.parent
QUESTION = "Is NCCL tuned for this topology? Would an FP8 KV cache help?"


def _tree(base: Path) -> Path:
    d = base / "etc"
    d.mkdir()
    for i in range(40):
        (d / f"unit{i}.service").write_text(f"[Service]\nExecStart=/usr/bin/x{i}\n" * 20)
    (d / "vllm.env").write_text("NCCL_P2P_LEVEL=NVL\nHF_TOKEN=hf_" + "a" * 34 + "\n")
    return d


def _commands(d: Path) -> dict[str, list[str]]:
    return {"uname -a": ["uname", "-a"], "cat small file": ["cat", str(d / "unit1.service")],
            "tail -c (redacted copy)": ["tail", "-c", "20", str(d / "vllm.env")],
            "grep -r (40 files)": ["grep", "-r", "NCCL", str(d)]}


def per_command(reps: int) -> list[tuple[str, float, float]]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        d = _tree(Path(tmp))
        for name, argv in _commands(d).items():
            times: dict[str, float] = {}
            for mode in ("allowlist", "kernel"):
                host = Host(root=Root("/", allow=(tmp,)), sandbox=mode)
                samples = []
                for _ in range(reps):
                    box = Sandbox(host, task_id="bench")  # a new one: no cached answer
                    t = time.perf_counter()
                    r: Any = anyio.run(box.call, "run_command", {"argv": argv})
                    samples.append(time.perf_counter() - t)
                    assert r.ok, r.error
                times[mode] = statistics.median(samples)
            rows.append((name, times["allowlist"] * 1e3, times["kernel"] * 1e3))
    return rows


def per_answer(root: str, reps: int) -> tuple[float, float]:
    out = {}
    for mode in ("allowlist", "kernel"):
        env = {**os.environ, "AGENTKIT_SANDBOX": mode, "AGENTKIT_CONFIG": "/dev/null"}
        samples = []
        with tempfile.TemporaryDirectory() as tmp:
            env["AGENTKIT_TRACE_DIR"] = tmp
            for _ in range(reps):
                t = time.perf_counter()
                done = subprocess.run([sys.executable, "-m", "agentkit", "ask", QUESTION,
                                       "--root", root, "--brief"], env=env, capture_output=True,
                                      cwd=ROOT)
                # 7: answered "nothing could be established" (a host that serves no model)
                assert done.returncode in (0, 7), done.stderr
                samples.append(time.perf_counter() - t)
        out[mode] = statistics.median(samples)
    return out["allowlist"], out["kernel"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--ask-reps", type=int, default=5)
    args = ap.parse_args()
    if layer("auto").mode != "kernel":
        sys.exit("the kernel layer cannot run here; nothing to compare")
    print("| command | allowlist-only ms | kernel ms | ratio |\n|---|---:|---:|---:|")
    for name, a, k in per_command(args.reps):
        print(f"| {name} | {a:.2f} | {k:.2f} | {k / a:.2f}x |", flush=True)
    print("\n| `agentkit ask` (process) | allowlist-only s | kernel s | ratio |")
    print("|---|---:|---:|---:|")
    for label, root in (("live host, --root /", "/"),
                        ("reference example", str(ROOT / "examples" / "blackwell-kimi"))):
        a, k = per_answer(root, args.ask_reps)
        print(f"| {label} | {a:.3f} | {k:.3f} | {k / a:.2f}x |", flush=True)


if __name__ == "__main__":
    main()
