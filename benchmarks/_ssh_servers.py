"""In-process SSH servers on 127.0.0.1 for the fleet tests and benchmarks (real asyncssh on
both ends): each serves its own fixture tree through agentkit's worker, and some misbehave
the ways real hosts do (nothing listening, a handshake that never comes, a command that never
answers, a host key nobody knows)."""

from __future__ import annotations

import asyncio
import os
import shlex
import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncssh

_REPO = Path(__file__).resolve().parent.parent
Kind = str  # "ok" | "closed" | "hung" | "stuck" | "unknown-key" | "exec"


@dataclass
class Stats:
    open: int = 0
    peak: int = 0
    connections: int = 0
    sessions: int = 0
    # sessions per connection, keyed by the connection's serial number: id() of a closed and
    # collected connection can be reused by the next one, which counted two sessions on "one"
    per_connection: dict[int, int] = field(default_factory=dict)
    serials: dict[int, int] = field(default_factory=dict)  # id(conn) -> its newest serial


@dataclass
class Fleet:
    """What the servers need to be reached: an ssh config and a known_hosts file."""

    config: Path
    known_hosts: Path
    stats: Stats
    closers: list[Any]

    def close(self) -> None:
        for c in self.closers:
            c.close()


def _server_class(stats: Stats) -> type[asyncssh.SSHServer]:
    class Server(asyncssh.SSHServer):
        def connection_made(self, conn: asyncssh.SSHServerConnection) -> None:
            stats.open += 1
            stats.connections += 1
            stats.peak = max(stats.peak, stats.open)
            stats.serials[id(conn)] = stats.connections

        def connection_lost(self, exc: Exception | None) -> None:
            stats.open -= 1

        def begin_auth(self, username: str) -> bool:
            return False  # no authentication: host-key checking is what these tests test

    return Server


def _handler(kind: Kind, tree: Path, stats: Stats, delay: float) -> Any:
    async def handle(process: asyncssh.SSHServerProcess[bytes]) -> None:
        conn = stats.serials[id(process.channel.get_connection())]
        stats.sessions += 1
        stats.per_connection[conn] = stats.per_connection.get(conn, 0) + 1
        data = await process.stdin.read()
        if kind == "stuck":  # the command never answers
            await asyncio.sleep(3600)
        if kind == "exec":  # run the command the client sent, for real, in the tree
            proc = await asyncio.create_subprocess_exec(
                *shlex.split(process.command or ""), stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, cwd=tree,
                env={**os.environ, "PYTHONPATH": str(_REPO)})  # this checkout's agentkit
            out, err = await proc.communicate(data)
            process.stdout.write(out)
            process.stderr.write(err)
            process.exit(proc.returncode or 0)
            return
        from agentkit._fleet.worker import serve

        if delay:
            await asyncio.sleep(delay)
        process.stdout.write(await serve(data, root=str(tree)))
        process.exit(0)

    return handle


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def start(trees: dict[str, Path], kinds: dict[str, Kind], workdir: Path,
                delay: float = 0.0) -> Fleet:
    """A server per host of ``trees`` (kind "ok" unless ``kinds`` says otherwise)."""
    known = asyncssh.generate_private_key("ssh-ed25519")
    stranger = asyncssh.generate_private_key("ssh-ed25519")
    stats = Stats()
    server = _server_class(stats)
    closers: list[Any] = []
    config, known_lines = [], []

    async def hang(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(3600)  # accepts, never speaks SSH

    for host, tree in trees.items():
        kind = kinds.get(host, "ok")
        if kind == "closed":
            port = _free_port()  # nothing listens there
        elif kind == "hung":
            srv = await asyncio.start_server(hang, "127.0.0.1", 0)
            closers.append(srv)
            port = srv.sockets[0].getsockname()[1]
        else:
            key = stranger if kind == "unknown-key" else known
            srv = await asyncssh.create_server(
                server, "127.0.0.1", 0, server_host_keys=[key], encoding=None,
                process_factory=_handler(kind, tree, stats, delay))
            closers.append(srv)
            port = srv.sockets[0].getsockname()[1]
            if kind != "unknown-key":
                known_lines.append(f"[127.0.0.1]:{port} "
                                   f"{known.export_public_key().decode().strip()}")
        config.append(f"Host {host}\n  HostName 127.0.0.1\n  Port {port}\n  User fleet\n")
    (workdir / "ssh_config").write_text("".join(config))
    (workdir / "known_hosts").write_text("\n".join(known_lines) + "\n")
    return Fleet(workdir / "ssh_config", workdir / "known_hosts", stats, closers)


CLIENT_OPTIONS = {"agent_path": None, "client_keys": None}  # no agent, no keys from ~/.ssh
