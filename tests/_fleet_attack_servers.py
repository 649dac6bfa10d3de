"""Scripted SSH servers for the fleet attack tests: each host's exec channel runs a small
coroutine that misbehaves on purpose (floods stderr, answers in pieces, never closes, claims
another host's name ...). Real asyncssh on both ends, on 127.0.0.1, no authentication."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncssh

Script = Callable[[Any], Awaitable[None]]  # gets the SSHServerProcess


@dataclass
class Servers:
    config: Path
    known_hosts: Path
    closers: list[Any] = field(default_factory=list)
    channels_open: list[int] = field(default_factory=lambda: [0])
    connections_open: list[int] = field(default_factory=lambda: [0])

    def close(self) -> None:
        for c in self.closers:
            c.close()


async def start(scripts: dict[str, Script], workdir: Path, *,
                unknown: frozenset[str] = frozenset(),
                password: str | None = None) -> Servers:
    """A server per host; hosts in ``unknown`` present a key known_hosts lacks; with
    ``password`` the server demands password authentication."""
    known = asyncssh.generate_private_key("ssh-ed25519")
    stranger = asyncssh.generate_private_key("ssh-ed25519")
    out = Servers(workdir / "attack_ssh_config", workdir / "attack_known_hosts")

    class Server(asyncssh.SSHServer):
        def connection_made(self, conn: Any) -> None:
            out.connections_open[0] += 1

        def connection_lost(self, exc: Exception | None) -> None:
            out.connections_open[0] -= 1

        def begin_auth(self, username: str) -> bool:
            return password is not None

        def password_auth_supported(self) -> bool:
            return password is not None

        def validate_password(self, username: str, pw: str) -> bool:
            return pw == password

    def factory(script: Script) -> Any:
        async def handle(process: Any) -> None:
            out.channels_open[0] += 1
            try:
                await script(process)
            finally:
                out.channels_open[0] -= 1

        return handle

    config, lines = [], []
    for host, script in scripts.items():
        key = stranger if host in unknown else known
        srv = await asyncssh.create_server(Server, "127.0.0.1", 0, server_host_keys=[key],
                                           encoding=None, process_factory=factory(script))
        out.closers.append(srv)
        port = srv.sockets[0].getsockname()[1]
        if host not in unknown:
            lines.append(f"[127.0.0.1]:{port} {known.export_public_key().decode().strip()}")
        config.append(f"Host {host}\n  HostName 127.0.0.1\n  Port {port}\n  User fleet\n")
    out.config.write_text("".join(config))
    out.known_hosts.write_text("\n".join(lines) + "\n")
    return out


def serving(tree: Path, *, before: Callable[[Any], Awaitable[None]] | None = None,
            after: Callable[[Any, bytes], bytes] | None = None) -> Script:
    """A script that answers with agentkit's real worker over ``tree``; ``before`` runs
    first (e.g. floods stderr), ``after`` may rewrite the reply."""

    async def script(process: Any) -> None:
        from agentkit._fleet.worker import serve

        data = await process.stdin.read()
        if before is not None:
            await before(process)
        reply = await serve(data, root=str(tree))
        if after is not None:
            reply = after(process, reply)
        process.stdout.write(reply)
        await process.stdout.drain()
        process.exit(0)

    return script


async def sleep_forever(process: Any) -> None:
    await asyncio.sleep(3600)
