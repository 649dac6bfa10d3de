"""The worker's protocol: a batch as one JSON document on stdin, the results as one on
stdout. Remote output is untrusted: it is size-capped and validated before it is believed."""

from __future__ import annotations

import functools

import orjson
from pydantic import TypeAdapter, ValidationError

from .._types import TaskResult
from ._outcome import Batch, HostOutcome

PROTOCOL = 1
MAX_REPLY = 64 * 1024 * 1024  # a host's results; past this the host is failed, not read on
MAX_REQUEST = 4 * 1024 * 1024


@functools.cache
def _results() -> TypeAdapter[list[TaskResult]]:
    """The whole list at once: a "results" that is not a list is a failed host, never a
    TypeError out of the parser (Ray's transport calls it in its own loop, for every host
    after this one). Built on first use: the worker imports this module and never parses a
    reply, and the schema costs ~30 ms of each host's start."""
    return TypeAdapter(list[TaskResult])


def request(batch: Batch, host: str) -> bytes:
    """The bytes sent to ``host``: the batch with its root made the host's own.

    >>> request(Batch(question="q", tasks=[], root="/f/{host}"), "n1")[:30]
    b'{"protocol":1,"batch":{"questi'
    """
    one = batch.model_copy(update={"root": batch.root_for(host)})
    return orjson.dumps({"protocol": PROTOCOL, "batch": one.model_dump(mode="json")})


def reply(results: list[TaskResult] | None = None, error: str = "") -> bytes:
    """The worker's answer (results, or why there are none), one line."""
    from .._version import __version__

    body = {"protocol": PROTOCOL, "agentkit": __version__, "error": error,
            "results": [r.model_dump(mode="json") for r in results or ()]}
    return orjson.dumps(body, option=orjson.OPT_APPEND_NEWLINE)


def outcome(host: str, stdout: bytes, stderr: bytes, exit_code: int | None,
            wall_s: float) -> HostOutcome:
    """What a worker's output says about ``host``: its results, or a failed outcome that
    says why (the worker's own error, a bad exit, output that is not a reply)."""

    def failed(why: str) -> HostOutcome:
        return HostOutcome(host=host, status="failed", error=why, wall_s=wall_s)

    tail = _tail(stderr)
    if len(stdout) > MAX_REPLY:
        return failed(f"the worker's reply is over {MAX_REPLY} bytes; not read")
    try:
        body = orjson.loads(stdout) if stdout.strip() else None
    except orjson.JSONDecodeError:
        body = None
    if not isinstance(body, dict) or body.get("protocol") != PROTOCOL:
        seen = f"exit {exit_code}" + (f": {tail}" if tail else "")
        return failed(f"no worker reply ({seen}); is agentkit installed on the host? "
                      "(python3 -m agentkit._fleet.worker)")
    if body.get("error"):
        return failed(str(body["error"])[:2000])
    try:
        results = _results().validate_python(body.get("results") or [])
    except ValidationError as exc:
        return failed(f"the worker's results do not validate: {exc.errors()[0]['msg']}")
    return HostOutcome(host=host, status="ok", results=results, wall_s=wall_s)


def parse_request(data: bytes) -> Batch:
    """The batch a worker was sent (ValueError if it is not one)."""
    if len(data) > MAX_REQUEST:
        raise ValueError(f"the request is over {MAX_REQUEST} bytes")
    body = orjson.loads(data)
    if not isinstance(body, dict) or body.get("protocol") != PROTOCOL:
        raise ValueError(f"not an agentkit fleet request of protocol {PROTOCOL}")
    try:
        return Batch.model_validate(body.get("batch"))
    except ValidationError as exc:
        raise ValueError(f"bad batch: {exc.errors()[0]['msg']}") from None


def _tail(stderr: bytes) -> str:
    text = stderr[-2000:].decode("utf-8", "replace").strip()
    return " ".join(text.splitlines()[-3:])[-500:]
