"""The remote side: ``python3 -m agentkit._fleet.worker`` reads one batch on stdin, runs it
under the batch's root (default ``/``, read-only as always) and prints the results as one
JSON line. Whatever goes wrong is said in that line; the exit status is 0 when a reply was
written, so a transport tells "agentkit said no" from "agentkit is not there".

>>> import subprocess, sys  # doctest: +SKIP
>>> subprocess.run([sys.executable, "-m", "agentkit._fleet.worker"], input=b"{}",
...                capture_output=True).stdout  # doctest: +SKIP
b'{"protocol":1,...,"error":"not an agentkit fleet request of protocol 1",...}\\n'
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import anyio

if TYPE_CHECKING:
    from .._types import TaskResult
    from ._outcome import Batch


async def run_local(root: str, batch: Batch) -> tuple[list[TaskResult], str]:
    """The batch's results under ``root``, or why there are none (a root that is not there,
    a broken snapshot: said once, here, not by every task)."""
    from .._sandbox._captures import SnapshotError
    from .._sandbox._host import Host
    from ._batch import run_batch

    try:
        host = Host.at(root)
        _ = host.snapshot
    except (ValueError, FileNotFoundError, SnapshotError) as exc:
        return [], f"{type(exc).__name__}: {exc}"
    return await run_batch(host, batch), ""


async def serve(data: bytes, root: str | None = None) -> bytes:
    """The reply to one request (``root`` overrides the batch's, for tests and embedders)."""
    from ._wire import parse_request, reply

    try:
        batch = parse_request(data)
    except ValueError as exc:
        return reply(error=f"ValueError: {exc}")
    results, error = await run_local(root or batch.root, batch)
    return reply(results, error)


def main() -> int:
    from ._wire import MAX_REQUEST

    data = sys.stdin.buffer.read(MAX_REQUEST + 1)
    sys.stdout.buffer.write(anyio.run(serve, data))
    sys.stdout.buffer.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
