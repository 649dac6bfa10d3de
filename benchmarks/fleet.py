"""What a fleet costs per host: the 1,000-host snapshot fleet (run and fold), and the SSH
transport against a bare asyncssh loop doing the same exec on the same in-process servers
(the ratio is the figure; absolute numbers depend on the machine).

    python -m benchmarks.fleet [--hosts 1000] [--ssh 100] [--concurrency 32] [--slurm 40]

The Slurm tier runs the transport through a fake ``srun`` on PATH that execs the worker, beside
a bare asyncssh loop exec'ing the same worker command with the same batch on the same number of
hosts (both start one Python process per host: the ratio is the transport's own overhead), and
the fold of those hosts' outcomes as a share of the bare loop's time.

Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

from agentkit import Orchestrator
from agentkit._fleet._fold import Fold
from agentkit._fleet._snapfleet import SnapshotFleet

from ._fleet_hosts import make_fleet


def snapshot_tier(tmp: Path, n: int) -> dict[str, Any]:
    make_fleet(tmp / "snap", n, outliers=(n // 10, n // 2, n - 1), broken=(13, n - 200))
    orch = Orchestrator.fleet(SnapshotFleet(tmp / "snap"))
    outcomes: list[Any] = []

    async def collect() -> None:
        from agentkit._fleet._batch import bundled_catalog
        from agentkit._fleet._outcome import Batch

        plan = orch.plan_from_catalog("Which driver?", ["gpu-inventory"])
        batch = Batch(question=plan.question, tasks=plan.tasks)
        bundled_catalog()
        t = SnapshotFleet(tmp / "snap")
        async for o in t.run(await t.discover(), batch):
            outcomes.append(o)

    t0 = time.perf_counter()
    anyio.run(collect)
    run_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    fold = Fold("snapshots", [o.host for o in outcomes])
    for o in outcomes:
        fold.add(o)
    fleet = fold.fleet()
    fold_s = time.perf_counter() - t0
    return {"hosts": n, "run_s": round(run_s, 3), "fold_s": round(fold_s, 4),
            "ms_per_host": round((run_s + fold_s) / n * 1000, 3), "recap": fleet.recap}


def ssh_tier(tmp: Path, n: int, concurrency: int) -> dict[str, Any]:
    import asyncssh

    from agentkit._fleet._ssh import SSHTransport

    from ._ssh_servers import CLIENT_OPTIONS, start

    names = make_fleet(tmp / "ssh", n, width=4)
    trees = {h: tmp / "ssh" / h for h in names}

    async def go() -> dict[str, Any]:
        fleet = await start(trees, {}, tmp)
        try:
            transport = SSHTransport(config=str(fleet.config), known_hosts=str(fleet.known_hosts),
                                     concurrency=concurrency, options=CLIENT_OPTIONS)
            orch = Orchestrator.fleet(transport, hosts=names)
            t0 = time.perf_counter()
            answer = await orch.investigate("Which driver?", tasks=["gpu-inventory"])
            ours = time.perf_counter() - t0
            limit = anyio.CapacityLimiter(concurrency)
            payload = b'{"protocol":1,"batch":{"question":"q","tasks":[]}}'

            async def bare(h: str) -> None:  # the floor: connect, one exec, same reply path
                async with limit, asyncssh.connect(
                        h, config=[str(fleet.config)], known_hosts=str(fleet.known_hosts),
                        **CLIENT_OPTIONS) as conn:
                    await conn.run("worker", input=payload, encoding=None)

            t0 = time.perf_counter()
            async with anyio.create_task_group() as tg:
                for h in names:
                    tg.start_soon(bare, h)
            floor = time.perf_counter() - t0
            assert answer.fleet is not None
            return {"hosts": n, "concurrency": concurrency, "agentkit_s": round(ours, 3),
                    "bare_asyncssh_s": round(floor, 3), "ratio": round(ours / floor, 2),
                    "peak_connections": fleet.stats.peak, "recap": answer.fleet.recap}
        finally:
            fleet.close()

    return anyio.run(go)


_SRUN = """#!{py}
import os, sys
rest = sys.argv[1:]
while rest and rest[0].startswith("-"):
    rest.pop(0)
os.execvp(rest[0], rest)
"""


def slurm_tier(tmp: Path, n: int, concurrency: int) -> dict[str, Any]:
    import os
    import sys

    import asyncssh

    from agentkit._fleet._outcome import Batch
    from agentkit._fleet._slurm import SlurmTransport
    from agentkit._fleet._wire import outcome, request

    from ._ssh_servers import CLIENT_OPTIONS, start

    names = make_fleet(tmp / "slurm", n, outliers=(n // 2,), width=3)
    (tmp / "bin").mkdir()
    (tmp / "bin" / "srun").write_text(_SRUN.format(py=sys.executable))
    (tmp / "bin" / "srun").chmod(0o755)
    os.environ["PATH"] = f"{tmp / 'bin'}:{os.environ['PATH']}"  # a benchmark's own process
    os.environ["PYTHONPATH"] = str(Path(__file__).resolve().parent.parent)
    command = f"{sys.executable} -m agentkit._fleet.worker"
    orch = Orchestrator.fleet(SnapshotFleet(tmp / "slurm"))
    plan = orch.plan_from_catalog("Which driver?", ["gpu-inventory"])
    batch = Batch(question=plan.question, tasks=plan.tasks, root=str(tmp / "slurm" / "{host}"))

    async def go() -> dict[str, Any]:
        transport = SlurmTransport("42", concurrency=concurrency, remote_command=command)
        t0 = time.perf_counter()
        outcomes = [o async for o in transport.run(names, batch)]
        ours = time.perf_counter() - t0
        t0 = time.perf_counter()
        fold = Fold("slurm", names)
        for o in outcomes:
            fold.add(o)
        recap = fold.fleet().recap
        fold_s = time.perf_counter() - t0
        fleet = await start({h: tmp / "slurm" / h for h in names},
                            {h: "exec" for h in names}, tmp)
        limit = anyio.CapacityLimiter(concurrency)
        bare_ok = []

        async def bare(h: str) -> None:  # the floor: connect, exec the worker, read its reply
            async with limit, asyncssh.connect(
                    h, config=[str(fleet.config)], known_hosts=str(fleet.known_hosts),
                    **CLIENT_OPTIONS) as conn:
                done = await conn.run(command, input=request(batch, h), encoding=None)
                bare_ok.append(outcome(h, done.stdout, b"", done.exit_status, 0).status)

        try:
            t0 = time.perf_counter()
            async with anyio.create_task_group() as tg:
                for h in names:
                    tg.start_soon(bare, h)
            floor = time.perf_counter() - t0
        finally:
            fleet.close()
        assert bare_ok.count("ok") == n, bare_ok
        return {"hosts": n, "concurrency": concurrency, "slurm_s": round(ours, 3),
                "bare_asyncssh_exec_s": round(floor, 3), "ratio": round(ours / floor, 2),
                "fold_s": round(fold_s, 4), "fold_share_of_bare": round(fold_s / floor, 4),
                "recap": recap}

    return anyio.run(go)


REFERENCE_QUESTION = "Is NCCL tuned the same on all nodes?"


def reference_tier(tmp: Path, n: int) -> dict[str, Any]:
    """Issue 23's fleet: the reference example on ``n`` hosts, 3 with NCCL_PROTO=Simple, 1
    without it, 2 empty snapshot directories; the whole fleet question (plan, run, fold,
    answer) against one host's own investigation of the same question, best of three each.
    ``extra_host_ratio`` is what each host past the first adds, over one host's own time."""
    from agentkit._sandbox._host import Host

    from ._fleet_hosts import make_reference_fleet

    odd = {"simple": (17, 42, 163), "unset": (99,), "empty": (120, 180)}
    make_reference_fleet(tmp / "ref", n, **{k: tuple(i for i in v if i <= n)
                                           for k, v in odd.items()})
    make_reference_fleet(tmp / "one", 1)
    make_reference_fleet(tmp / "alone", 6)  # a fresh copy per timing: no cache carries over

    def fleet(root: Path) -> tuple[float, Any]:
        async def go() -> Any:
            async with Orchestrator.fleet(SnapshotFleet(root)) as orch:
                return await orch.investigate(REFERENCE_QUESTION)
        t0 = time.perf_counter()
        answer = anyio.run(go)
        return time.perf_counter() - t0, answer

    def alone(name: str) -> float:
        async def go() -> Any:
            async with Orchestrator.catalog(Host.at(str(tmp / "alone" / name))) as orch:
                return await orch.investigate(REFERENCE_QUESTION)
        t0 = time.perf_counter()
        anyio.run(go)
        return time.perf_counter() - t0

    alone("gpu001")  # warm: imports, the catalog, the first sandbox
    one = sorted(alone(f"gpu{i:03d}") for i in range(2, 7))[2]  # the median of five hosts
    one_fleet = min(fleet(tmp / "one")[0] for _ in range(3))
    runs = [fleet(tmp / "ref") for _ in range(3)]
    whole, answer = min(runs, key=lambda r: r[0])
    extra = (whole - one_fleet) / (n - 1)
    return {"hosts": n, "one_host_s": round(one, 3), "fleet_of_one_s": round(one_fleet, 3),
            "fleet_s": round(whole, 3), "per_extra_host_s": round(extra, 4),
            "extra_host_ratio": round(extra / one, 2), "recap": answer.fleet.recap,
            "bottom_line": [c.text for c in answer.bottom_line]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--hosts", type=int, default=1000)
    ap.add_argument("--ssh", type=int, default=100)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--slurm", type=int, default=40)
    ap.add_argument("--reference", type=int, default=200,
                    help="hosts in issue 23's reference fleet (0: skip)")
    ap.add_argument("--only-reference", action="store_true")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        if a.only_reference:
            print(json.dumps({"reference": reference_tier(Path(d), a.reference)}))
            return
        out = {"snapshot": snapshot_tier(Path(d), a.hosts),
               "ssh": ssh_tier(Path(d), a.ssh, a.concurrency)}
        if a.slurm:
            out["slurm"] = slurm_tier(Path(d), a.slurm, min(a.concurrency, 8))
        if a.reference:
            out["reference"] = reference_tier(Path(d), a.reference)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
