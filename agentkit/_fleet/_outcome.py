"""The transport boundary: a batch of catalog tasks in, one outcome per host out.

The unit of remote work is one batch per host (never one call per tool): the host runs
agentkit's own recipe runner and sandbox locally and hands back its task results, so a fleet
of a thousand hosts costs a thousand round trips, not a thousand times the tool calls.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from .._fleet_model import HostStatus
from .._types import TaskResult, TaskSpec


class Batch(BaseModel):
    """What every host runs: the question and its catalog tasks.

    ``root`` is the directory that stands for ``/`` on the host; ``{host}`` in it is replaced
    by the host's name (a directory of per-host snapshots, a fixture tree per node).
    ``deadline_s`` bounds the batch on each host; the transport's own timeout, a little
    longer, bounds the host as a whole.

    >>> Batch(question="Is NCCL tuned?", tasks=[]).root_for("gpu07")
    '/'
    >>> Batch(question="q", tasks=[], root="/srv/fleet/{host}").root_for("gpu07")
    '/srv/fleet/gpu07'
    """

    model_config = ConfigDict(extra="forbid")
    question: str
    tasks: list[TaskSpec]
    root: str = "/"
    deadline_s: float = Field(120.0, gt=0)

    def root_for(self, host: str) -> str:
        return self.root.replace("{host}", host)


class HostOutcome(BaseModel):
    """What became of one host: its status, its task results, why it failed, how long.

    >>> HostOutcome(host="gpu07", status="unreachable", error="connection refused").results
    []
    """

    model_config = ConfigDict(extra="forbid")
    host: str
    status: HostStatus
    results: list[TaskResult] = Field(default_factory=list)
    error: str = ""
    wall_s: float = 0.0


@runtime_checkable
class Transport(Protocol):
    """How a fleet is reached: find its hosts, run a batch on each.

    ``run`` yields exactly one :class:`HostOutcome` per host it was given, as each arrives;
    a host that fails is a failed outcome, never an exception. Cancelling the iteration
    (the run's deadline) stops the hosts still running.

    >>> import tempfile
    >>> from agentkit import SnapshotFleet
    >>> isinstance(SnapshotFleet(tempfile.mkdtemp()), Transport)
    True
    """

    name: str

    async def discover(self) -> list[str]:
        """The hosts this transport reaches, checked (see ``_names.check_name``)."""
        ...

    def run(self, hosts: Sequence[str], batch: Batch) -> AsyncIterator[HostOutcome]:
        """One outcome per host, in the order they finish."""
        ...
