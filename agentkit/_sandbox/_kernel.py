"""The kernel layer under the allowlist: every command runs inside bubblewrap.

The allowlist decides *which* commands run; this layer decides what they can reach when they
do, so a check that is wrong about a path, a flag or a program still cannot read a secret or
change the host. Each command gets:

* the host's ``/`` bind-mounted read-only (a snapshot root: only the system's programs and
  the files the command was given);
* fresh pid, ipc, net, uts and cgroup namespaces, a ``/proc`` of the sandbox only (no host
  ``/proc/*/environ``), a minimal ``/dev``, empty ``/tmp``, ``/var/tmp`` and ``/run/user``;
* credential paths (ssh, cloud, docker, kube, netrc, pgpass, vault, shadow and its backups,
  service-account and pod secrets) **not mounted**: an empty directory or an unreadable file
  stands where they were, so no reader, however its output is sliced, sees them;
* a fixed environment, ``--die-with-parent``, ``--new-session``, every capability dropped.

A few programs need one thing more, and get only that: ``podman`` its storage (it has no
daemon), ``nvidia-smi`` the NVIDIA device nodes, ``ps`` the host's process table. None gets
the network (kubectl, which would need it, is never run live).

Where bubblewrap or user namespaces are unavailable the setting decides: ``auto`` warns once
and runs allowlist-only, ``kernel`` refuses every command, ``allowlist`` never tries.
"""

from __future__ import annotations

import contextlib
import functools
import glob
import logging
import os
import pwd
import stat
import subprocess
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

BWRAP = "/usr/bin/bwrap"
Setting = Literal["auto", "kernel", "allowlist"]
SETTINGS: tuple[Setting, ...] = ("auto", "kernel", "allowlist")

_log = logging.getLogger("agentkit.sandbox")

# Emptied in every sandbox: scratch space other programs and users leave files (and agent
# sockets) in.
_HIDDEN_DIRS = ("/tmp", "/var/tmp", "/run/user", "/dev/shm")

# Credential locations relative to each home directory (every passwd home and /home/*).
_HOME_SECRETS = (
    ".ssh", ".aws", ".azure", ".config/gcloud", ".docker", ".kube", ".netrc", ".pgpass",
    ".vault-token", ".git-credentials", ".cache/huggingface/token", ".huggingface/token",
    ".config/gh", ".gnupg", ".npmrc", ".pypirc", ".config/rclone", ".password-store",
    ".local/share/keyrings", ".docker/config.json", ".config/containers/auth.json",
    ".terraform.d/credentials.tfrc.json", ".bash_history", ".zsh_history", ".python_history",
    ".mysql_history", ".psql_history", ".lesshst", ".viminfo",
)
# Host-wide credential locations (globs). Kubeconfigs are masked for every program (kubectl
# is never run live); podman's storage for every program but podman.
_SYSTEM_SECRETS = (
    "/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/security/opasswd",
    "/etc/ssh/ssh_host_*key", "/etc/ssl/private", "/etc/kubernetes/pki", "/run/secrets",
    "/var/run/secrets", "/var/lib/kubelet/pods/*/volumes/kubernetes.io~secret",
    "/var/lib/kubelet/pki", "/var/lib/docker/containers", "/var/lib/docker/swarm",
    "/etc/docker/key.json", "/run/containers/0/auth.json", "/etc/containers/auth.json",
    "/root/.config/containers/auth.json", "/etc/wireguard",
    "/etc/NetworkManager/system-connections",
)
_KUBECONFIGS = ("/etc/kubernetes/admin.conf", "/etc/kubernetes/kubelet.conf",
                "/etc/kubernetes/controller-manager.conf", "/etc/kubernetes/scheduler.conf",
                "/etc/rancher/k3s/k3s.yaml", "/etc/rancher/rke2/rke2.yaml")
_PODMAN_STORAGE = ("/var/lib/containers",)
_MASK_TTL_S = 30.0  # homes and secrets move rarely; re-listing them per command is waste


class KernelUnavailable(RuntimeError):
    """The kernel layer was required (``sandbox = "kernel"``) and cannot run here."""


@dataclass(frozen=True)
class Layer:
    """Which sandbox is in force for commands, and why."""

    mode: Literal["kernel", "allowlist-only"]
    detail: str


@functools.lru_cache(maxsize=8)
def _probe(bwrap: str) -> str | None:
    """None when bubblewrap can build the sandbox here, else the reason in words."""
    if not os.access(bwrap, os.X_OK):
        return f"bubblewrap is not installed at {bwrap} (Debian/Ubuntu: apt install bubblewrap)"
    try:
        done = subprocess.run(
            [bwrap, "--ro-bind", "/", "/", "--unshare-all", "--as-pid-1", "--die-with-parent",
             "--proc", "/proc", "--dev", "/dev", "--", "/bin/true"],
            capture_output=True, timeout=10, env={}, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap did not start: {exc}"
    if done.returncode != 0:
        first = (done.stderr.decode("utf-8", "replace").strip().splitlines() or ["no reason"])[0]
        return f"bubblewrap cannot create namespaces here (user namespaces off?): {first}"
    return None


_warned: set[str] = set()
_early: dict[str, threading.Thread] = {}


def probe_early(setting: Setting, bwrap: str | None = None) -> None:
    """Start the probe :func:`layer` will need in a thread now, for a program that has other
    work to do meanwhile (the CLI loads its modules while bubblewrap starts); ``layer`` waits
    for it and gives the same answer and the same warning as without."""
    bwrap = bwrap or BWRAP
    if setting == "allowlist" or bwrap in _early:
        return
    thread = threading.Thread(target=_probe, args=(bwrap,), daemon=True,
                              name="agentkit-bwrap-probe")
    _early[bwrap] = thread
    thread.start()


def layer(setting: Setting, bwrap: str | None = None) -> Layer:
    """The layer commands run under for ``setting``; warns once per reason in ``auto``.

    >>> layer("allowlist").mode
    'allowlist-only'
    """
    if setting == "allowlist":
        return Layer("allowlist-only", "the kernel layer is off (sandbox = allowlist)")
    bwrap = bwrap or BWRAP
    early = _early.get(bwrap)
    if early is not None:
        early.join()  # its result is in _probe's cache
    why = _probe(bwrap)
    if why is None:
        return Layer("kernel", f"bubblewrap at {bwrap}: read-only root, no network, "
                               "credential paths not mounted")
    if setting == "kernel":
        raise KernelUnavailable(f"refused: the kernel sandbox is required but {why}; install "
                                "bubblewrap or set AGENTKIT_SANDBOX=auto")
    if why not in _warned:
        _warned.add(why)
        _log.warning("SANDBOX: commands run allowlist-only, without the kernel layer: %s. "
                     "Run `agentkit doctor` for the fix; AGENTKIT_SANDBOX=kernel refuses "
                     "instead.", why)
    return Layer("allowlist-only", why)


def in_force(setting: Setting) -> str:
    """One word for the trace and the CLI: kernel, allowlist-only, or refused.

    >>> in_force("allowlist")
    'allowlist-only'
    """
    try:
        return layer(setting).mode
    except KernelUnavailable:
        return "refused"


@dataclass(frozen=True)
class Needs:
    """What one command is given beyond the default sandbox."""

    binds: tuple[str, ...] = ()  # host paths mounted read-only at the same place
    network: bool = False
    host_pids: bool = False
    devices: bool = False
    unmasked: tuple[str, ...] = ()  # credential paths this program itself must read


# Host daemons listen on path-named Unix sockets, which a network namespace does not cut:
# docker.sock and containerd's are root on the host, D-Bus reaches systemd. Every socket
# under these is covered for every program but the one that must talk to it (red team
# round 2: a program run through a config hole could connect to any of them).
_SOCKET_TOPS = ("/run", "/var/run", "/var/lib/kubelet", "/var/snap")
_OWN_SOCKETS = {
    "docker": ("/run/docker.sock", "/var/run/docker.sock"),
    "systemctl": ("/run/systemd/private", "/run/dbus/system_bus_socket",
                  "/var/run/dbus/system_bus_socket"),
    "nvidia-smi": ("/run/nvidia-persistenced",),
    "crictl": ("/run/containerd/containerd.sock", "/run/crio/crio.sock",
               "/run/k3s/containerd/containerd.sock"),
}


def needs_of(program: str, paths: Iterable[str], *, live: bool) -> Needs:
    """The extra reach of ``program`` given the (already policed) ``paths`` it reads: on the
    live host only those in an emptied directory need mounting, on a snapshot every one."""
    binds = tuple(p for p in paths if not live or within_any(p, _HIDDEN_DIRS))
    if program == "podman":
        return Needs(binds, unmasked=_PODMAN_STORAGE)
    if program == "ps":
        return Needs(binds, host_pids=True)
    if program == "nvidia-smi":
        return Needs(binds, devices=True, unmasked=_OWN_SOCKETS["nvidia-smi"])
    if program in _OWN_SOCKETS:
        return Needs(binds, unmasked=tuple(os.path.realpath(p) for p in _OWN_SOCKETS[program]))
    return Needs(binds)


def wrap(argv: Sequence[str], env: dict[str, str], needs: Needs, *, live: bool,
         bwrap: str | None = None) -> list[str]:
    """``argv`` as bubblewrap runs it. ``live``: the host's own ``/``; otherwise a snapshot,
    where only the system's programs and ``needs.binds`` are mounted."""
    args = [bwrap or BWRAP, "--die-with-parent", "--new-session", "--cap-drop", "ALL",
            "--unshare-user-try", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    if not needs.network:
        args.append("--unshare-net")
    if live:
        args += ["--ro-bind", "/", "/"]
    else:
        args += _system_only()
    if not needs.host_pids:
        # --as-pid-1: no bwrap init in the namespace. The monitor exits on the init's status
        # report without reaping it, so each command left a `[bwrap] <defunct>` where pid 1
        # does not reap; the command itself as pid 1 is the monitor's child, and is waited for.
        args += ["--unshare-pid", "--as-pid-1", "--proc", "/proc"]
    args += ["--dev", "/dev"]
    if needs.devices:
        for node in sorted(glob.glob("/dev/nvidia*")):
            args += ["--dev-bind", node, node]
    for hidden in _HIDDEN_DIRS:
        if live and os.path.isdir(hidden) and hidden != "/dev/shm":
            args += ["--tmpfs", hidden]
    if live:
        # the lists are up to a TTL old: a path gone since has nothing to hide, and no mount
        # point on the read-only root (bwrap would refuse the whole command)
        for path in _masks(needs.unmasked):
            if os.path.isdir(path):
                args += ["--tmpfs", path]
            elif os.path.lexists(path):
                args += ["--ro-bind", "/dev/null", path]
        for sock in daemon_sockets():
            if not within_any(sock, needs.unmasked) and os.path.lexists(sock):
                args += ["--ro-bind", "/dev/null", sock]  # connect() then finds no listener
    for path in needs.binds:
        args += ["--ro-bind", path, path]
    args += ["--chdir", "/", "--clearenv"]
    for name, value in sorted(env.items()):
        args += ["--setenv", name, value]
    return [*args, "--", *argv]


def _system_only() -> list[str]:
    """The programs and libraries a command needs, without the host's data: /usr and its
    merged-usr links, the alternatives links, the loader cache, passwd/group for names."""
    args: list[str] = []
    for top in ("/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32"):
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    for path in ("/etc/alternatives", "/etc/ld.so.cache", "/etc/passwd", "/etc/group",
                 "/etc/localtime"):
        if os.path.lexists(path):
            args += ["--ro-bind", path, path]
    return args


def within_any(path: str, dirs: Iterable[str]) -> bool:
    """``path`` is one of ``dirs`` or below one (component-wise: /data does not hold /data-x)."""
    return any(path == d or path.startswith(d.rstrip("/") + "/") for d in dirs)


def _masks(unmasked: Sequence[str]) -> list[str]:
    """Existing credential paths to cover, minus those this program must read."""
    found = _existing_secrets(int(time.monotonic() // _MASK_TTL_S))
    return [p for p in found if not within_any(p, unmasked)]


def daemon_sockets() -> tuple[str, ...]:
    """Path-named Unix sockets of the host's daemons (resolved, outside the emptied
    directories), listed once per TTL epoch.

    >>> all(p.startswith("/") for p in daemon_sockets())
    True
    """
    return _sockets(int(time.monotonic() // _MASK_TTL_S))


@functools.lru_cache(maxsize=1)
def _sockets(_epoch: int) -> tuple[str, ...]:
    found: set[str] = set()
    for top in {os.path.realpath(t) for t in _SOCKET_TOPS if os.path.isdir(t)}:
        for path in _files_below(top, skip=_HIDDEN_DIRS):  # bounded: a huge /run costs the same
            with contextlib.suppress(OSError):
                if stat.S_ISSOCK(os.lstat(path).st_mode):
                    found.add(path)
    return tuple(sorted(found))


def _candidates(hidden_too: bool) -> dict[str, None]:
    """Credential paths present on this host, resolved; ``hidden_too``: also those under the
    directories the sandbox empties (/tmp …), which need no mask but whose files a hard link
    elsewhere still reaches."""
    candidates: list[str] = []
    for pattern in (*_SYSTEM_SECRETS, *_KUBECONFIGS, *_PODMAN_STORAGE):
        candidates += glob.glob(pattern) if any(c in pattern for c in "*?[") else [pattern]
    for home in _homes():
        candidates += [os.path.join(home, name) for name in _HOME_SECRETS]
    seen: dict[str, None] = {}
    for path in candidates:
        # judged by where it resolves: a home under /tmp is emptied away, but its ~/.ssh
        # linking out of /tmp is not
        if os.path.lexists(path):
            real = os.path.realpath(path)
            if real != "/" and os.path.exists(real) and (
                    hidden_too or not within_any(real, _HIDDEN_DIRS)):
                seen.setdefault(real)
    return seen


@functools.lru_cache(maxsize=1)
def _existing_secrets(_epoch: int) -> tuple[str, ...]:
    """Credential paths present on this host, resolved (a mount lands on the link's target,
    so masking the target hides every name that reaches it). Cached per TTL epoch."""
    seen = _candidates(hidden_too=False)
    # Parents before children would make the child's mount point vanish: keep the outermost.
    kept: list[str] = []
    for path in sorted(seen):
        if not any(within_any(path, [k]) for k in kept):
            kept.append(path)
    return tuple(kept)


def secret_inodes() -> frozenset[tuple[int, int]]:
    """(device, inode) of every credential file found (and of the files directly inside a
    credential directory): a hard link elsewhere is the same file under a name no mask and
    no deny-list covers, so operands are compared by inode too."""
    return _inodes(int(time.monotonic() // _MASK_TTL_S))


@functools.lru_cache(maxsize=1)
def _inodes(epoch: int) -> frozenset[tuple[int, int]]:
    found: set[tuple[int, int]] = set()
    # a home (or any credential) under /tmp is emptied away from the sandbox, not masked,
    # but a hard link to one of its files outside /tmp is still that file
    for path in _candidates(hidden_too=True):
        names = _files_below(path) if os.path.isdir(path) else [path]
        for name in names:
            try:
                st = os.stat(name)
            except OSError:
                continue
            if not os.path.isdir(name):
                found.add((st.st_dev, st.st_ino))
    return frozenset(found)


def _files_below(top: str, limit: int = 5000, depth: int = 6,
                 skip: Sequence[str] = ()) -> list[str]:
    """Files under a directory, nested ones too (a credential directory's ~/.config/gcloud/
    legacy_credentials/ACCOUNT/adc.json, the sockets under /run), without following links or
    entering ``skip``; bounded so a huge directory costs a bounded walk (red team round 2:
    only a credential directory's top level was seen)."""
    out: list[str] = []
    for here, dirs, files in os.walk(top, followlinks=False):
        if within_any(here, skip):
            dirs[:] = []
            continue
        if here.count(os.sep) - top.count(os.sep) >= depth:
            dirs[:] = []
        out += [os.path.join(here, f) for f in files]
        if len(out) >= limit:
            break
    return out[:limit]


def _homes() -> list[str]:
    homes = {"/root", *(entry.pw_dir for entry in pwd.getpwall())}
    homes.update(glob.glob("/home/*"))
    return sorted(h for h in homes if h.startswith("/") and h != "/" and os.path.isdir(h))
