"""The fleet part of an :class:`~agentkit.Answer`: buckets, value groups per fact, a recap.

Only pydantic here: ``_types`` imports this module, so it must import nothing of agentkit.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

# What a transport reports for one host. "refused": agentkit declined to talk to the host
# (its SSH host key is unknown or changed); a bucket of its own, because its remedy (verify
# the key) is not the remedy of "unreachable" (network, host down) and must never be hidden
# among them.
HostStatus = Literal["ok", "failed", "unreachable", "timed-out", "refused"]
# Where a host lands after folding: "ok" hosts that disagree with the fleet become "differs".
Bucket = Literal["ok", "differs", "failed", "unreachable", "timed-out", "refused"]
BUCKETS: tuple[Bucket, ...] = ("ok", "differs", "failed", "unreachable", "timed-out",
                               "refused")
# Values listed per fact (the rest are counted): by the fleet answer and by the trace report,
# which sits below the fleet and so reads it here.
MAX_GROUPS = 10


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FleetGroup(_Model):
    """Hosts that reported one value of a fact: the value, its node range, its evidence.

    >>> FleetGroup(text="2.27.7", nodes="gpu[01-61]", count=61).count
    61
    """

    value: Any = None
    text: str
    nodes: str
    count: int
    evidence: list[str] = Field(default_factory=list)


class FleetFact(_Model):
    """One fact across the fleet, its groups largest first.

    ``majority`` is False when the largest groups tie: no value is the fleet's then, and
    no host is called an outlier on this fact (every host that reported it "differs").

    >>> FleetFact(task="software-stack", fact="nccl_version", groups=[]).uniform
    True
    """

    task: str
    fact: str
    groups: list[FleetGroup]
    majority: bool = True

    @property
    def uniform(self) -> bool:
        return len(self.groups) <= 1


class FleetProblem(_Model):
    """Hosts that ended in the same bucket for the same reason (``dshbak -c`` style).

    >>> FleetProblem(bucket="unreachable", error="connection refused", nodes="gpu07",
    ...              count=1).bucket
    'unreachable'
    """

    bucket: Bucket
    error: str
    nodes: str
    count: int


class Fleet(_Model):
    """Where every host landed, and each fact's value groups.

    >>> Fleet(transport="snapshots", hosts=2, buckets={"ok": "n[1-2]"}, counts={"ok": 2},
    ...       recap="ok=2 differs=0 failed=0 unreachable=0 timed-out=0 refused=0").hosts
    2
    """

    transport: str
    hosts: int
    buckets: dict[str, str] = Field(default_factory=dict)
    counts: dict[str, int] = Field(default_factory=dict)
    facts: list[FleetFact] = Field(default_factory=list)
    problems: list[FleetProblem] = Field(default_factory=list)
    recap: str = ""
