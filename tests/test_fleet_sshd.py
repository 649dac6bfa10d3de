"""The SSH transport against real OpenSSH servers (Debian's ``openssh-server``; .ci/run
installs it): four ``sshd -D -f <own config>`` on loopback ports, each with its own host key,
started here and stopped by pid. n001 answers with agentkit's worker; n002's server is
stopped before the question; n003's key in known_hosts is another key than the one it
presents; n004 is not in known_hosts at all.

Expected, from OpenSSH's semantics before running: nothing listening on a port is a refused
TCP connection (unreachable); a key known_hosts has for the host that does not match is
"REMOTE HOST IDENTIFICATION HAS CHANGED" (changed-key: never "add it"); a host known_hosts
has no key for is unknown (unknown-key: check the fingerprint, then add it); the answer's
exit code is 8 (some hosts did not answer, README)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentkit._fleet._names import expand
from benchmarks._fleet_hosts import make_fleet

REPO = Path(__file__).resolve().parent.parent
SSHD = shutil.which("sshd") or "/usr/sbin/sshd"
pytestmark = pytest.mark.skipif(
    not (os.path.exists(SSHD) and shutil.which("ssh-keygen")),
    reason="needs Debian's openssh-server (sshd, ssh-keygen): .ci/run installs it")


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _keygen(path: Path) -> str:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)],
                   check=True, capture_output=True, timeout=30)
    return " ".join(Path(f"{path}.pub").read_text().split()[:2])  # type and key


def _config(d: Path, port: int, key: Path, user: str, authorized: Path) -> Path:
    conf = d / "sshd_config"
    conf.write_text(f"""Port {port}
ListenAddress 127.0.0.1
HostKey {key}
PidFile none
AuthorizedKeysFile {authorized}
AllowUsers {user}
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PermitRootLogin prohibit-password
LogLevel ERROR
""")
    return conf


def _wait_listening(port: int, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"sshd exited {proc.returncode}: {log.read_text()[-2000:]}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"sshd did not listen on {port} within 15 s")


@pytest.fixture
def sshd_fleet(tmp_path: Path) -> Iterator[dict[str, object]]:
    user = os.environ.get("USER") or __import__("pwd").getpwuid(os.getuid()).pw_name
    if os.getuid() == 0:
        os.makedirs("/run/sshd", mode=0o755, exist_ok=True)  # sshd's privilege separation
    client = tmp_path / "client_key"
    _keygen(client)
    authorized = tmp_path / "authorized_keys"
    authorized.write_text(Path(f"{client}.pub").read_text())
    names = make_fleet(tmp_path / "f", 4, width=3)
    procs: dict[str, subprocess.Popen[bytes]] = {}
    known, config = [], []
    try:
        for name in names:
            d = tmp_path / "sshd" / name
            d.mkdir(parents=True)
            key, port = d / "ssh_host_ed25519_key", _port()
            pub = _keygen(key)
            conf = _config(d, port, key, user, authorized)
            subprocess.run([SSHD, "-t", "-f", str(conf)], check=True, capture_output=True,
                           timeout=30)
            log = d / "sshd.log"
            procs[name] = subprocess.Popen([SSHD, "-D", "-e", "-f", str(conf)],
                                           stdout=subprocess.DEVNULL,
                                           stderr=log.open("wb"))
            _wait_listening(port, procs[name], log)
            config.append(f"Host {name}\n  HostName 127.0.0.1\n  Port {port}\n  User {user}\n"
                          f"  IdentityFile {client}\n")
            if name == "n003":  # known_hosts holds another key for it: the key changed
                pub = _keygen(d / "other_key")
            if name != "n004":  # n004 is not in known_hosts at all
                known.append(f"[127.0.0.1]:{port} {pub}\n")
        _stop(procs.pop("n002"))  # n002: its server is gone, its port refuses
        (tmp_path / "ssh_config").write_text("".join(config))
        (tmp_path / "known_hosts").write_text("".join(known))
        yield {"dir": tmp_path, "names": names}
    finally:
        for proc in procs.values():
            _stop(proc)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Stopped by its own pid, as started (never by name)."""
    if proc.poll() is None:
        os.kill(proc.pid, 15)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, 9)
            proc.wait(timeout=10)


def test_real_sshd_buckets_and_exit_code(sshd_fleet: dict[str, object]) -> None:
    tmp = sshd_fleet["dir"]
    assert isinstance(tmp, Path)
    worker = f"env PYTHONPATH={REPO} {sys.executable} -m agentkit._fleet.worker"
    done = subprocess.run(
        [sys.executable, "-m", "agentkit", "ask", "Which GPU driver?", "--hosts", "n[001-004]",
         "--ssh-config", str(tmp / "ssh_config"), "--known-hosts", str(tmp / "known_hosts"),
         "--remote-command", worker, "--remote-root", str(tmp / "f" / "{host}"),
         "--connect-timeout", "10", "--host-timeout", "60", "-q", "--json",
         "--trace", str(tmp / "t.jsonl")],
        capture_output=True, text=True, timeout=180, cwd=REPO,
        env={**os.environ, "HOME": str(tmp)})
    assert done.returncode == 9, done.stderr + done.stdout[-2000:]
    fleet = json.loads(done.stdout)["fleet"]
    got = {b: set(expand(n)) for b, n in fleet["buckets"].items()}
    assert got == {"ok": {"n001"}, "unreachable": {"n002"}, "changed-key": {"n003"},
                   "unknown-key": {"n004"}}, fleet["problems"]
    why = {p["nodes"]: p["error"] for p in fleet["problems"]}
    assert "connection refused" in why["n002"]
    assert "man in the middle" in why["n003"] and "Do not add" in why["n003"]
    assert "then add it" in why["n004"] and "Do not add" not in why["n004"]
