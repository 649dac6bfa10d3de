"""``agentkit snapshot OUT``: capture a host for investigation elsewhere."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ._common import add_root, host_from
from ._errors import CLIError


def register(sub: Any) -> None:
    p = sub.add_parser("snapshot", help="capture what investigations read (files, command "
                       "outputs, NVML) into a directory, secrets redacted")
    p.add_argument("out", help="new directory to write the snapshot to")
    add_root(p)
    p.add_argument("--tasks-dir", action="append", default=None, metavar="DIR")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import anyio

    from .._snapshot import SnapshotError, take_snapshot

    host = host_from(args)
    try:
        report = anyio.run(take_snapshot, host, args.out, args.tasks_dir)
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
