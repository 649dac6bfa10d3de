"""Each isolation the kernel layer promises (docs/security.md, "The kernel layer"), seen from
inside a real bubblewrap sandbox built by ``_kernel.wrap``, and what each program is given.

Expected facts, from bwrap(1) and the kernel's documentation, written before running: a new
ipc, uts, net, cgroup and pid namespace has an inode of its own in /proc/self/ns/ (different
from the host's); ``--cap-drop ALL`` leaves CapEff, CapPrm and CapBnd at 0 in
/proc/self/status; ``--new-session`` makes the sandbox's session id differ from the caller's;
``--clearenv`` with ``--setenv`` leaves exactly the variables set; ``--chdir /`` starts the
program in /; ``--ro-bind / /`` refuses writes with EROFS; ``--tmpfs /tmp`` shows an empty /tmp;
``--unshare-pid`` with a fresh /proc lists only the sandbox's own processes.
"""

from __future__ import annotations

import os
import subprocess
import uuid
from pathlib import Path

import pytest

from agentkit._sandbox import _kernel

pytestmark = pytest.mark.skipif(
    _kernel._probe(_kernel.BWRAP) is not None,
    reason=f"the kernel layer cannot run here: {_kernel._probe(_kernel.BWRAP)}")

ENV = {"PATH": "/usr/bin:/bin", "AGENTKIT_ONLY": "1"}


def inside(script: str, needs: _kernel.Needs | None = None, live: bool = True) -> str:
    argv = _kernel.wrap(["/bin/sh", "-c", script], ENV, needs or _kernel.Needs(), live=live)
    done = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    return done.stdout + done.stderr


@pytest.mark.parametrize("ns", ["ipc", "uts", "net", "cgroup", "pid"])
def test_each_namespace_is_new(ns: str) -> None:
    host = os.readlink(f"/proc/self/ns/{ns}")
    seen = inside(f"readlink /proc/self/ns/{ns}").strip()
    assert seen.startswith(f"{ns}:[") and seen != host


def test_no_capability_is_left() -> None:
    status = inside("cat /proc/self/status")
    caps = dict(line.split(":\t") for line in status.splitlines()
                if line.startswith(("CapEff", "CapPrm", "CapBnd", "CapAmb")))
    assert caps and all(int(v, 16) == 0 for v in caps.values()), caps


def test_a_session_of_its_own() -> None:
    # field 6 of /proc/self/stat is the session id; ps is not needed
    sid = inside("cut -d' ' -f6 /proc/self/stat").strip()
    assert sid.isdigit() and int(sid) != os.getsid(0)


def test_exactly_the_environment_given_and_the_root_as_directory() -> None:
    out = inside("env; echo cwd=$(pwd)")
    names = {line.split("=", 1)[0] for line in out.splitlines() if "=" in line}
    assert names - {"cwd", "PWD", "SHLVL", "_", "OLDPWD"} == set(ENV)
    assert "cwd=/\n" in out


def test_the_root_is_read_only_and_scratch_is_empty() -> None:
    probe = Path.home() / f".agentkit-ro-{uuid.uuid4().hex[:8]}"
    marker = Path("/tmp") / f"agentkit-scratch-{uuid.uuid4().hex[:8]}"
    marker.write_text("x")
    try:
        out = inside(f"touch {probe}; echo rc=$?; echo n=$(ls -A /tmp | wc -l)")
        assert "Read-only file system" in out and "rc=1" in out
        assert "n=0\n" in out  # /tmp is empty inside
        assert not probe.exists()
    finally:
        marker.unlink()


def test_only_the_sandboxs_own_processes_are_seen() -> None:
    pids = [p for p in inside("ls /proc").split() if p.isdigit()]
    assert 0 < len(pids) <= 3, pids  # the shell (pid 1) and ls
    assert "1" in pids


def test_ps_alone_sees_the_hosts_processes() -> None:
    seen = inside("ls /proc", _kernel.needs_of("ps", [], live=True)).split()
    assert str(os.getpid()) in seen


def test_what_each_program_is_given() -> None:
    assert _kernel.needs_of("cat", ["/etc/hostname"], live=True) == _kernel.Needs()
    assert _kernel.needs_of("cat", ["/tmp/x"], live=True).binds == ("/tmp/x",)
    assert _kernel.needs_of("cat", ["/etc/hostname"], live=False).binds == ("/etc/hostname",)
    # kubectl is never run live and kustomize has a sandbox of its own: no network, no
    # kubeconfig, nothing beyond what cat gets
    assert _kernel.needs_of("kubectl", [], live=True) == _kernel.Needs()
    podman = _kernel.needs_of("podman", [], live=True)
    assert podman.unmasked == _kernel._PODMAN_STORAGE and not podman.network
    ps = _kernel.needs_of("ps", [], live=True)
    assert ps.host_pids and not ps.network and not ps.unmasked
    smi = _kernel.needs_of("nvidia-smi", [], live=True)
    assert smi.devices and not smi.network and smi.unmasked == ("/run/nvidia-persistenced",)
    docker = _kernel.needs_of("docker", [], live=True)
    assert docker.unmasked == tuple(os.path.realpath(p) for p in
                                    ("/run/docker.sock", "/var/run/docker.sock"))
    assert not docker.network and not docker.host_pids


def test_the_network_is_given_only_where_needed() -> None:
    no_net = inside("cat /proc/net/dev | wc -l")
    net = inside("cat /proc/net/dev | wc -l", _kernel.Needs(network=True))
    # a new net namespace has only lo (2 header lines + lo); the host has more
    assert no_net.strip() == "3" and int(net.strip()) >= 3
    assert os.readlink("/proc/self/ns/net") == inside(
        "readlink /proc/self/ns/net", _kernel.Needs(network=True)).strip()


def test_a_snapshot_sandbox_has_no_host_data() -> None:
    out = inside("ls /etc; ls /root 2>&1; ls /usr/bin | head -1", live=False)
    etc = set(out.split("\n", 1)[0].split())
    assert "passwd" in out and "shadow" not in out and "hostname" not in etc
