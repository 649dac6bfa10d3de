"""What an MCP client may ask a fleet about: nothing, unless the server's operator said so.

A tool call comes from a model, and a model's arguments are whatever its context made them:
letting it name SSH hosts would let a prompt injection reach any host the server's keys open.
So the operator lists what clients may reach when starting the server (``--fleet-dir`` for
snapshot fleets, ``--fleet-hosts`` for SSH), a client names a subset, and anything else is
refused with a one-line reason. Host keys are verified as always (``refused`` otherwise).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ._fleet._names import InventoryError, expand


class FleetRefused(ValueError):
    """A fleet request this server does not allow; the message says why and what would."""


@dataclass(frozen=True)
class FleetPolicy:
    """The fleets a server's clients may ask about.

    >>> FleetPolicy().allows_any
    False
    >>> try:
    ...     FleetPolicy().transport(hosts="gpu[01-02]", fleet_dir=None)
    ... except FleetRefused as exc:
    ...     print(str(exc)[:43])
    fleet investigations are off on this server
    """

    fleet_dirs: tuple[str, ...] = ()  # snapshot fleet directories (and those inside them)
    ssh_hosts: tuple[str, ...] = ()  # the SSH hosts clients may name, expanded
    ssh: dict[str, Any] = field(default_factory=dict)  # SSHTransport settings (config, …)

    @property
    def allows_any(self) -> bool:
        return bool(self.fleet_dirs or self.ssh_hosts)

    def transport(self, *, hosts: str | None,
                  fleet_dir: str | None) -> tuple[Any, list[str] | None]:
        """The transport and hosts for a client's ``hosts`` and ``fleet_dir`` arguments
        (``fleet_dir``: a snapshot fleet, ``hosts`` a subset of it; else SSH to ``hosts``)."""
        if not self.allows_any:
            raise FleetRefused("fleet investigations are off on this server: its operator "
                               "starts it with --fleet-dir DIR or --fleet-hosts RANGE to "
                               "allow them")
        wanted = _hosts(hosts) if hosts is not None else None
        if fleet_dir is not None:
            return self._snapshots(fleet_dir), wanted
        assert wanted is not None
        return self._ssh(wanted), wanted

    def _snapshots(self, fleet_dir: str) -> Any:
        from ._fleet._snapfleet import SnapshotFleet
        from ._schema import _inside

        if not self.fleet_dirs or not _inside(fleet_dir, self.fleet_dirs):
            raise FleetRefused(f"fleet_dir {fleet_dir!r} is not allowed; allowed: "
                               f"{list(self.fleet_dirs) or 'none (no --fleet-dir)'}")
        return SnapshotFleet(os.path.realpath(fleet_dir))

    def _ssh(self, wanted: list[str]) -> Any:
        if not self.ssh_hosts:
            raise FleetRefused("SSH to hosts is off on this server (no --fleet-hosts); give "
                               "fleet_dir for a snapshot fleet")
        allowed = set(self.ssh_hosts)
        outside = [h for h in wanted if h not in allowed]
        if outside:
            from ._fleet._names import fold

            raise FleetRefused(f"hosts {fold(outside)} are not in this server's --fleet-hosts; "
                               "ask about those it allows")
        from ._fleet._ssh import SSHTransport

        return SSHTransport(**self.ssh)


def _hosts(spec: str) -> list[str]:
    try:
        return list(dict.fromkeys(expand(spec)))
    except InventoryError as exc:
        raise FleetRefused(str(exc)) from None


def policy_from(fleet_dirs: Sequence[str] = (), fleet_hosts: Sequence[str] = (),
                **ssh: Any) -> FleetPolicy:
    """A policy from the server's options (each ``fleet_hosts`` item a range, a list,
    ``@FILE`` or ``ssh-config``); InventoryError for a range that names no host."""
    from ._fleet._inventory import hosts_from

    hosts = [h for spec in fleet_hosts for h in hosts_from(spec, ssh.get("config"))]
    return FleetPolicy(fleet_dirs=tuple(os.path.realpath(d) for d in fleet_dirs),
                       ssh_hosts=tuple(dict.fromkeys(hosts)),
                       ssh={k: v for k, v in ssh.items() if v is not None})
