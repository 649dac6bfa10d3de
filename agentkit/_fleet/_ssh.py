"""The SSH transport (asyncssh): each host runs agentkit's worker over one exec channel.

Host keys are verified against known_hosts, always, and said as OpenSSH says them: a host
known_hosts has no key for is ``unknown-key`` (check the fingerprint, then add it), one whose
key does not match the one known_hosts has is ``changed-key`` (possibly a man in the middle:
never "add it"); never a silent connect (there is no option to skip the check). agentkit
owns both timeouts (connecting, and the whole host), so a host that accepts and then says
nothing is ``timed-out`` at the deadline. One channel per connection (a batch is one exec),
and at most ``concurrency`` connections at once.
"""

from __future__ import annotations

import os
import time
from collections.abc import AsyncIterator, Sequence
from typing import Any

import anyio

from ._outcome import Batch, HostOutcome
from ._wire import MAX_REPLY, outcome, request

DEFAULT_COMMAND = "python3 -m agentkit._fleet.worker"
_MAX_STDERR = 64 * 1024


class SSHTransport:
    """Hosts reached with asyncssh, settings from ``config`` (default ``~/.ssh/config``).

    >>> SSHTransport(concurrency=16).concurrency
    16
    """

    name = "ssh"

    def __init__(self, *, config: str | None = None, known_hosts: str | None = None,
                 username: str | None = None, concurrency: int = 32,
                 connect_timeout_s: float = 10.0, host_timeout_s: float = 300.0,
                 remote_command: str = DEFAULT_COMMAND, root: str = "/",
                 options: dict[str, Any] | None = None) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, not {concurrency}")
        self.config = config
        self.known_hosts = known_hosts
        self.username = username
        self.concurrency = concurrency
        self.connect_timeout_s = connect_timeout_s
        self.host_timeout_s = host_timeout_s
        self.remote_command = remote_command
        self.root = root
        # further asyncssh.connect options (client_keys, port, …); host-key checking is not
        # one of them
        self.options = dict(options or {})
        if "known_hosts" in self.options:
            raise ValueError("known_hosts is set with known_hosts=PATH; host keys are always "
                             "verified")

    async def discover(self) -> list[str]:
        from ._inventory import config_hosts

        return config_hosts(self.config or os.path.expanduser("~/.ssh/config"))

    def run(self, hosts: Sequence[str], batch: Batch) -> AsyncIterator[HostOutcome]:
        import asyncssh

        from ._fanout import fan_out

        known = asyncssh.read_known_hosts(self.known_hosts_files())
        return fan_out(hosts, lambda h: self._one(h, batch, known), self.concurrency)

    def known_hosts_files(self) -> list[str]:
        """The files host keys are checked against: ``known_hosts``, else OpenSSH's defaults
        (``~/.ssh/known_hosts``, ``/etc/ssh/ssh_known_hosts``) that exist.

        Always explicit: left unset, asyncssh takes ``UserKnownHostsFile`` from the ssh
        config, where ``none`` means no check at all; a config must not be able to switch
        verification off. Raises :class:`InventoryError` when there is no file to check
        against (every host would be unverifiable).
        """
        from ._names import InventoryError

        if self.known_hosts:
            if not os.path.isfile(self.known_hosts):
                raise InventoryError(f"the known_hosts file {self.known_hosts} does not exist: "
                                     "host keys are always verified; give a file that holds "
                                     "the hosts' keys")
            return [self.known_hosts]
        found = [f for f in (os.path.expanduser("~/.ssh/known_hosts"),
                             "/etc/ssh/ssh_known_hosts") if os.path.isfile(f)]
        if not found:
            raise InventoryError("no known_hosts file (~/.ssh/known_hosts, "
                                 "/etc/ssh/ssh_known_hosts): host keys are always verified; "
                                 "add the hosts' keys once you have checked them, or pass "
                                 "--known-hosts FILE")
        return found

    def _connect_options(self, known: Any) -> dict[str, Any]:
        opts: dict[str, Any] = {**self.options,
                                "config": [self.config] if self.config else (),
                                "known_hosts": known}
        if self.username:
            opts["username"] = self.username
        return opts

    async def _one(self, host: str, batch: Batch, known: Any) -> HostOutcome:
        import asyncssh

        t0 = time.perf_counter()
        lookup = _Lookup(known)

        def done(status: Any, error: str) -> HostOutcome:
            return HostOutcome(host=host, status=status, error=error,
                               wall_s=round(time.perf_counter() - t0, 6))

        try:
            with anyio.fail_after(self.connect_timeout_s):
                conn = await asyncssh.connect(host, **self._connect_options(lookup))
        except TimeoutError:  # before OSError: on 3.11 TimeoutError is one
            return done("timed-out", f"no SSH handshake within {self.connect_timeout_s:g}s")
        except asyncssh.HostKeyNotVerifiable as exc:
            return done(*lookup.refusal(exc.reason))
        except asyncssh.PermissionDenied as exc:
            return done("failed", f"SSH login refused ({exc.reason}): check the user and keys")
        except (OSError, asyncssh.Error) as exc:
            return done("unreachable", _why(exc))
        async with conn:
            try:
                with anyio.fail_after(self.host_timeout_s):
                    out, err, code = await _exec(conn, self.remote_command,
                                                 request(batch, host))
            except TimeoutError:
                return done("timed-out", f"no reply within {self.host_timeout_s:g}s")
            except (OSError, asyncssh.Error) as exc:
                return done("unreachable", f"connection lost: {_why(exc)}")
        return outcome(host, out, err, code, round(time.perf_counter() - t0, 6))


class _Lookup:
    """known_hosts as asyncssh matches it for one connection (the name and port the ssh
    config resolved), remembering whether it had any key for the host: what tells OpenSSH's
    two refusals apart."""

    def __init__(self, known: Any) -> None:
        self.known = known
        self.had_keys = False
        self.where = ""

    def __call__(self, host: str, addr: str, port: int | None) -> Any:
        match = self.known.match(host, addr, port)
        # trusted keys, CA keys, revoked keys (the X.509 lists are not used for OpenSSH keys)
        self.had_keys = any(match[:3])
        self.where = host if port in (None, 22) else f"[{host}]:{port}"
        return match

    def refusal(self, reason: str) -> tuple[str, str]:
        if self.had_keys:
            return ("changed-key", f"host key does not match known_hosts for {self.where} "
                    f"({reason}): possibly a man in the middle, or the host was reinstalled. "
                    "Do not add the new key: find out why it changed (ask whoever runs the "
                    "host), and only then replace the old entry (ssh-keygen -R)")
        return ("unknown-key", f"host key unknown: known_hosts has no key for "
                f"{self.where or 'this host'} ({reason}). Check its fingerprint out of band "
                "(ssh-keygen -lf on the host's key), then add it to known_hosts")


async def _exec(conn: Any, command: str, data: bytes) -> tuple[bytes, bytes, int | None]:
    """Run ``command`` with ``data`` on stdin; stdout and stderr read together (they share
    the channel's window: reading one alone can stall the other), each capped."""
    async with conn.create_process(command, encoding=None) as proc:
        try:
            proc.stdin.write(data)
            proc.stdin.write_eof()
        except BrokenPipeError:
            # the command exited (and its channel closed) before taking the batch: a worker
            # not installed, or refusing; what it said and its exit status, read below, say
            # why (not a lost connection)
            pass
        got = await _read_both(proc)
        if len(got.get("out", b"")) > MAX_REPLY:
            return got["out"], got.get("err", b""), None
        await proc.wait()
        return got["out"], got["err"], proc.exit_status


async def _read_both(proc: Any) -> dict[str, bytes]:
    """stdout (capped; past the cap, reading stops) and stderr (capped, drained). A
    connection lost under both readers is raised once, as a lone read raises it, not as a
    task group's ExceptionGroup, which the caller would take for a bug (a failed host)."""
    import asyncssh

    got: dict[str, bytes] = {}
    try:
        async with anyio.create_task_group() as tg:
            async def out() -> None:
                got["out"] = await _capped(proc.stdout, MAX_REPLY + 1)
                if len(got["out"]) > MAX_REPLY:  # over the cap: stop reading this host
                    tg.cancel_scope.cancel()

            async def err() -> None:
                # kept to a cap, but read to the end: stderr shares the channel's window,
                # and a worker that logs more than the window before its reply would stall
                got["err"] = await _capped(proc.stderr, _MAX_STDERR, drain=True)

            tg.start_soon(out)
            tg.start_soon(err)
    except ExceptionGroup as group:
        lost, other = group.split((OSError, asyncssh.Error))
        if lost is None or other is not None:
            raise
        raise lost.exceptions[0] from None
    return got


async def _capped(stream: Any, cap: int, *, drain: bool = False) -> bytes:
    """At most ``cap`` bytes of ``stream``; with ``drain`` the rest is read and dropped."""
    parts: list[bytes] = []
    size = 0
    while size < cap:
        chunk = await stream.read(min(65536, cap - size))
        if not chunk:
            return b"".join(parts)
        parts.append(chunk)
        size += len(chunk)
    while drain and await stream.read(65536):
        pass
    return b"".join(parts)


def _why(exc: BaseException) -> str:
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused (no SSH server listening)"
    text = str(getattr(exc, "reason", "") or exc) or type(exc).__name__
    return " ".join(text.split())[:300]
