"""The SSH transport against real asyncssh servers on 127.0.0.1 (issue 14, tier 1). What is
expected follows from SSH's semantics: nothing listening is a refused TCP connection
(unreachable), a server that accepts and never speaks is a handshake that never completes
(timed out at agentkit's connect timeout), a key known_hosts lacks is not verifiable
(refused), and a batch is one exec channel on one connection."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("asyncssh")

from agentkit import Orchestrator
from agentkit._fleet._names import expand
from agentkit._fleet._ssh import SSHTransport
from agentkit._types import Answer
from benchmarks._fleet_hosts import host_name, make_fleet
from benchmarks._ssh_servers import CLIENT_OPTIONS, Fleet, start


def digest(root: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        h.update(str(p.relative_to(root)).encode())
        if p.is_file():
            h.update(p.read_bytes())
    return h.hexdigest()


def run(tmp: Path, n: int, kinds: dict[str, str], *, concurrency: int = 32,
        timeout: float = 5.0, outliers: tuple[int, ...] = (), delay: float = 0.0,
        **kw: Any) -> tuple[Answer, Fleet]:
    names = make_fleet(tmp / "f", n, outliers=outliers, width=3)
    trees = {h: tmp / "f" / h for h in names}

    async def go() -> tuple[Answer, Fleet]:
        fleet = await start(trees, kinds, tmp, delay=delay)
        try:
            transport = SSHTransport(config=str(fleet.config),
                                     known_hosts=str(fleet.known_hosts),
                                     concurrency=concurrency, connect_timeout_s=timeout,
                                     host_timeout_s=timeout, options=CLIENT_OPTIONS, **kw)
            orch = Orchestrator.fleet(transport, hosts=names)
            return await orch.investigate("Which driver?", tasks=["gpu-inventory"]), fleet
        finally:
            fleet.close()

    return anyio.run(go)


def buckets(answer: Answer) -> dict[str, set[str]]:
    assert answer.fleet is not None
    return {b: set(expand(nodes)) for b, nodes in answer.fleet.buckets.items()}


def test_a_hundred_hosts_at_most_32_connections_one_channel_each(tmp_path: Path) -> None:
    answer, fleet = run(tmp_path, 100, {}, outliers=(7, 42), delay=0.05)
    got = buckets(answer)
    assert got["differs"] == {"n007", "n042"} and len(got["ok"]) == 98
    assert fleet.stats.peak == 32  # the limit, reached (100 hosts, each held 50 ms)
    assert fleet.stats.connections == 100 and fleet.stats.sessions == 100
    assert set(fleet.stats.per_connection.values()) == {1}
    after = {h: digest(tmp_path / "f" / h) for h in ("n001", "n007", "n100")}
    make_fleet(tmp_path / "fresh", 100, outliers=(7, 42), width=3)
    before = {h: digest(tmp_path / "fresh" / h) for h in after}
    assert after == before  # fixture trees byte-identical afterwards


def test_every_misbehaving_host_lands_in_its_bucket(tmp_path: Path) -> None:
    kinds = {host_name(i, 3): "closed" for i in (3, 20, 40, 60, 80)}  # 5 %
    kinds |= {"n010": "hung", "n050": "stuck"}  # 2 %: no handshake / no answer
    kinds |= {"n070": "unknown-key"}  # 1 %
    answer, fleet = run(tmp_path, 100, kinds, timeout=5.0)
    got = buckets(answer)
    assert got == {"ok": {host_name(i, 3) for i in range(1, 101)} - set(kinds),
                   "unreachable": {h for h, k in kinds.items() if k == "closed"},
                   "timed-out": {"n010", "n050"}, "unknown-key": {"n070"}}
    assert answer.fleet is not None and answer.fleet.counts["ok"] == 92
    problems = {p.nodes: p for p in answer.fleet.problems}
    assert "connection refused" in problems["n[003,020,040,060,080]"].error
    assert "handshake" in problems["n010"].error and "no reply within 5s" in problems[
        "n050"].error
    assert "host key unknown" in problems["n070"].error
    assert "then add it" in problems["n070"].error
    assert fleet.stats.sessions == 92 + 1  # the unknown key never got a channel


def test_a_changed_host_key_is_its_own_bucket_and_never_said_to_add(tmp_path: Path) -> None:
    names = make_fleet(tmp_path / "f", 2, width=3)

    async def go() -> Answer:
        fleet = await start({h: tmp_path / "f" / h for h in names}, {}, tmp_path)
        import asyncssh

        other = asyncssh.generate_private_key("ssh-ed25519").export_public_key().decode()
        lines = fleet.known_hosts.read_text().splitlines()
        lines[0] = lines[0].split()[0] + " " + other.strip()  # n001's key is another now
        fleet.known_hosts.write_text("\n".join(lines) + "\n")
        try:
            t = SSHTransport(config=str(fleet.config), known_hosts=str(fleet.known_hosts),
                             options=CLIENT_OPTIONS)
            return await Orchestrator.fleet(t, hosts=names).investigate(
                "q", tasks=["gpu-inventory"])
        finally:
            fleet.close()

    answer = anyio.run(go)
    assert buckets(answer) == {"changed-key": {"n001"}, "ok": {"n002"}}
    assert answer.fleet is not None
    error = answer.fleet.problems[0].error
    assert "man in the middle" in error and "Do not add" in error  # OpenSSH's remedy


def test_the_real_worker_runs_on_the_host_and_a_missing_one_is_said(tmp_path: Path) -> None:
    kinds = {h: "exec" for h in ("n001", "n002", "n003")}
    worker = f"{sys.executable} -m agentkit._fleet.worker"
    answer, _ = run(tmp_path, 3, kinds, outliers=(2,), remote_command=worker,
                    root=str(tmp_path / "f" / "{host}"), timeout=60)
    assert buckets(answer) == {"ok": {"n001", "n003"}, "differs": {"n002"}}
    answer, _ = run(tmp_path / "again", 2, {"n001": "exec", "n002": "exec"},
                    remote_command="sh -c 'echo agentkit: not found >&2; exit 127'")
    assert answer.fleet is not None and answer.fleet.buckets == {"failed": "n[001-002]"}
    assert "exit 127" in answer.fleet.problems[0].error
    assert "is agentkit installed" in answer.fleet.problems[0].error


def test_host_key_checking_cannot_be_switched_off() -> None:
    with pytest.raises(ValueError, match="always"):
        SSHTransport(options={"known_hosts": None})
