"""The fleet options of ``agentkit ask`` (``--hosts``, ``--slurm-job``, ``--ray``, ``--fleet``)
and the transport they choose. Engines' libraries are imported only when one is asked for."""

from __future__ import annotations

import argparse
import os
from typing import Any

from ._errors import CLIError

_SOURCES = ("hosts", "slurm_job", "ray", "fleet")


def add_fleet(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("fleet (one question, many hosts; each host runs its own agentkit)")
    g.add_argument("--hosts", metavar="RANGE", help="SSH to these hosts: gpu[01-64], a "
                   "comma-separated list, @FILE (one a line) or ssh-config (every Host of "
                   "~/.ssh/config); host keys must be known")
    g.add_argument("--slurm-job", metavar="ID", help="every node of this Slurm job, one srun "
                   "step per node")
    g.add_argument("--ray", metavar="ADDRESS", help="every node of this Ray cluster (auto, or "
                   "HOST:PORT); needs agentkit[ray]")
    g.add_argument("--fleet", metavar="DIR", help="a directory of per-host snapshots "
                   "(DIR/<host>/), investigated here")
    add_ssh(g)
    g.add_argument("--remote-root", metavar="DIR", default="/",
                   help="the directory that stands for / on each host ({host} is replaced)")
    g.add_argument("--fleet-concurrency", type=int, metavar="N",
                   help="hosts at once (SSH default 32, Slurm 32, snapshots 8)")
    g.add_argument("--host-timeout", type=float, metavar="S", default=300.0,
                   help="give up on a host after S seconds (timed out); default 300")
    g.add_argument("--connect-timeout", type=float, metavar="S", default=10.0,
                   help="SSH: give up connecting after S seconds; default 10")


def add_ssh(g: Any) -> None:
    """How SSH hosts are reached: ``ask --hosts`` and the MCP server's ``--fleet-hosts``."""
    g.add_argument("--ssh-config", metavar="FILE", help="SSH config to read (default "
                   "~/.ssh/config)")
    g.add_argument("--known-hosts", metavar="FILE", help="known_hosts to verify host keys "
                   "against (default ~/.ssh/known_hosts); unknown keys are refused")
    g.add_argument("--remote-command", metavar="CMD", help="how a host starts agentkit's "
                   "worker (default: python3 -m agentkit._fleet.worker)")


def chosen(args: argparse.Namespace) -> str | None:
    """The fleet source named, if any (at most one may be)."""
    named = [s for s in _SOURCES if getattr(args, s, None)]
    if len(named) > 1:
        flags = ", ".join("--" + s.replace("_", "-") for s in named)
        raise CLIError(f"{flags}: name one fleet at a time")
    if named and getattr(args, "root", "/") != "/":
        raise CLIError("--root names one host; with a fleet, --remote-root sets each host's")
    return named[0] if named else None


def transport_from(args: argparse.Namespace) -> tuple[Any, list[str] | None]:
    """The transport and (when the source names them) the hosts for ``args``."""
    from .._fleet._names import InventoryError

    source = chosen(args)
    if args.fleet_concurrency is not None and args.fleet_concurrency < 1:
        raise CLIError(f"--fleet-concurrency {args.fleet_concurrency}: give at least 1")
    if args.host_timeout <= 0 or args.connect_timeout <= 0:
        raise CLIError("--host-timeout and --connect-timeout must be more than 0 seconds")
    try:
        return _make(source, args)
    except InventoryError as exc:
        raise CLIError(str(exc)) from None
    except ModuleNotFoundError as exc:
        extra = {"asyncssh": "ssh", "ray": "ray"}.get((exc.name or "").split(".")[0])
        if extra is None:
            raise
        raise CLIError(f"--{source.replace('_', '-') if source else 'hosts'} needs the "
                       f"{extra} extra, which is not installed: pip install "
                       f"'agentkit[{extra}]'") from None


def _make(source: str | None, args: argparse.Namespace) -> tuple[Any, list[str] | None]:
    limit = args.fleet_concurrency
    common = {"root": args.remote_root, "host_timeout_s": args.host_timeout}
    if args.remote_command:
        common["remote_command"] = args.remote_command
    if source == "fleet":
        from .._fleet._snapfleet import SnapshotFleet

        if args.fleet.startswith("@") and not os.path.isdir(args.fleet):
            raise CLIError(f"--fleet takes a directory of snapshots, not a host list: give "
                           f"--hosts {args.fleet} to ask the hosts it names over SSH")

        return SnapshotFleet(args.fleet, concurrency=limit or 8), None
    if source == "hosts":
        from .._fleet._inventory import hosts_from
        from .._fleet._ssh import SSHTransport

        hosts = hosts_from(args.hosts, args.ssh_config)
        return SSHTransport(config=args.ssh_config, known_hosts=args.known_hosts,
                            concurrency=limit or 32, connect_timeout_s=args.connect_timeout,
                            **common), hosts
    if source == "slurm_job":
        from .._fleet._slurm import SlurmTransport

        return SlurmTransport(args.slurm_job, concurrency=limit or 32, **common), None
    from .._fleet._ray import RayTransport

    return RayTransport(args.ray, **common), None
