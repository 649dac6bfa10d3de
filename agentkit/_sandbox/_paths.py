"""Confinement of file access to a root directory.

Paths are *host* paths (``/etc/systemd/system/x.service``) resolved inside ``root`` the way
``openat2(RESOLVE_IN_ROOT)`` would: component by component from a held directory descriptor,
never following a link with the kernel. An absolute symlink target is taken relative to the
root (a snapshot keeps the host's own links); a ``..`` that would climb above the root is
refused. Because every component is opened with ``O_NOFOLLOW`` relative to its parent's
descriptor, swapping a component for a symlink between check and open makes the open fail
instead of escaping.
"""

from __future__ import annotations

import fnmatch
import os
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from .. import _regex as re  # re, its compiled patterns kept on disk (_regex.py)
from ._kernel import secret_inodes

_MAX_LINKS = 40

# Never readable, whatever the root: kernel interfaces, devices and well-known credential
# stores. A snapshot never holds them either (see _snapshot.py).
_DENIED_PREFIXES = ("/proc", "/sys", "/dev")
_DENIED_GLOBS = (
    "*/.netrc",
    "*/.aws/credentials",
    "*/.aws/config",
    "*/.cache/huggingface/token",
    "*/.huggingface/token",
    "*/.ssh/*",
    "*/.git-credentials",
    "*/.docker/config.json",
    "*/.kube/config",
    "*/.pgpass",
    "*/.config/gcloud/*",
    "*/.azure/*",
    "*/huggingface/stored_tokens",
    "*/stored_tokens",
    "*/token",  # $HF_HOME/token wherever HF_HOME points; serviceaccount/token
    "/run/secrets/*",
    "/var/run/secrets/*",
    "/etc/shadow",
    "/etc/gshadow",
    "/etc/shadow-",  # the backups shadow-utils keeps hold the same hashes
    "/etc/gshadow-",
    "/etc/security/opasswd",
    "/etc/ssh/ssh_host_*",
    "*/id_rsa*",
    "*/id_ed25519*",
    "*.pem",
    "*.key",
    # the rest of what the kernel layer masks in a home (_kernel._HOME_SECRETS): the file tools
    # run in this process, without that layer, so the names are refused here too
    "*/.vault-token",
    "*/.password-store/*",
    "*/.local/share/keyrings/*",
    "*/.config/containers/auth.json",
    "*/containers/auth.json",
    "/run/containers/*/auth.json",
    "*/.gnupg/*",
    "*/.npmrc",
    "*/.pypirc",
    "*/.config/gh/*",
    "*/.aws/*",
    "*/.docker/*",
    "*/.kube/*",
    "*/.config/rclone/*",
    "*/.terraform.d/credentials.tfrc.json",
    "*/.*_history",
    "*/.lesshst",
    "*/.viminfo",
    "/etc/ssl/private/*",
    "/etc/kubernetes/pki/*",
    "/var/lib/kubelet/pki/*",
    "*/kubernetes.io~secret/*",
    "/etc/docker/key.json",
    "/etc/wireguard/*",
    "/etc/NetworkManager/system-connections/*",
    "/var/lib/docker/containers/*",  # each container's config holds its environment
    "/var/lib/docker/swarm/*",
    "/etc/kubernetes/*.conf",
    "/etc/rancher/k3s/k3s.yaml",
    "/etc/rancher/rke2/rke2.yaml",
)


class PathRefused(Exception):
    """A path the sandbox will not open, with the reason in words."""


@dataclass(frozen=True)
class Root:
    """The directory that stands for the host's ``/``, and the host subtrees readable in it."""

    path: str
    allow: tuple[str, ...] = ("/",)
    # Told of every file read (canonical host path); `agentkit snapshot` uses it.
    recorder: Callable[[str], None] | None = field(default=None, compare=False, repr=False)

    @property
    def is_live(self) -> bool:
        return os.path.realpath(self.path) == "/"


def normalize(host_path: str) -> str:
    """Lexically normalize a host path (absolute; relative ones are taken from ``/``)."""
    if "\0" in host_path:
        raise PathRefused("path contains a NUL byte")
    if not host_path:
        raise PathRefused("empty path")
    try:
        host_path.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        raise PathRefused("path is not valid UTF-8") from None
    parts: list[str] = []
    for comp in host_path.split("/"):
        if comp in ("", "."):
            continue
        if comp == "..":
            if not parts:
                raise PathRefused(f"{host_path!r} climbs above the root with '..'")
            parts.pop()
        else:
            parts.append(comp)
    return "/" + "/".join(parts)


# The globs as one pattern, each translated as fnmatchcase reads it: every file read checks
# them, and fifty-odd fnmatchcase calls a path were a third of a snapshot host's path checks.
_DENIED = re.compile("|".join(f"(?:{fnmatch.translate(g)})" for g in _DENIED_GLOBS))


def check_policy(root: Root, host_path: str) -> None:
    """Refuse denied locations and anything outside the allowed subtrees."""
    for prefix in _DENIED_PREFIXES:
        if host_path == prefix or host_path.startswith(prefix + "/"):
            raise PathRefused(f"{host_path} is under {prefix}, which the sandbox never reads")
    if _DENIED.match(host_path):
        raise PathRefused(f"{host_path} is a credential file; the sandbox never reads it")
    if not any(_within(host_path, a) for a in root.allow):
        raise PathRefused(f"{host_path} is outside the allowed paths {list(root.allow)}")


def _within(path: str, prefix: str) -> bool:
    # Component-wise, so an allowed /root does not admit /root-evil.
    prefix = prefix.rstrip("/")
    return prefix == "" or path == prefix or path.startswith(prefix + "/")


@dataclass
class Opened:
    fd: int
    host_path: str
    st: os.stat_result


def _walk(root_fd: int, host_path: str) -> tuple[int, str, str]:
    """Resolve all but the last component; return (dir fd, dir host path, last name)."""
    pending = [c for c in normalize(host_path).split("/") if c]
    stack: list[tuple[int, str]] = [(os.dup(root_fd), "")]
    links = 0
    try:
        while len(pending) > 1 or (pending and pending[0] == ".."):
            comp = pending.pop(0)
            cur_fd, _cur_name = stack[-1]
            if comp in ("", "."):
                continue
            if comp == "..":
                if len(stack) == 1:
                    raise PathRefused(f"{host_path!r} leads above the root")
                os.close(stack.pop()[0])
                continue
            st = os.stat(comp, dir_fd=cur_fd, follow_symlinks=False)
            if stat.S_ISLNK(st.st_mode):
                links += 1
                if links > _MAX_LINKS:
                    raise PathRefused(f"too many symlinks resolving {host_path!r}")
                target = os.readlink(comp, dir_fd=cur_fd)
                if target.startswith("/"):
                    while len(stack) > 1:
                        os.close(stack.pop()[0])
                pending[:0] = [c for c in target.split("/") if c]
                continue
            fd = os.open(comp, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                         dir_fd=cur_fd)
            stack.append((fd, comp))
        dir_fd = stack[-1][0]
        dir_path = "/" + "/".join(name for _, name in stack[1:])
        for fd, _ in stack[:-1]:
            os.close(fd)
        return dir_fd, dir_path, pending[0] if pending else ""
    except BaseException:
        for fd, _ in stack:
            os.close(fd)
        raise


def open_in_root(root: Root, host_path: str, *, directory: bool = False) -> Opened:
    """Open a regular file (or a directory) inside the root, following links only in-root."""
    check_policy(root, normalize(host_path))  # the asked path, and below the resolved one
    root_fd = os.open(root.path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        o = _open_from(root, root_fd, host_path, directory, 0)
    finally:
        os.close(root_fd)
    if not directory and (o.st.st_dev, o.st.st_ino) in secret_inodes():
        os.close(o.fd)  # a hard link: a credential file under a name no rule covers
        raise PathRefused(f"{o.host_path} is a credential file (matched by inode: a hard link "
                          "under another name is too); the sandbox never reads it")
    return o


def _open_from(root: Root, root_fd: int, host_path: str, directory: bool, depth: int,
               asked: str = "") -> Opened:
    asked = asked or host_path  # errors name the path the caller gave, not a link's target
    if depth > _MAX_LINKS:
        raise PathRefused(f"too many symlinks resolving {asked!r}")
    try:
        dir_fd, dir_path, name = _walk(root_fd, host_path)
    except FileNotFoundError:
        raise PathRefused(f"{host_path}: no such file or directory") from None
    except NotADirectoryError:
        raise PathRefused(f"{host_path}: a component is not a directory") from None
    except OSError as exc:
        raise PathRefused(f"{host_path}: {exc.strerror}") from None
    try:
        if not name:  # the root itself
            full = "/"
            fd = os.dup(dir_fd)
        else:
            full = (dir_path.rstrip("/") + "/" + name) if dir_path != "/" else "/" + name
            try:
                st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            except FileNotFoundError:
                raise PathRefused(f"{full}: no such file or directory") from None
            except OSError as exc:  # a name too long, a permission: a refusal like any other
                raise PathRefused(f"{full}: {exc.strerror}") from None
            if stat.S_ISLNK(st.st_mode):
                try:
                    target = os.readlink(name, dir_fd=dir_fd)
                except OSError:  # swapped for a file or removed since the stat: a race
                    raise PathRefused(f"{full} changed while it was being resolved; "
                                      "try again") from None
                nxt = target if target.startswith("/") else f"{dir_path.rstrip('/')}/{target}"
                return _open_from(root, root_fd, nxt, directory, depth + 1, asked)
            check_policy(root, normalize(full))
            flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
            if directory:
                flags |= os.O_DIRECTORY
            try:
                fd = os.open(name, flags, dir_fd=dir_fd)
            except OSError as exc:
                raise PathRefused(f"{full}: {exc.strerror}") from None
        st = os.fstat(fd)
        kind_ok = stat.S_ISDIR(st.st_mode) if directory else stat.S_ISREG(st.st_mode)
        if not kind_ok:
            os.close(fd)
            want = "a directory" if directory else "a regular file"
            raise PathRefused(f"{full} is not {want}; the sandbox reads only those")
        if full == "/":
            check_policy(root, "/")
        return Opened(fd=fd, host_path=normalize(full), st=st)
    finally:
        os.close(dir_fd)


@contextmanager
def opened(root: Root, host_path: str, *, directory: bool = False) -> Iterator[Opened]:
    o = open_in_root(root, host_path, directory=directory)
    try:
        yield o
    finally:
        os.close(o.fd)


def list_entries(root: Root, host_path: str) -> list[tuple[str, str]]:
    """(name, type) of a directory's entries; type is file, dir, link or other."""
    with opened(root, host_path, directory=True) as d:
        out: list[tuple[str, str]] = []
        with os.scandir(d.fd) as it:
            for entry in it:
                if entry.is_symlink():
                    kind = "link"
                elif entry.is_dir(follow_symlinks=False):
                    kind = "dir"
                elif entry.is_file(follow_symlinks=False):
                    kind = "file"
                else:
                    kind = "other"
                out.append((entry.name, kind))
        return sorted(out)


def read_bytes(root: Root, host_path: str, limit: int) -> tuple[bytes, int, str]:
    """Up to ``limit`` bytes of a regular file: (data, total size, canonical host path)."""
    data, st, canonical = read_bytes_stat(root, host_path, limit)
    return data, st.st_size, canonical


def read_bytes_stat(root: Root, host_path: str,
                    limit: int) -> tuple[bytes, os.stat_result, str]:
    """:func:`read_bytes` with the opened file's ``stat`` (its size, its link count)."""
    with opened(root, host_path) as f:
        if root.recorder is not None:
            root.recorder(f.host_path)
        chunks: list[bytes] = []
        remaining = limit
        while remaining > 0:
            chunk = os.read(f.fd, min(remaining, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
        return b"".join(chunks), f.st, f.host_path
