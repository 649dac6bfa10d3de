"""A private copy of a repository's metadata, made through descriptors, for the narrow git
reader: what was vetted is what is read.

Vetting ``.git`` and then letting a reader open it again by path is a race a writer on the
host wins (issue 28: ``.git/config`` swapped after the vetting, ``info/grafts`` made a
symlink, ``objects/info/alternates`` appearing). So ``.git`` is opened once through the path
guard, walked by directory descriptor without following any link, and only what reading
history needs is copied out of it: ``HEAD``, ``packed-refs``, ``refs/``, the loose objects and
the packs, the index. Grafts, alternates, ``shallow``, hooks and the configuration are never
copied, so the reader cannot follow them whatever they become.
"""

from __future__ import annotations

import os
import re
import stat

from ._paths import PathRefused, Root, normalize, open_in_root
from ._rules import Refused

# Reading the history of a big repository means copying its packs; past this it is refused
# (a deployment repository is a few MiB; the cost is measured in benchmarks/)
MAX_BYTES = 256 << 20
MAX_FILES = 100_000
_TOP = {"HEAD": "file", "packed-refs": "file", "index": "file", "refs": "dir",
        "objects": "dir"}
_OBJECTS = re.compile(r"[0-9a-f]{2}|pack")
_OBJECT_FILE = re.compile(r"[0-9a-f]{38,62}|pack-[0-9a-f]{40,64}\.(?:pack|idx)")
_NOFOLLOW = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK


class _Budget:
    def __init__(self) -> None:
        self.bytes = 0
        self.files = 0

    def spend(self, size: int, shown: str) -> None:
        self.bytes += size
        self.files += 1
        if self.bytes > MAX_BYTES or self.files > MAX_FILES:
            raise Refused(f"{shown}: the repository's history is more than {MAX_BYTES >> 20} "
                          f"MiB or {MAX_FILES} files; too large for the history reader")


def private_copy(root: Root, repo: str, dest: str) -> None:
    """Copy what history needs from ``REPO/.git`` (a host path) into ``dest``."""
    git_dir = normalize(repo if repo.startswith("/") else "/" + repo).rstrip("/") + "/.git"
    try:
        top = open_in_root(root, git_dir, directory=True)
    except PathRefused as exc:
        raise Refused(f"{repo} is not a git repository with a plain .git directory "
                      f"({exc})") from None
    try:
        _no_other_format(top.fd, git_dir)
        budget = _Budget()
        for name, kind in _TOP.items():
            _copy_entry(top.fd, name, kind, dest, git_dir, budget, depth=0)
    finally:
        os.close(top.fd)
    for d in ("refs/heads", "refs/tags", "objects/pack"):
        os.makedirs(os.path.join(dest, d), exist_ok=True)
    with open(os.path.join(dest, "config"), "w", encoding="ascii") as f:
        f.write("[core]\n\trepositoryformatversion = 0\n\tbare = true\n")


def _no_other_format(dir_fd: int, shown: str) -> None:
    """A SHA-256 repository (``extensions.objectFormat``) is refused, not misread."""
    try:
        fd = os.open("config", _NOFOLLOW, dir_fd=dir_fd)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise Refused(f"{shown}/config: {exc.strerror}") from None
    try:
        data = os.read(fd, 1 << 20) if stat.S_ISREG(os.fstat(fd).st_mode) else b""
    finally:
        os.close(fd)
    if b"objectformat" in data.lower().replace(b" ", b""):
        raise Refused(f"{shown}/config names another object format; only SHA-1 repositories "
                      "are read")


def _copy_entry(dir_fd: int, name: str, kind: str, dest: str, shown: str, budget: _Budget,
                depth: int) -> None:
    path = f"{shown}/{name}"
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(st.st_mode):
        raise Refused(f"{path} is a symbolic link inside .git; the history reader never "
                      "follows one, so the repository is refused")
    want = stat.S_ISDIR if kind == "dir" else stat.S_ISREG
    if not want(st.st_mode):
        raise Refused(f"{path} is not a plain {'directory' if kind == 'dir' else 'file'}; "
                      "the repository is refused")
    target = os.path.join(dest, name)
    if kind == "file":
        _copy_file(dir_fd, name, target, path, budget, objects=depth > 0)
    else:
        _copy_dir(dir_fd, name, target, path, budget, depth)


def _copy_dir(dir_fd: int, name: str, target: str, shown: str, budget: _Budget,
              depth: int) -> None:
    if depth > 12:
        raise Refused(f"{shown} is nested too deep")
    fd = os.open(name, _NOFOLLOW | os.O_DIRECTORY, dir_fd=dir_fd)
    try:
        os.makedirs(target, exist_ok=True)
        in_objects = shown.endswith("/.git/objects") or "/.git/objects/" in shown
        for child in sorted(os.listdir(fd)):
            st = os.stat(child, dir_fd=fd, follow_symlinks=False)
            if in_objects and not _wanted_object(shown, child):
                continue  # info/ (alternates, commit-graph), temporary packs: never read
            kind = "dir" if stat.S_ISDIR(st.st_mode) else "file"
            _copy_entry(fd, child, kind, target, shown, budget, depth + 1)
    finally:
        os.close(fd)


def _wanted_object(shown: str, child: str) -> bool:
    if shown.endswith("/.git/objects"):
        return _OBJECTS.fullmatch(child) is not None
    return _OBJECT_FILE.fullmatch(child) is not None


def _copy_file(dir_fd: int, name: str, target: str, shown: str, budget: _Budget,
               objects: bool) -> None:
    try:
        fd = os.open(name, _NOFOLLOW, dir_fd=dir_fd)
    except OSError as exc:
        raise Refused(f"{shown}: {exc.strerror}; the repository is refused") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Refused(f"{shown} is not a plain file; the repository is refused")
        if objects and "/objects/" in shown and st.st_nlink > 1:
            # another name of a file that may lie outside the allowed paths (a clone made
            # with --local shares its source's objects so); --no-hardlinks clones are read
            raise Refused(f"{shown} has other hard links; the repository is refused")
        budget.spend(st.st_size, shown)
        with open(target, "wb") as out:
            while chunk := os.read(fd, 1 << 20):
                out.write(chunk)
    finally:
        os.close(fd)
