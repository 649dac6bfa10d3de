"""The fleet part of an :class:`~agentkit.Answer`: buckets, value groups per fact, a recap.

Only pydantic here: ``_types`` imports this module, so it must import nothing of agentkit.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

# What a transport reports for one host. "unknown-key" and "changed-key": agentkit declined
# to talk to the host because its SSH host key is not in known_hosts, or is there and does
# not match (OpenSSH's "REMOTE HOST IDENTIFICATION HAS CHANGED"). Buckets of their own: the
# remedy of an unknown key (check the fingerprint, then add it) is the opposite of a changed
# key's (possibly a man in the middle: never just add it), and neither is "unreachable"'s.
HostStatus = Literal["ok", "failed", "unreachable", "timed-out", "unknown-key",
                     "changed-key"]
# Where a host lands after folding: "ok" hosts that disagree with the fleet become "differs";
# a host that answered but whose investigation found no model server is "no-server" (nothing
# to compare, and not "the same" as anything).
Bucket = Literal["ok", "differs", "no-server", "failed", "unreachable", "timed-out",
                 "unknown-key", "changed-key"]
BUCKETS: tuple[Bucket, ...] = ("ok", "differs", "no-server", "failed", "unreachable",
                               "timed-out", "unknown-key", "changed-key")
# Buckets of hosts that answered with something to compare.
ANSWERED: tuple[Bucket, ...] = ("ok", "differs")
# Values listed per fact (the rest are counted): by the fleet answer and by the trace report,
# which sits below the fleet and so reads it here.
MAX_GROUPS = 10


class _Model(BaseModel):
    # built when first used: a one-host answer never validates these (Answer's own schema
    # holds the fleet's)
    model_config = ConfigDict(extra="forbid", defer_build=True)


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
    # where the hosts' value was set (file:line), for a compared fact that says so: at most
    # a few distinct places, sorted; more are counted in ``where_more``
    where: list[str] = Field(default_factory=list)
    where_more: int = 0


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
    # a compared fact (declared by the template's ``compare:``): how a person names it
    label: str = ""

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
    ...       recap="ok=2").hosts
    2
    """

    transport: str
    hosts: int
    buckets: dict[str, str] = Field(default_factory=dict)
    counts: dict[str, int] = Field(default_factory=dict)
    facts: list[FleetFact] = Field(default_factory=list)
    # the facts a person compares (templates' ``compare:``), one per meaning: the NCCL
    # variables one by one, engine, version, model, TP size, each verdict
    compared: list[FleetFact] = Field(default_factory=list)
    problems: list[FleetProblem] = Field(default_factory=list)
    recap: str = ""
