"""A loopback mock of an OpenAI-compatible chat server for benchmarks.

Plain asyncio protocol (keep-alive HTTP/1.1, Content-Length bodies) so that the server's own
CPU stays far below the clients': each reply is sent ``latency`` seconds after the request,
from a timer, without parsing the JSON. A request with fewer than K tool results gets a tool
call (``echo``); then the final turn: a ``submit_result`` call when the request offers that
tool (agentkit), plain text otherwise (everyone else).

Each subagent's echo arguments are its own: the first ``subagent-<i>`` in the request (its
task) and the step, so no two subagents ever make the same tool call (a tool cache hits only
where real work would repeat itself). ``GET /stats`` returns the request count, the peak
number in flight, the request bytes received and the server's own CPU seconds (so a run can
show the server was not the bottleneck); ``POST /reset`` zeroes them. The listen backlog is
``--backlog`` (default 8192; the kernel caps it at ``net.core.somaxconn``).

    python -m benchmarks.mock_server --port 8801 --latency 0.05 --k 3
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import time

_TOOL_MARKERS = (b'"role":"tool"', b'"role": "tool"')
_WHO = re.compile(rb"subagent-(\d+)")


def _reply(body: bytes, k: int) -> bytes:
    done = sum(body.count(m) for m in _TOOL_MARKERS)
    if done < k:
        who = _WHO.search(body)
        name = f"subagent-{who.group(1).decode()}" if who else "anonymous"
        calls = [{"id": f"call_{done}", "type": "function",
                  "function": {"name": "echo", "arguments": json.dumps(
                      {"text": f"{name} step {done}"})}}]
        msg = {"role": "assistant", "content": None, "tool_calls": calls}
    elif b'"submit_result"' in body:
        args = json.dumps({"status": "partial", "summary": "done"})
        msg = {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_final", "type": "function",
             "function": {"name": "submit_result", "arguments": args}}]}
    else:
        msg = {"role": "assistant", "content": "done"}
    return json.dumps({"id": "x", "object": "chat.completion", "model": "mock",
                       "choices": [{"index": 0, "message": msg, "finish_reason": "stop"}],
                       "created": 0, "usage": {"prompt_tokens": 10, "completion_tokens": 5,
                                               "total_tokens": 15}}).encode()


class Stats:
    requests = 0
    in_flight = 0
    peak = 0
    bytes_in = 0
    cpu0 = 0.0


class Handler(asyncio.Protocol):
    def __init__(self, latency: float, k: int) -> None:
        self.latency, self.k = latency, k
        self.buf = b""
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.buf += data
        while True:
            head_end = self.buf.find(b"\r\n\r\n")
            if head_end < 0:
                return
            head = self.buf[:head_end].decode("latin-1")
            length = 0
            for line in head.split("\r\n")[1:]:
                name, _, value = line.partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            end = head_end + 4 + length
            if len(self.buf) < end:
                return
            body, self.buf = self.buf[head_end + 4 : end], self.buf[end:]
            self._handle(head.split(" ", 2)[:2], body)

    def _send(self, payload: bytes) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                 b"Content-Length: " + str(len(payload)).encode() +
                                 b"\r\n\r\n" + payload)

    def _handle(self, request_line: list[str], body: bytes) -> None:
        _method, path = request_line
        if path == "/stats":
            self._send(json.dumps({"requests": Stats.requests, "peak": Stats.peak,
                                   "bytes_in": Stats.bytes_in,
                                   "cpu_s": time.process_time() - Stats.cpu0}).encode())
            return
        if path == "/reset":
            Stats.requests = Stats.peak = Stats.bytes_in = 0
            Stats.cpu0 = time.process_time()
            self._send(b"{}")
            return
        Stats.requests += 1
        Stats.bytes_in += len(body)
        Stats.in_flight += 1
        Stats.peak = max(Stats.peak, Stats.in_flight)
        payload = _reply(body, self.k)

        def answer() -> None:
            Stats.in_flight -= 1
            self._send(payload)

        asyncio.get_running_loop().call_later(self.latency, answer)


async def serve(port: int, latency: float, k: int, backlog: int = 8192) -> None:
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: Handler(latency, k), "127.0.0.1", port,
                                      backlog=backlog)
    print(f"ready {port}", flush=True)
    async with server:
        await server.serve_forever()


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--latency", type=float, default=0.05)
    p.add_argument("--k", type=int, default=3)
    p.add_argument("--cpu", type=int, default=None, help="pin to this CPU")
    p.add_argument("--backlog", type=int, default=8192)
    a = p.parse_args()
    if a.cpu is not None and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {a.cpu})
    asyncio.run(serve(a.port, a.latency, a.k, a.backlog))


if __name__ == "__main__":
    main()
