"""``agentkit snapshot OUT``: capture a host for investigation elsewhere; ``--fleet DIR``
writes it as one host of a snapshot fleet (``DIR/<host>/``, what ``ask --fleet`` reads)."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from ._common import add_root, host_from
from ._errors import CLIError


def register(sub: Any) -> None:
    p = sub.add_parser("snapshot", help="capture what investigations read (files, command "
                       "outputs, NVML) into a directory, secrets redacted")
    p.add_argument("out", nargs="?", help="new directory to write the snapshot to")
    p.add_argument("--fleet", metavar="DIR", help="write it as a host of this snapshot fleet, "
                   "DIR/<host>/ (instead of OUT), for `agentkit ask --fleet DIR`")
    p.add_argument("--host", metavar="NAME", help="with --fleet: the host's name in the fleet "
                   "(default: this machine's hostname)")
    add_root(p)
    p.add_argument("--tasks-dir", action="append", default=None, metavar="DIR",
                   help="extra task template directory whose captures the snapshot also "
                   "takes (repeatable)")
    p.set_defaults(func=run)


def destination(args: argparse.Namespace) -> tuple[str, str]:
    """Where the snapshot goes and the host name it records (CLIError for bad input)."""
    if args.host is not None and args.fleet is None:
        raise CLIError("--host names a host of a fleet: give it with --fleet DIR")
    if (args.out is None) == (args.fleet is None):
        raise CLIError("give a new directory OUT, or --fleet DIR to add this host to a fleet")
    if args.fleet is None:
        return args.out, ""
    from .._fleet._names import InventoryError, check_name

    name = args.host if args.host is not None else os.uname().nodename
    try:
        check_name(name)
    except InventoryError as exc:
        how = "" if args.host is not None else " (this machine's hostname): give --host NAME"
        raise CLIError(f"{exc}{how}") from None
    if os.path.exists(args.fleet) and not os.path.isdir(args.fleet):
        raise CLIError(f"--fleet {args.fleet!r} is not a directory: give a fleet directory "
                       "(one snapshot per host, DIR/<host>/)")
    out = os.path.join(args.fleet, name)
    if os.path.lexists(out):
        raise CLIError(f"{out} exists: host {name!r} is already in the fleet; remove it to "
                       "take it again, or give another --host")
    return out, name


def run(args: argparse.Namespace) -> int:
    import anyio

    from .._snapshot import SnapshotError, take_snapshot

    out, name = destination(args)
    host = host_from(args)
    try:
        report = anyio.run(take_snapshot, host, out, args.tasks_dir, name)
    except SnapshotError as exc:
        raise CLIError(str(exc)) from None
    print(f"snapshot written to {report.out}: {len(report.files)} files, "
          f"{len(report.commands)} command outputs, NVML {'yes' if report.nvml else 'no'}",
          file=sys.stderr)
    for line in report.unavailable:
        print(f"  not available: {line}", file=sys.stderr)
    for task, status in sorted(report.task_status.items()):
        if status != "ok":
            print(f"  {task}: {status} (what it could not read is not in the snapshot)",
                  file=sys.stderr)
    return 0
