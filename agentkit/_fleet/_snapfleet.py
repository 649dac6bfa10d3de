"""The snapshot fleet: a directory of per-host snapshots (``fleet/<host>/``, each written by
``agentkit snapshot``), run here. The offline path, and the one tests and benchmarks use."""

from __future__ import annotations

import os
import time
from collections.abc import AsyncIterator, Sequence

from ._names import InventoryError, check_name
from ._outcome import Batch, HostOutcome


class SnapshotFleet:
    """Hosts are the subdirectories of ``directory``; each is investigated as a snapshot.

    >>> import anyio, os, tempfile
    >>> fleet_dir = tempfile.mkdtemp()
    >>> for name in ("gpu02", "gpu01"):
    ...     os.mkdir(os.path.join(fleet_dir, name))
    >>> anyio.run(SnapshotFleet(fleet_dir).discover)
    ['gpu01', 'gpu02']
    """

    name = "snapshots"

    def __init__(self, directory: str | os.PathLike[str], *, concurrency: int = 8) -> None:
        self.directory = os.path.abspath(os.fspath(directory))
        self.concurrency = concurrency
        if not os.path.isdir(self.directory):
            raise InventoryError(f"--fleet {os.fspath(directory)!r} is not a directory: give "
                                 "a directory with one snapshot per host (fleet/<host>/)")

    async def discover(self) -> list[str]:
        # a link whose target is gone is a host whose snapshot broke: it is asked (and
        # fails with the reason), not dropped from the answer
        names = sorted(e.name for e in os.scandir(self.directory)
                       if (e.is_dir() or e.is_symlink()) and not e.name.startswith("."))
        if not names:
            raise InventoryError(f"{self.directory} holds no host directories: write one "
                                 "with `agentkit snapshot --fleet DIR --host NAME`")
        return [check_name(n) for n in names]

    def run(self, hosts: Sequence[str], batch: Batch) -> AsyncIterator[HostOutcome]:
        from ._fanout import fan_out

        return fan_out(hosts, lambda h: self._one(h, batch), self.concurrency)

    async def _one(self, host: str, batch: Batch) -> HostOutcome:
        from .worker import run_local

        t0 = time.perf_counter()
        path = os.path.join(self.directory, host)
        if not os.path.isdir(path):
            return HostOutcome(host=host, status="unreachable",
                               error=f"no snapshot directory {path}")
        empty = _empty(path)
        if empty:
            return HostOutcome(host=host, status="failed", error=empty,
                               wall_s=round(time.perf_counter() - t0, 6))
        results, error = await run_local(path, batch)
        wall = round(time.perf_counter() - t0, 6)
        if error:  # said of "<snapshot>", so that hosts broken alike fold into one line
            return HostOutcome(host=host, status="failed",
                               error=error.replace(path, "<snapshot>"), wall_s=wall)
        return HostOutcome(host=host, status="ok", results=results, wall_s=wall)


def _empty(path: str) -> str:
    """Why the snapshot at ``path`` cannot be investigated at all (an empty or unreadable
    directory: investigating it would find nothing and look like a host with nothing on it),
    said of ``<snapshot>`` so that hosts broken alike fold into one line; "" when it can."""
    try:
        with os.scandir(path) as entries:
            if next(entries, None) is None:
                return "empty snapshot: <snapshot> holds no files (the capture never ran "\
                       "or was lost); write it again with `agentkit snapshot`"
    except OSError as exc:
        return f"unreadable snapshot: <snapshot>: {exc.strerror or exc}"
    return ""
