"""The Slurm transport with a fake ``scontrol`` and ``srun`` on PATH that behave as Slurm's
manual says: ``scontrol show job --oneliner ID`` prints one line of Key=Value fields with the
job's ``NodeList``, ``scontrol show hostnames LIST`` one node a line; ``srun`` refuses a step
without ``--jobid`` or that names other than one node, and a step on a frozen node never
returns. The real-slurmd tier (three ``slurmd -N`` on one host) is not here: see the report."""

from __future__ import annotations

import os
import sys
import textwrap
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
import sys
from ClusterShell.NodeSet import NodeSet, RESOLVER_NOGROUP
a = sys.argv[1:]
if a[:2] == ["show", "hostnames"]:
    print("\\n".join(NodeSet(a[2], resolver=RESOLVER_NOGROUP)))
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


def test_job_nodes_come_from_scontrol(slurm: Path) -> None:
    assert anyio.run(SlurmTransport("42").discover) == ["node1", "node2", "node3"]
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
    t = SlurmTransport("42", host_timeout_s=4, root=str(slurm / "f" / "{host}"),
                       remote_command=f"{sys.executable} -m agentkit._fleet.worker")
    answer = anyio.run(lambda: Orchestrator.fleet(t).investigate("q", tasks=["gpu-inventory"]))
    assert answer.fleet is not None
    assert answer.fleet.buckets == {"ok": "node[1,3]", "timed-out": "node2"}
    steps = sorted((slurm / "steps.log").read_text().split())
    assert steps == ["node1", "node2", "node3"]  # one step per node


REAL_TIER = ("the real-Slurm tier: as root, slurmctld and three `slurmd -N node1..node3` on "
             "this host (a slurm.conf with NodeName=node[1-3] NodeHostname=localhost and a "
             "port each, munge running), `sbatch -N3 --wrap 'sleep 600'`, then `agentkit ask "
             "--slurm-job ID` must answer with ok=3 and one srun step per node in sacct, and "
             "with one slurmd stopped (SIGSTOP) that node timed-out and the others ok")


@pytest.mark.slurm
def test_real_slurmd_nodes() -> None:
    import shutil

    missing = [b for b in ("slurmctld", "slurmd", "srun", "sbatch", "munged")
               if shutil.which(b) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed (apt-get install slurm-wlm munge); "
                    f"would run {REAL_TIER}")
    if os.geteuid() != 0:
        pytest.skip(f"needs root to start slurmctld and slurmd; would run {REAL_TIER}")
    pytest.skip(f"Slurm is installed but this tier is not written yet: {REAL_TIER}")
