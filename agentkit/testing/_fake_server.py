"""A scripted LLM HTTP server on 127.0.0.1 speaking the OpenAI Chat Completions or the
Anthropic Messages wire format, for testing through the real httpx clients.

The script is a function of the parsed request body returning a :class:`Reply`: a status,
headers, a JSON body (or raw bytes, to send something broken), a delay, or a connection drop.
The server counts requests and the peak number in flight.
"""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    body: dict[str, Any] | None = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    raw: bytes | None = None
    delay_s: float = 0.0
    drop: bool = False
    reset: bool = False  # close with RST instead of answering
    drip_s: float = 0.0  # send the body one byte at a time, this long apart

    @classmethod
    def openai(cls, text: str = "", calls: list[tuple[str, dict[str, Any] | str]] | None = None,
               **kw: Any) -> Reply:
        """A chat completion; ``calls`` are (tool name, arguments) pairs."""
        tool_calls = [{"id": f"call_{i}_{name}", "type": "function",
                       "function": {"name": name, "arguments": args if isinstance(args, str)
                                    else json.dumps(args)}}
                      for i, (name, args) in enumerate(calls or [])]
        msg: dict[str, Any] = {"role": "assistant", "content": text or None}
        if tool_calls:
            msg["tool_calls"] = tool_calls
        return cls(body={"id": "chatcmpl-fake", "object": "chat.completion", "model": "fake",
                         "choices": [{"index": 0, "message": msg,
                                      "finish_reason": "tool_calls" if tool_calls else "stop"}],
                         "usage": {"prompt_tokens": 100, "completion_tokens": 20,
                                   "total_tokens": 120}}, **kw)

    @classmethod
    def anthropic(cls, text: str = "",
                  calls: list[tuple[str, dict[str, Any]]] | None = None, **kw: Any) -> Reply:
        content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        content += [{"type": "tool_use", "id": f"toolu_{i}_{name}", "name": name, "input": args}
                    for i, (name, args) in enumerate(calls or [])]
        return cls(body={"id": "msg_fake", "type": "message", "role": "assistant",
                         "model": "fake", "content": content,
                         "stop_reason": "tool_use" if calls else "end_turn",
                         "usage": {"input_tokens": 100, "output_tokens": 20}}, **kw)


Script = Callable[[dict[str, Any]], Reply]


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that gave up (deadline, cancellation) is expected here, not an error.
        import sys

        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class FakeLLMServer:
    """``with FakeLLMServer(script) as server: server.base_url`` (``…/v1``)."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.times: list[float] = []
        self.in_flight = 0
        self.peak_in_flight = 0
        self._lock = threading.Lock()
        self._server = _Server(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,),
                                        daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def __enter__(self) -> FakeLLMServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                with server._lock:
                    server.times.append(time.monotonic())
                    server.requests.append(body)
                    server.headers.append({k.lower(): v for k, v in self.headers.items()})
                    server.in_flight += 1
                    server.peak_in_flight = max(server.peak_in_flight, server.in_flight)
                try:
                    reply = server.script(body)
                    if reply.delay_s:
                        time.sleep(reply.delay_s)
                    if reply.drop:
                        self.close_connection = True
                        self.connection.shutdown(socket.SHUT_RDWR)
                        return
                    if reply.reset:
                        self.close_connection = True
                        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                                   struct.pack("ii", 1, 0))
                        self.connection.close()
                        return
                    data = reply.raw if reply.raw is not None else json.dumps(reply.body).encode()
                    self.send_response(reply.status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    for k, v in reply.headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    if reply.drip_s:
                        for i in range(len(data)):
                            self.wfile.write(data[i : i + 1])
                            self.wfile.flush()
                            time.sleep(reply.drip_s)
                    else:
                        self.wfile.write(data)
                finally:
                    with server._lock:
                        server.in_flight -= 1

        return Handler
