"""What an investigation costs on a big host: a generated tree with hundreds of systemd units,
dozens of model directories, a large site-packages and many containers, against the bundled
reference example measured in the same run (the ratio is the figure; the absolute numbers
depend on the machine).

    python -m benchmarks.host_cost [--units 500] [--models 50] [--packages 3000] [--reps 3]

Reports, for each tree: the `agentkit ask` wall time as a whole process, the trace size, and
the tool calls made (globs, greps, file reads, parses, commands). Nothing on the hot path
should grow with the number of units, models or packages that do not serve.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
QUESTION = ("Do previous optimizations, esp around allreduce apply? Would setting k/v cache to "
            "fp8 as the model recommends also improve perf?")
BASE = "blackwell-kimi"

_UNIT = """[Unit]
Description=Service {n}
After=network.target

[Service]
Type=simple
ExecStart=/usr/bin/{prog} --config /etc/svc{n}/config.yaml
Restart=on-failure
Environment=LOG_LEVEL=info

[Install]
WantedBy=multi-user.target
"""


def build(dest: Path, units: int, models: int, packages: int) -> Path:
    """The reference example grown into a big host: its serving unit and models stay; around
    them, units that start other programs (a tenth of them Python services), models that
    nothing serves, installed packages and containers that are not servers."""
    root = dest / "big-host"
    shutil.copytree(ROOT / "examples" / BASE, root, symlinks=True)
    system = root / "etc/systemd/system"
    for n in range(units):
        prog = "python3 -m worker" if n % 10 == 0 else f"daemon{n}"
        (system / f"svc{n:03d}.service").write_text(_UNIT.format(n=n, prog=prog))
    for n in range(models):
        d = root / f"models/org{n % 7}/model-{n:02d}"
        d.mkdir(parents=True, exist_ok=True)
        (d / "config.json").write_text(json.dumps({"architectures": ["LlamaForCausalLM"],
                                                   "num_hidden_layers": 32 + n % 16,
                                                   "hidden_size": 4096}))
    site = next((root / "opt/vllm/venv/lib").glob("python3*/site-packages"))
    for n in range(packages):
        dist = site / f"pkg{n:04d}-1.{n % 9}.0.dist-info"
        dist.mkdir()
        (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: pkg{n:04d}\n"
                                       f"Version: 1.{n % 9}.0\n")
    manifest_path = root / ".agentkit/snapshot.json"
    manifest = json.loads(manifest_path.read_text())
    rows = "".join(json.dumps({"Command": f"\"/bin/exporter --port {9000 + n}\"",
                               "ID": f"{n:064x}", "Image": f"exporter:{n}", "Names": f"exp{n}",
                               "State": "running"}) + "\n" for n in range(40))
    (root / ".agentkit/commands/docker-ps.txt").write_text(rows)
    manifest["commands"].append({"argv": ["docker", "ps", "--all", "--no-trunc", "--format",
                                          "{{json .}}"], "stdout": "commands/docker-ps.txt",
                                 "exit_code": 0})
    manifest_path.write_text(json.dumps(manifest, indent=2))
    return root


def ask(root: Path, trace: Path) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "agentkit", "ask", QUESTION, "--root", str(root),
                    "-q", "--trace", str(trace)], check=False, capture_output=True)
    return time.perf_counter() - t0


def calls(trace: Path) -> dict[str, int]:
    c: Counter[str] = Counter()
    for line in trace.read_text().splitlines():
        ev = json.loads(line)
        if ev.get("kind") == "tool" and ev.get("phase") == "start":
            c[str(ev["data"].get("tool") or ev["data"].get("name"))] += 1
    return dict(sorted(c.items()))


def measure(root: Path, reps: int, tmp: Path) -> dict[str, object]:
    trace = tmp / f"{root.name}.jsonl"
    times = [ask(root, trace) for _ in range(reps)]
    return {"ask_s_median": round(statistics.median(times), 3),
            "trace_bytes": trace.stat().st_size, "tool_calls": calls(trace)}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--units", type=int, default=500)
    p.add_argument("--models", type=int, default=50)
    p.add_argument("--packages", type=int, default=3000)
    p.add_argument("--reps", type=int, default=3)
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        big = build(tmp, a.units, a.models, a.packages)
        base = measure(ROOT / "examples" / BASE, a.reps, tmp)
        grown = measure(big, a.reps, tmp)
    print(json.dumps({
        "tree": {"units": a.units, "models": a.models, "packages": a.packages,
                 "containers": 40},
        "reference": base, "big_host": grown,
        "time_ratio": round(float(grown["ask_s_median"]) / float(base["ask_s_median"]), 2),
        "trace_ratio": round(int(grown["trace_bytes"]) / int(base["trace_bytes"]), 2)},
        indent=1))


if __name__ == "__main__":
    main()
