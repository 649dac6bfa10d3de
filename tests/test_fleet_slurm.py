"""The Slurm transport with a fake ``scontrol`` and ``srun`` on PATH that behave as Slurm's
manual says: ``scontrol show job --oneliner ID`` prints one line of Key=Value fields with the
job's ``NodeList``, ``scontrol show hostnames LIST`` one node a line; ``srun`` refuses a step
without ``--jobid`` or that names other than one node, and a step on a frozen node never
returns; and the real-Slurm tier: slurmctld and three ``slurmd -N`` on this host (below)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from agentkit import Orchestrator
from agentkit._fleet._names import InventoryError
from agentkit._fleet._slurm import SlurmTransport
from benchmarks._fleet_hosts import make_fleet

from .conftest import REPO

SCONTROL = """\
#!{py}
import os, sys
from ClusterShell.NodeSet import NodeSet, RESOLVER_NOGROUP
a = sys.argv[1:]
if a[:2] == ["show", "hostnames"]:
    print("\\n".join(NodeSet(a[2], resolver=RESOLVER_NOGROUP)))
elif a[:3] == ["show", "node", "--oneliner"]:
    drained = os.environ.get("FAKE_SLURM_DRAINED", "").split()
    for n in NodeSet(a[3], resolver=RESOLVER_NOGROUP):
        state = "MIXED+DRAIN" if n in drained else "MIXED"
        print(f"NodeName={{n}} Arch=x86_64 CoresPerSocket=1 CPUAlloc=1 State={{state}} "
              "ThreadsPerCore=1 Partitions=debug")
elif a[:2] == ["show", "job"] and "--oneliner" in a and a[-1] == "42":
    print("JobId=42 JobName=vllm UserId=u(1) JobState=RUNNING Reason=None "
          "ReqNodeList=(null) ExcNodeList=(null) NodeList=node[1-3] BatchHost=node1 NumNodes=3")
elif a[:2] == ["show", "job"] and a[-1] == "43":
    print("JobId=43 JobState=PENDING NodeList=(null) NumNodes=2")
else:
    print("slurm_load_jobs error: Invalid job id specified", file=sys.stderr)
    sys.exit(1)
"""

SRUN = """\
#!{py}
import os, sys, time
args, cmd = {{}}, []
rest = sys.argv[1:]
while rest and rest[0].startswith("-"):
    k, _, v = rest.pop(0).partition("=")
    args[k] = v
cmd = rest
if args.get("--jobid") != "42" or "--overlap" not in args or args.get("--ntasks") != "1":
    print("srun: error: bad step " + repr(args), file=sys.stderr); sys.exit(1)
node = args.get("--nodelist", "")
if "," in node or "[" in node or not node:
    print("srun: error: one node per step", file=sys.stderr); sys.exit(1)
with open(os.environ["FAKE_SLURM_LOG"], "a") as log:
    log.write(node + "\\n")
if node in os.environ.get("FAKE_SLURM_FROZEN", "").split():
    time.sleep(3600)  # the node's slurmd is stopped: the step never starts nor ends
os.execvp(cmd[0], cmd)
"""


@pytest.fixture
def slurm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, text in (("scontrol", SCONTROL), ("srun", SRUN)):
        (bin_dir / name).write_text(textwrap.dedent(text).format(py=sys.executable))
        (bin_dir / name).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.setenv("PYTHONPATH", str(REPO))  # the worker of this checkout
    monkeypatch.setenv("FAKE_SLURM_LOG", str(tmp_path / "steps.log"))
    return tmp_path


def test_job_nodes_come_from_scontrol(slurm: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_SLURM_DRAINED", "node3")
    t = SlurmTransport("42")
    assert anyio.run(t.discover) == ["node1", "node2", "node3"]
    [note] = t.notes()  # Slurm's own word on a drained node, for the answer
    assert note.startswith("the transport (Slurm) lists node3 as MIXED+DRAIN")
    with pytest.raises(InventoryError, match=r"has no nodes \(state PENDING"):
        anyio.run(SlurmTransport("43").discover)
    with pytest.raises(InventoryError, match="Invalid job id"):
        anyio.run(SlurmTransport("99").discover)
    with pytest.raises(InventoryError, match="is not a job id"):
        SlurmTransport("42; rm -rf /")


def test_a_frozen_node_does_not_stop_the_others(slurm: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    make_fleet(slurm / "f", 3, width=1)
    for i in (1, 2, 3):
        (slurm / "f" / f"n{i}").rename(slurm / "f" / f"node{i}")
    monkeypatch.setenv("FAKE_SLURM_FROZEN", "node2")
    # 10 s, not less: the healthy nodes start the real worker, which took over 4 s on a
    # 2-core machine at a load of 8 (mutmut's clean run, no bytecode cache)
    t = SlurmTransport("42", host_timeout_s=10, root=str(slurm / "f" / "{host}"),
                       remote_command=f"{sys.executable} -m agentkit._fleet.worker")
    answer = anyio.run(lambda: Orchestrator.fleet(t).investigate("q", tasks=["gpu-inventory"]))
    assert answer.fleet is not None
    assert answer.fleet.buckets == {"ok": "node[1,3]", "timed-out": "node2"}
    steps = sorted((slurm / "steps.log").read_text().split())
    assert steps == ["node1", "node2", "node3"]  # one step per node


# ---------------------------------------------------------------- the real-Slurm tier
# Debian's slurm-wlm (.ci/run installs it): slurmctld and three `slurmd -N node1..3` on this
# host, as root, auth/none and cred/none (no munge daemon: nothing here is multi-user), each
# daemon on its own loopback port, its state and spool under the test's directory. Expected
# from Slurm's manual before running: a DRAIN'd node takes no new jobs but the jobs and steps
# already on it go on (`scontrol update State=DRAIN`: "existing jobs allowed to complete"), so
# a step of the running job still runs there (ok, and the answer says Slurm lists it DRAIN:
# `scontrol show node` State=…+DRAIN); a node whose slurmd is stopped (SIGSTOP)
# cannot launch the step, which never returns (timed-out at --host-timeout, the others ok).

SLURM_CONF = """\
ClusterName=agentkit
SlurmctldHost=localhost
SlurmctldPort={ctld}
AuthType=auth/none
CredType=cred/none
SlurmUser=root
SlurmdUser=root
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool/%n
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd-%n.pid
SlurmctldLogFile={d}/slurmctld.log
SlurmdLogFile={d}/slurmd-%n.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SwitchType=switch/none
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
InactiveLimit=0
MinJobAge=10
{nodes}
PartitionName=debug Nodes=node[1-3] Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
"""


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _until(what: str, check: Callable[[], bool], seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.2)
    raise AssertionError(f"{what}: not within {seconds:g} s")


class RealSlurm:
    """slurmctld and three slurmd, started here; :meth:`close` stops each by its pid."""

    def __init__(self, d: Path) -> None:
        self.d = d
        ports = [_free_port() for _ in range(4)]
        nodes = "\n".join(f"NodeName=node{i} NodeHostname=localhost NodeAddr=127.0.0.1 "
                          f"Port={ports[i]} CPUs=2 RealMemory=100" for i in (1, 2, 3))
        (d / "state").mkdir(parents=True)
        for i in (1, 2, 3):
            (d / "spool" / f"node{i}").mkdir(parents=True)
        (d / "slurm.conf").write_text(SLURM_CONF.format(ctld=ports[0], d=d, nodes=nodes))
        self.env = {**os.environ, "SLURM_CONF": str(d / "slurm.conf")}
        self.daemons: dict[str, subprocess.Popen[bytes]] = {}
        self.job = ""

    def start(self) -> None:
        self._spawn("slurmctld", ["slurmctld", "-D", "-i"])
        for i in (1, 2, 3):
            self._spawn(f"node{i}", ["slurmd", "-D", "-N", f"node{i}"])
        _until("three idle nodes", lambda: self.out("sinfo", "-h", "-N", "-o", "%N %t")
               .split().count("idle") == 3, 30)
        self.job = self.out("sbatch", "--parsable", "-N3", "-o", "/dev/null", "--wrap",
                            "sleep 300").strip()
        _until(f"job {self.job} running", lambda: self.out(
            "squeue", "-h", "-j", self.job, "-o", "%T").strip() == "RUNNING", 30)

    def _spawn(self, name: str, argv: list[str]) -> None:
        log = (self.d / f"{name}.out").open("wb")
        self.daemons[name] = subprocess.Popen(argv, env=self.env, stdout=log,
                                              stderr=subprocess.STDOUT)

    def out(self, *argv: str) -> str:
        return subprocess.run(argv, env=self.env, capture_output=True, text=True, check=True,
                              timeout=30).stdout

    def close(self) -> None:
        """Everything started here stops: the frozen slurmd is let go, the job cancelled (its
        steps end with it, bounded), then each daemon by its pid, killed if it lingers."""
        node2 = self.daemons.get("node2")
        if node2 is not None and node2.poll() is None:
            os.kill(node2.pid, signal.SIGCONT)
        if self.job:
            subprocess.run(["scancel", self.job], env=self.env, capture_output=True,
                           timeout=30)
            with contextlib.suppress(AssertionError):  # then killed below, by pid
                _until("the job gone", lambda: not self._steps(), 20)
        for proc in self.daemons.values():
            if proc.poll() is None:
                proc.terminate()
        for proc in self.daemons.values():
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
        for pid in self._steps():  # a step daemon the job's end did not take with it
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)

    def _steps(self) -> list[int]:
        """The pids of this job's slurmstepd processes (their command line names the job;
        the job id is this cluster's, whose state lives under the test's directory)."""
        if not self.job:
            return []
        mine = f"slurmstepd: [{self.job}.".encode()
        pids = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                cmd = (entry / "cmdline").read_bytes()
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if cmd.startswith(mine) and state != "Z":
                pids.append(int(entry.name))
        return pids


@pytest.mark.slurm
def test_real_slurmd_nodes_drained_and_frozen(tmp_path: Path) -> None:
    import shutil

    missing = [b for b in ("slurmctld", "slurmd", "srun", "sbatch", "scontrol", "scancel")
               if shutil.which(b) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed: apt-get install slurm-wlm "
                    "(.ci/run does)")
    if os.geteuid() != 0:
        pytest.skip("needs root to start slurmctld and slurmd")
    make_fleet(tmp_path / "f", 3, width=1)
    for i in (1, 2, 3):
        (tmp_path / "f" / f"n{i}").rename(tmp_path / "f" / f"node{i}")
    slurm = RealSlurm(tmp_path / "slurm")
    try:
        slurm.start()
        slurm.out("scontrol", "update", "NodeName=node3", "State=DRAIN",
                  "Reason=agentkit-test")
        assert "drng" in slurm.out("sinfo", "-h", "-n", "node3", "-o", "%t")
        os.kill(slurm.daemons["node2"].pid, signal.SIGSTOP)  # node2's slurmd is frozen
        worker = f"env PYTHONPATH={REPO} {sys.executable} -m agentkit._fleet.worker"
        done = subprocess.run(
            [sys.executable, "-m", "agentkit", "ask", "Which GPU driver?", "--slurm-job",
             slurm.job, "--remote-command", worker, "--remote-root",
             str(tmp_path / "f" / "{host}"), "--host-timeout", "15", "-q", "--json",
             "--trace", str(tmp_path / "t.jsonl")],
            capture_output=True, text=True, timeout=120, cwd=REPO, env=slurm.env)
    finally:
        slurm.close()
    assert done.returncode == 9, done.stderr + done.stdout[-2000:]
    fleet = json.loads(done.stdout)["fleet"]
    assert fleet["buckets"] == {"ok": "node[1,3]", "timed-out": "node2"}, fleet["problems"]
    assert "no reply within 15s" in fleet["problems"][0]["error"]
    # the drained node answered, and the answer says what Slurm says of it
    drained = [n for n in json.loads(done.stdout)["notes"] if "node3" in n]
    assert len(drained) == 1 and "DRAIN" in drained[0], drained
    assert not any("node1" in n for n in json.loads(done.stdout)["notes"])
    assert not slurm._steps()
