"""The SSH transport's own logic, called directly: its settings, the known_hosts files it
names, the connect options it hands asyncssh, OpenSSH's two host-key refusals, the exec
channel's framing and caps, and each way a host fails, against a real asyncssh server on
127.0.0.1 (its keys made once per module, a server per test: milliseconds each).

Expected from OpenSSH's and asyncssh's documentation: sshd(8) "SSH_KNOWN_HOSTS FILE FORMAT"
(a host on a port other than 22 is written ``[host]:port``; ``@cert-authority`` and
``@revoked`` lines are keys known for the host too), ssh(1) (``~/.ssh/known_hosts`` then
``/etc/ssh/ssh_known_hosts``), asyncssh (``connect(config=…, known_hosts=…)``, a callable
``known_hosts`` is called with the host, address and port; ``SSHClientProcess.exit_status``;
``PermissionDenied``, ``HostKeyNotVerifiable``), and docs/fleet.md's buckets.

These are the first tests of the ``fleet-ssh`` mutation target: the hundred-host runs of
``test_fleet_ssh.py`` and the attack round's runs take seconds a mutant.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

asyncssh = pytest.importorskip("asyncssh")

from agentkit._fleet import _ssh  # noqa: E402
from agentkit._fleet._names import InventoryError  # noqa: E402
from agentkit._fleet._outcome import Batch, HostOutcome  # noqa: E402
from agentkit._fleet._ssh import DEFAULT_COMMAND, SSHTransport, _capped, _exec, _Lookup, _why  # noqa: E402
from agentkit._fleet._wire import request  # noqa: E402

REPLY = b'{"protocol":1,"agentkit":"t","error":"","results":[]}'
CLIENT = {"agent_path": None, "client_keys": None}  # no agent, no keys from ~/.ssh
BATCH = Batch(question="q", tasks=[], root="/f/{host}")
Handler = Callable[[Any], Awaitable[None]]


@pytest.fixture(scope="module")
def keys() -> tuple[Any, Any]:
    return (asyncssh.generate_private_key("ssh-ed25519"),
            asyncssh.generate_private_key("ssh-ed25519"))


class Seen:
    def __init__(self) -> None:
        self.users: list[str] = []
        self.commands: list[str | None] = []
        self.stdin: list[bytes] = []


async def server(tmp: Path, handler: Handler, key: Any, *, known: Any = None,
                 password: bool = False, seen: Seen | None = None) -> tuple[Any, SSHTransport]:
    """An asyncssh server running ``handler`` for each exec, and a transport whose config
    names it as host ``h1`` (user ``fleet``) and whose known_hosts holds ``known``'s key."""
    seen = seen or Seen()

    class Server(asyncssh.SSHServer):
        def begin_auth(self, username: str) -> bool:
            seen.users.append(username)
            return password

        def password_auth_supported(self) -> bool:
            return password

        def validate_password(self, username: str, pw: str) -> bool:
            return False

    async def handle(process: Any) -> None:
        seen.commands.append(process.command)
        await handler(process)

    srv = await asyncssh.create_server(Server, "127.0.0.1", 0, server_host_keys=[key],
                                       encoding=None, process_factory=handle)
    port = srv.sockets[0].getsockname()[1]
    (tmp / "cfg").write_text(f"Host h1\n  HostName 127.0.0.1\n  Port {port}\n  User fleet\n")
    pub = (known or key).export_public_key().decode().strip()
    (tmp / "kh").write_text(f"[127.0.0.1]:{port} {pub}\n")
    return srv, SSHTransport(config=str(tmp / "cfg"), known_hosts=str(tmp / "kh"),
                             options=CLIENT, connect_timeout_s=5, host_timeout_s=5)


def on(tmp: Path, handler: Handler, key: Any, **kw: Any) -> tuple[HostOutcome, Seen]:
    """``_one`` on host h1 served by ``handler``; ``kw`` for :func:`server`, and
    ``transport`` to change the transport's settings first."""
    seen = Seen()
    change = kw.pop("transport", {})

    async def go() -> HostOutcome:
        srv, t = await server(tmp, handler, key, seen=seen, **kw)
        for k, v in change.items():
            setattr(t, k, v)
        try:
            with anyio.fail_after(30):
                known = asyncssh.read_known_hosts(t.known_hosts_files())
                return await t._one("h1", BATCH, known)
        finally:
            srv.close()

    return anyio.run(go), seen


async def replying(process: Any) -> None:
    process.stdout.write(REPLY)
    process.exit(0)


def microseconds(wall_s: float) -> bool:
    """A wall time as every transport records it: seconds to the microsecond."""
    return round(wall_s, 6) == wall_s and wall_s != round(wall_s)


def test_settings_and_the_documented_defaults() -> None:
    t = SSHTransport()  # the CLI's defaults: --connect-timeout 10, --host-timeout 300
    assert (t.config, t.known_hosts, t.username, t.options, t.name) == (None, None, None, {},
                                                                        "ssh")
    assert (t.concurrency, t.connect_timeout_s, t.host_timeout_s) == (32, 10.0, 300.0)
    assert (t.remote_command, t.root) == (DEFAULT_COMMAND, "/")
    assert DEFAULT_COMMAND == "python3 -m agentkit._fleet.worker"
    given = {"port": 2222}
    t = SSHTransport(config="c", known_hosts="k", username="u", concurrency=1,
                     connect_timeout_s=1.5, host_timeout_s=2.5, remote_command="w",
                     root="/r", options=given)
    given["port"] = 1  # the transport keeps its own copy
    assert (t.config, t.known_hosts, t.username, t.concurrency, t.connect_timeout_s,
            t.host_timeout_s, t.remote_command, t.root, t.options) == (
        "c", "k", "u", 1, 1.5, 2.5, "w", "/r", {"port": 2222})
    with pytest.raises(ValueError, match=r"^concurrency must be at least 1, not 0$"):
        SSHTransport(concurrency=0)
    with pytest.raises(ValueError) as exc:
        SSHTransport(options={"known_hosts": ()})
    assert str(exc.value) == ("known_hosts is set with known_hosts=PATH; host keys are always "
                              "verified")


def test_discover_reads_the_given_config_else_the_users(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "cfg").write_text("Host a b\nHost *\n  User x\n")
    assert anyio.run(SSHTransport(config=str(tmp_path / "cfg")).discover) == ["a", "b"]
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".ssh").mkdir()
    (tmp_path / ".ssh" / "config").write_text("Host c\n")
    assert anyio.run(SSHTransport().discover) == ["c"]


def test_known_hosts_files_are_named_always(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "kh").write_text("")
    assert SSHTransport(known_hosts=str(tmp_path / "kh")).known_hosts_files() == [
        str(tmp_path / "kh")]
    with pytest.raises(InventoryError) as exc:
        SSHTransport(known_hosts=str(tmp_path / "none")).known_hosts_files()
    assert str(exc.value) == (f"the known_hosts file {tmp_path}/none does not exist: host keys "
                              "are always verified; give a file that holds the hosts' keys")
    with pytest.raises(InventoryError, match="does not exist"):  # a directory is no file
        SSHTransport(known_hosts=str(tmp_path)).known_hosts_files()
    monkeypatch.setenv("HOME", str(tmp_path))
    user, system = str(tmp_path / ".ssh" / "known_hosts"), "/etc/ssh/ssh_known_hosts"
    for present in ([user, system], [user], [system], []):
        monkeypatch.setattr(os.path, "isfile", lambda p, present=present: p in present)
        if present:
            assert SSHTransport().known_hosts_files() == present  # OpenSSH's order
        else:
            with pytest.raises(InventoryError) as exc:
                SSHTransport().known_hosts_files()
            assert str(exc.value) == (
                "no known_hosts file (~/.ssh/known_hosts, /etc/ssh/ssh_known_hosts): host keys "
                "are always verified; add the hosts' keys once you have checked them, or pass "
                "--known-hosts FILE")


def test_connect_options_name_the_config_the_lookup_and_the_user() -> None:
    look = object()
    assert SSHTransport()._connect_options(look) == {"config": (), "known_hosts": look}
    t = SSHTransport(config="/c", username="alice", options={"port": 2222})
    assert t._connect_options(look) == {"port": 2222, "config": ["/c"], "known_hosts": look,
                                        "username": "alice"}


def known(*lines: str) -> Any:
    return asyncssh.import_known_hosts("".join(line + "\n" for line in lines))


def test_the_lookup_tells_a_changed_key_from_an_unknown_one(keys: tuple[Any, Any]) -> None:
    pub = keys[0].export_public_key().decode().strip()
    for line, had in ((f"gpu1 {pub}", True), (f"@cert-authority gpu1 {pub}", True),
                      (f"@revoked gpu1 {pub}", True), (f"gpu2 {pub}", False),
                      (f"[gpu1]:2222 {pub}", False)):
        look = _Lookup(known(line))
        assert (look.had_keys, look.where) == (False, "")
        look("gpu1", "10.0.0.1", 22)
        assert (look.had_keys, look.where) == (had, "gpu1"), line
    look = _Lookup(known(f"[gpu1]:2222 {pub}"))
    look("gpu1", "10.0.0.1", 2222)
    assert (look.had_keys, look.where) == (True, "[gpu1]:2222")
    look("gpu1", "10.0.0.1", None)  # no port: the default one
    assert look.where == "gpu1"
    look = _Lookup(known(f"10.0.0.1 {pub}"))  # a key known by the host's address
    look("gpu1", "10.0.0.1", 22)
    assert look.had_keys


def test_the_two_refusals_say_what_openssh_says() -> None:
    look = _Lookup(known())
    bucket, why = look.refusal("Host key is not trusted")
    assert bucket == "unknown-key"
    assert why.startswith("host key unknown: known_hosts has no key for this host (Host key "
                          "is not trusted). Check its fingerprint out of band")
    assert why.endswith("then add it to known_hosts")
    look.where, look.had_keys = "[gpu1]:2222", True
    bucket, why = look.refusal("Host key is not trusted")
    assert bucket == "changed-key"
    assert why.startswith("host key does not match known_hosts for [gpu1]:2222 (Host key is "
                          "not trusted): possibly a man in the middle")
    assert why.endswith("or the host was reinstalled. Do not add the new key: find out why it "
                        "changed (ask whoever runs the host), and only then replace the old "
                        "entry (ssh-keygen -R)")
    look.had_keys = False
    assert "no key for [gpu1]:2222 (" in look.refusal("r")[1]


def test_why_a_host_is_unreachable_in_one_line() -> None:
    assert _why(ConnectionRefusedError(111, "x")) == "connection refused (no SSH server " \
        "listening)"
    assert _why(asyncssh.ConnectionLost("  lost\n  the   link ")) == "lost the link"
    assert _why(OSError("no route\tto host")) == "no route to host"
    assert _why(OSError()) == "OSError"
    assert _why(asyncssh.ConnectionLost("")) == "ConnectionLost"
    assert _why(OSError("y" * 400)) == "y" * 300


def capped(data: bytes, cap: int, drain: bool) -> tuple[bytes, bool]:
    async def go() -> tuple[bytes, bool]:
        stream = asyncio.StreamReader()
        stream.feed_data(data)
        stream.feed_eof()
        got = await _capped(stream, cap, drain=drain)
        return got, stream.at_eof()
    return anyio.run(go)


def test_capped_reads_at_most_the_cap_and_drains_when_asked() -> None:
    big = bytes(range(256)) * 1000  # 256,000 bytes: several reads
    assert capped(big, 10**6, False) == (big, True)
    assert capped(big, 200_000, False) == (big[:200_000], False)
    assert capped(big, 200_000, True) == (big[:200_000], True)
    assert capped(b"", 5, True) == (b"", True)


def exec_on(tmp: Path, handler: Handler, key: Any, command: str = "cmd",
            data: bytes = b"batch") -> tuple[tuple[bytes, bytes, int | None], Seen]:
    seen = Seen()

    async def go() -> tuple[bytes, bytes, int | None]:
        srv, t = await server(tmp, handler, key, seen=seen)
        try:
            with anyio.fail_after(30):
                async with asyncssh.connect(
                        "h1", **t._connect_options(asyncssh.read_known_hosts(
                            t.known_hosts_files()))) as conn:
                    return await _exec(conn, command, data)
        finally:
            srv.close()

    return anyio.run(go), seen


def test_exec_sends_the_batch_and_reads_out_err_and_exit_status(
        tmp_path: Path, keys: tuple[Any, Any]) -> None:
    async def echo(process: Any) -> None:
        data = await process.stdin.read()  # returns at the client's EOF only
        process.stdout.write(data)
        process.stderr.write(b"warn")
        process.exit(3)

    got, seen = exec_on(tmp_path, echo, keys[0], "python3 -m w --x 'a b'", b"x" * 300_000)
    assert got == (b"x" * 300_000, b"warn", 3)
    assert seen.commands == ["python3 -m w --x 'a b'"] and seen.users == ["fleet"]


def test_exec_stops_reading_a_reply_over_the_cap(tmp_path: Path, keys: tuple[Any, Any],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_ssh, "MAX_REPLY", 10)

    async def flood(process: Any) -> None:
        process.stderr.write(b"e")
        process.stdout.write(b"o" * 100)
        await asyncio.sleep(3600)  # never exits: the client must not wait for it

    (out, _, code), _ = exec_on(tmp_path, flood, keys[0])
    assert (out, code) == (b"o" * 11, None)


def test_exec_reads_a_reply_of_exactly_the_cap_to_its_exit(
        tmp_path: Path, keys: tuple[Any, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_ssh, "MAX_REPLY", 10)

    async def full(process: Any) -> None:
        process.stdout.write(b"0123456789")  # at the cap, not over it
        process.stderr.write(b"e")
        await process.stdout.drain()
        process.exit(3)

    got, _ = exec_on(tmp_path, full, keys[0])
    assert got == (b"0123456789", b"e", 3)


def test_a_host_over_the_cap_is_failed_without_waiting_for_it(
        tmp_path: Path, keys: tuple[Any, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_ssh, "MAX_REPLY", 10)  # the transport's cap, not the reply parser's

    async def flood(process: Any) -> None:
        process.stdout.write(b"o" * 100)
        await asyncio.sleep(3600)

    o, _ = on(tmp_path, flood, keys[0])
    assert (o.status, o.error) == ("failed", "no worker reply (exit None); is agentkit "
                                   "installed on the host? (python3 -m agentkit._fleet.worker)")


class Proc:
    """An exec's two streams, each fed in advance (asyncio's StreamReader)."""

    def __init__(self, out: bytes | BaseException, err: bytes | BaseException) -> None:
        self.stdout, self.stderr = asyncio.StreamReader(), asyncio.StreamReader()
        for stream, what in ((self.stdout, out), (self.stderr, err)):
            if isinstance(what, BaseException):
                stream.set_exception(what)
            else:
                stream.feed_data(what)
                stream.feed_eof()


def read_both(out: bytes | BaseException, err: bytes | BaseException) -> dict[str, bytes]:
    async def go() -> dict[str, bytes]:
        return await _ssh._read_both(Proc(out, err))
    return anyio.run(go)


def test_a_reply_of_exactly_the_cap_leaves_stderr_read_to_the_end(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_ssh, "MAX_REPLY", 10)

    async def go() -> dict[str, bytes]:
        proc = Proc(b"0123456789", b"")
        proc.stderr = asyncio.StreamReader()
        proc.stderr.feed_data(b"warn")
        asyncio.get_running_loop().call_later(0.2, proc.stderr.feed_eof)  # EOF comes later
        with anyio.fail_after(10):
            return await _ssh._read_both(proc)

    assert anyio.run(go) == {"out": b"0123456789", "err": b"warn"}


def test_a_lost_connection_is_raised_once_and_anything_else_as_it_came() -> None:
    assert read_both(b"o", b"e") == {"out": b"o", "err": b"e"}
    with pytest.raises(ConnectionResetError):  # one reader saw it
        read_both(ConnectionResetError(104, "reset"), b"e")
    with pytest.raises(asyncssh.ConnectionLost):  # both did: one error, the first
        read_both(asyncssh.ConnectionLost("lost"), ConnectionResetError(104, "reset"))
    with pytest.raises(ExceptionGroup):  # a bug beside it is not a lost connection
        read_both(ConnectionResetError(104, "reset"), ValueError("bug"))
    with pytest.raises(ExceptionGroup):
        read_both(b"o", ValueError("bug"))


def test_exec_keeps_64_kib_of_stderr_and_reads_on(tmp_path: Path,
                                                  keys: tuple[Any, Any]) -> None:
    async def noisy(process: Any) -> None:
        process.stderr.write(b"e" * 3_000_000)  # past the channel's window: read or stall
        process.stdout.write(b"ok")
        process.exit(0)

    got, _ = exec_on(tmp_path, noisy, keys[0])
    assert got == (b"ok", b"e" * 65536, 0)


def test_a_host_that_replies_is_ok_with_its_batch_and_user(
        tmp_path: Path, keys: tuple[Any, Any]) -> None:
    got: list[bytes] = []

    async def worker(process: Any) -> None:
        got.append(await process.stdin.read())
        await replying(process)

    o, seen = on(tmp_path, worker, keys[0], transport={"username": "alice",
                                                        "remote_command": "w --root /"})
    assert (o.host, o.status, o.error, o.results) == ("h1", "ok", "", [])
    assert 0 < o.wall_s < 5 and microseconds(o.wall_s) and got == [request(BATCH, "h1")]
    assert seen.users == ["alice"] and seen.commands == ["w --root /"]


def test_a_bad_exit_is_failed_with_its_status_and_stderr(tmp_path: Path,
                                                         keys: tuple[Any, Any]) -> None:
    async def missing(process: Any) -> None:
        process.stderr.write(b"sh: python3: not found\n")
        process.exit(127)

    o, _ = on(tmp_path, missing, keys[0])
    assert o.status == "failed" and "(exit 127: sh: python3: not found)" in o.error


def test_a_host_that_never_replies_is_timed_out(tmp_path: Path, keys: tuple[Any, Any]) -> None:
    async def stuck(process: Any) -> None:
        await asyncio.sleep(3600)

    o, _ = on(tmp_path, stuck, keys[0], transport={"host_timeout_s": 0.5})
    assert (o.status, o.error) == ("timed-out", "no reply within 0.5s")
    assert 0.5 <= o.wall_s < 10 and microseconds(o.wall_s)


def test_a_connection_lost_mid_batch_is_unreachable(tmp_path: Path,
                                                     keys: tuple[Any, Any]) -> None:
    async def drop(process: Any) -> None:
        process.channel.get_connection().abort()

    o, _ = on(tmp_path, drop, keys[0])
    assert o.status == "unreachable" and o.error.startswith("connection lost: ")
    assert "onnection" in o.error[len("connection lost: "):]  # reset, or lost: not "None"


def test_unknown_and_changed_keys_are_refused_before_any_channel(
        tmp_path: Path, keys: tuple[Any, Any]) -> None:
    o, seen = on(tmp_path, replying, keys[0], known=keys[1])
    assert o.status == "changed-key" and seen.commands == []
    assert o.error.startswith("host key does not match known_hosts for [127.0.0.1]:")
    assert "for host 127.0.0.1): possibly a man in the middle" in o.error  # asyncssh's reason
    assert 0 < o.wall_s < 5 and microseconds(o.wall_s)

    async def go() -> HostOutcome:
        srv, t = await server(tmp_path, replying, keys[0])
        (tmp_path / "kh").write_text("")
        try:
            return await t._one("h1", BATCH, asyncssh.read_known_hosts(str(tmp_path / "kh")))
        finally:
            srv.close()

    o = anyio.run(go)
    assert o.status == "unknown-key" and "known_hosts has no key for [127.0.0.1]:" in o.error


def test_a_refused_login_is_failed(tmp_path: Path, keys: tuple[Any, Any]) -> None:
    o, _ = on(tmp_path, replying, keys[0], password=True)
    assert o.status == "failed"
    assert o.error.startswith("SSH login refused (") and o.error.endswith(
        "): check the user and keys")


def test_nothing_listening_and_a_silent_listener(tmp_path: Path,
                                                 keys: tuple[Any, Any]) -> None:
    async def go() -> tuple[HostOutcome, HostOutcome]:
        srv, t = await server(tmp_path, replying, keys[0])
        srv.close()
        await srv.wait_closed()
        known = asyncssh.read_known_hosts(t.known_hosts_files())
        refused = await t._one("h1", BATCH, known)

        async def hang(reader: Any, writer: Any) -> None:
            await asyncio.sleep(3600)

        silent = await asyncio.start_server(hang, "127.0.0.1", 0)
        port = silent.sockets[0].getsockname()[1]
        (tmp_path / "cfg").write_text(f"Host h1\n  HostName 127.0.0.1\n  Port {port}\n")
        t.connect_timeout_s = 0.5
        try:
            return refused, await t._one("h1", BATCH, known)
        finally:
            silent.close()

    refused, hung = anyio.run(go)
    assert (refused.status, refused.error) == ("unreachable", "connection refused (no SSH "
                                                              "server listening)")
    assert (hung.status, hung.error) == ("timed-out", "no SSH handshake within 0.5s")
    assert 0.5 <= hung.wall_s < 10 and microseconds(hung.wall_s)


def test_run_holds_at_most_concurrency_connections_one_channel_each(
        tmp_path: Path, keys: tuple[Any, Any]) -> None:
    live, peak, channels = [0], [0], [0]

    async def slow(process: Any) -> None:
        live[0] += 1
        channels[0] += 1
        peak[0] = max(peak[0], live[0])
        await process.stdin.read()
        await asyncio.sleep(0.2)
        live[0] -= 1
        await replying(process)

    async def go() -> list[HostOutcome]:
        srv, t = await server(tmp_path, slow, keys[0])
        cfg = (tmp_path / "cfg").read_text()
        (tmp_path / "cfg").write_text("".join(cfg.replace("Host h1", f"Host h{i}")
                                              for i in range(1, 6)))
        t.concurrency = 2
        try:
            with anyio.fail_after(30):
                return [o async for o in t.run([f"h{i}" for i in range(1, 6)], BATCH)]
        finally:
            srv.close()

    got = anyio.run(go)
    assert sorted((o.host, o.status) for o in got) == [(f"h{i}", "ok") for i in range(1, 6)]
    assert peak[0] <= 2 and channels[0] == 5
