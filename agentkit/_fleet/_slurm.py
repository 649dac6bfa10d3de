"""The Slurm transport: the nodes of a running job, one ``srun`` step per node.

Each node gets its own step (``srun --jobid=ID --overlap --nodelist=NODE --nodes=1
--ntasks=1``): ``--overlap`` lets the step share the job's resources with the step that
serves the model (without it, a step waits for CPUs the server holds), and one step per node
means a frozen node stalls only its own step, which agentkit kills at its deadline, while the
other nodes answer.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import time
from collections.abc import AsyncIterator, Sequence
from typing import Any

import anyio

from ._names import InventoryError, check_name
from ._outcome import Batch, HostOutcome
from ._wire import MAX_REPLY, outcome, request

DEFAULT_COMMAND = "python3 -m agentkit._fleet.worker"
_NODELIST = re.compile(r"(?:^|\s)NodeList=(\S+)")
_STATE = re.compile(r"(?:^|\s)JobState=(\S+)")
_NODENAME = re.compile(r"(?:^|\s)NodeName=(\S+)")
_STATE_NODE = re.compile(r"(?:^|\s)State=(\S+)")
# node state flags (scontrol(1), "NODE STATE CODES") under which Slurm schedules nothing new
_NOTED = frozenset({"DRAIN", "DRAINED", "DRAINING", "DOWN", "NOT_RESPONDING", "FAIL",
                    "FAILING", "MAINTENANCE", "REBOOT_REQUESTED", "REBOOT_ISSUED"})


class SlurmTransport:
    """The nodes of Slurm job ``job``.

    >>> SlurmTransport("4242").job
    '4242'
    """

    name = "slurm"

    def __init__(self, job: str, *, concurrency: int = 32, host_timeout_s: float = 300.0,
                 remote_command: str = DEFAULT_COMMAND, root: str = "/",
                 scontrol: str = "scontrol", srun: str = "srun") -> None:
        if not re.fullmatch(r"\d+(?:_\d+)?", job):
            raise InventoryError(f"--slurm-job {job!r} is not a job id (digits, or "
                                 "ARRAYJOB_TASK); see squeue --me")
        self.job = job
        self.concurrency = concurrency
        self.host_timeout_s = host_timeout_s
        self.remote_command = remote_command
        self.root = root
        self.scontrol = scontrol
        self.srun = srun
        self.states: dict[str, str] = {}  # node -> Slurm's State=, where it is not plain

    async def discover(self) -> list[str]:
        line = await self._scontrol("show", "job", "--oneliner", self.job)
        nodes = _NODELIST.search(line)
        state = _STATE.search(line)
        if nodes is None or nodes.group(1) in ("(null)", ""):
            raise InventoryError(f"Slurm job {self.job} has no nodes (state "
                                 f"{state.group(1) if state else 'unknown'}): ask about a "
                                 "running job")
        names = (await self._scontrol("show", "hostnames", nodes.group(1))).split()
        await self._node_states(nodes.group(1))
        return [check_name(n) for n in names]

    async def _node_states(self, nodelist: str) -> None:
        """Slurm's own state of the job's nodes that are draining, drained, down or not
        responding: said in the answer, since such a node may still answer (a drained
        node's running job goes on) while Slurm schedules nothing new there. A Slurm that
        cannot say leaves the answer without it."""
        try:
            text = await self._scontrol("show", "node", "--oneliner", nodelist)
        except InventoryError:
            return
        for line in text.splitlines():
            name, state = _NODENAME.search(line), _STATE_NODE.search(line)
            if name and state and set(state.group(1).split("+")) & _NOTED:
                self.states[name.group(1)] = state.group(1)

    def notes(self) -> list[str]:
        """What Slurm says of the nodes, for the answer."""
        return [f"the transport (Slurm) lists {node} as {state}: Slurm schedules no new work "
                "there; what it answered is what it runs now" for node, state in
                sorted(self.states.items())]

    async def _scontrol(self, *args: str) -> str:
        try:
            done = await anyio.run_process([self.scontrol, *args], check=False)
        except OSError as exc:
            raise InventoryError(f"cannot run {self.scontrol}: {exc.strerror}; run on a host "
                                 "with the Slurm client") from None
        if done.returncode != 0:
            why = done.stderr.decode("utf-8", "replace").strip()[:300]
            raise InventoryError(f"scontrol {' '.join(args)} failed: {why}")
        return done.stdout.decode("utf-8", "replace")

    def step(self, host: str) -> list[str]:
        """The srun command line for ``host``."""
        return [self.srun, f"--jobid={self.job}", "--overlap", f"--nodelist={host}",
                "--nodes=1", "--ntasks=1", "--quiet", *shlex.split(self.remote_command)]

    def run(self, hosts: Sequence[str], batch: Batch) -> AsyncIterator[HostOutcome]:
        from ._fanout import fan_out

        return fan_out(hosts, lambda h: self._one(h, batch), self.concurrency)

    async def _one(self, host: str, batch: Batch) -> HostOutcome:
        t0 = time.perf_counter()
        try:
            proc = await anyio.open_process(self.step(host), stdin=subprocess.PIPE)
        except OSError as exc:
            return HostOutcome(host=host, status="failed", error=f"cannot start srun: "
                               f"{exc.strerror}")
        try:
            with anyio.fail_after(self.host_timeout_s):
                out, err = await _talk(proc, request(batch, host))
                code = await proc.wait()
        except TimeoutError:
            return HostOutcome(host=host, status="timed-out",
                               error=f"no reply within {self.host_timeout_s:g}s (step "
                               "killed)", wall_s=round(time.perf_counter() - t0, 6))
        finally:
            with anyio.CancelScope(shield=True):
                await _stop(proc)
                await proc.aclose()  # its pipes too: left open, asyncio warns at exit
        return outcome(host, out, err, code, round(time.perf_counter() - t0, 6))


async def _talk(proc: Any, data: bytes) -> tuple[bytes, bytes]:
    got: dict[str, bytes] = {"out": b"", "err": b""}

    async def read(name: str, stream: Any, cap: int) -> None:
        parts, size = [], 0
        async for chunk in stream:
            if size < cap:
                parts.append(chunk[: cap - size])
            size += len(chunk)  # keep draining past the cap: a full pipe would stall srun
        got[name] = b"".join(parts)

    async with anyio.create_task_group() as tg:
        tg.start_soon(read, "out", proc.stdout, MAX_REPLY + 1)
        tg.start_soon(read, "err", proc.stderr, 64 * 1024)
        try:
            await proc.stdin.send(data)
            await proc.stdin.aclose()
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            # srun exited without reading the batch (the step was refused): what it said on
            # stderr, read to the end above, is the reason
            pass
    return got["out"], got["err"]


async def _stop(proc: Any) -> None:
    """srun gone: SIGTERM (srun passes it to the step), then SIGKILL after a grace."""
    if proc.returncode is not None:
        return
    proc.terminate()
    with anyio.move_on_after(2):
        await proc.wait()
        return
    proc.kill()
    await proc.wait()
