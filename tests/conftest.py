"""Shared fixtures. Every test runs with outbound connections limited to loopback and with
no user configuration leaking in: a test cannot reach a real model by accident."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"
REFERENCE_QUESTION = ("Do previous optimizations, esp around allreduce apply? Would setting k/v "
                      "cache to fp8 as the model recommends also improve perf?")

_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


def _loopback(sock: socket.socket, address: object) -> None:
    if sock.family == socket.AF_UNIX:
        return
    host = address[0] if isinstance(address, tuple) else str(address)
    if not (host in ("localhost", "::1") or str(host).startswith("127.")):
        raise ConnectionRefusedError(f"tests may only connect to 127.0.0.1, not {address!r}")


def _connect(self: socket.socket, address: object) -> None:
    _loopback(self, address)
    return _real_connect(self, address)


def _connect_ex(self: socket.socket, address: object) -> int:
    _loopback(self, address)
    return _real_connect_ex(self, address)


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    monkeypatch.setattr(socket.socket, "connect", _connect)
    monkeypatch.setattr(socket.socket, "connect_ex", _connect_ex)
    for var in list(os.environ):
        if var.startswith("AGENTKIT_") or var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
            monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AGENTKIT_CONFIG", str(tmp_path / "no-config.toml"))
    (tmp_path / "no-config.toml").write_text("")
    monkeypatch.setenv("AGENTKIT_TRACE_DIR", str(tmp_path / "traces"))
    # compiled templates are not cached across tests (tests/test_jinja_cache.py turns it on):
    # a test must not pass on code compiled by another run, nor a mutant on its original's
    monkeypatch.setenv("AGENTKIT_CACHE_DIR", "off")
    yield


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root
