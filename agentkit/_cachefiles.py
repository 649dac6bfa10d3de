"""The user's cache directory of agentkit's derived files (compiled Jinja code, compiled
regular expressions, load-time check marks), each entry one file.

What is loaded from it changes what agentkit does, so an entry is read only from a directory
and a file owned by the user and writable by no one else (the rule of Jinja's
``FileSystemBytecodeCache``), never through a link; anything else, or anything unreadable,
is a miss. ``AGENTKIT_CACHE_DIR`` moves the cache (default ``$XDG_CACHE_HOME/agentkit`` or
``~/.cache/agentkit``); ``off`` turns it off.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import stat
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Any


def cache_dir() -> Path | None:
    """Where the cache lives, or None when it is turned off."""
    where = os.environ.get("AGENTKIT_CACHE_DIR")
    if where is not None:
        return None if where.strip().lower() in ("", "off", "0", "none") else Path(where)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "agentkit"


@lru_cache(maxsize=4)
def _usable_dir(path: str) -> bool:
    """The directory exists (made 0700 if not), is ours and writable by no one else."""
    with contextlib.suppress(OSError):
        os.makedirs(path, mode=0o700, exist_ok=True)
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return (stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid()
            and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH))


def read(name: str) -> bytes | None:
    """The bytes of cache entry ``name``, if it is a regular file of ours that no one else can
    write; None otherwise."""
    where = cache_dir()
    if where is None or not _usable_dir(str(where)):
        return None
    try:  # O_NONBLOCK: a FIFO put there opens at once (and is refused below), never waits
        fd = os.open(where / name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if (not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid()
                or st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)):
            return None
        return f.read()


def read_marshalled(name: str) -> Any:
    """Entry ``name`` as ``marshal`` wrote it, or None (no entry, or not one marshal reads:
    truncated, another format). Its shape is the caller's to check: any value may be there."""
    data = read(name)
    if data is None:
        return None
    try:
        return marshal.loads(data)
    except (EOFError, ValueError, TypeError):  # what marshal raises for bytes it cannot read
        return None


def write(name: str, data: bytes) -> None:
    """Store an entry atomically (a reader sees the whole file or none); failures are
    ignored: the cache only ever saves time."""
    where = cache_dir()
    if where is None or not _usable_dir(str(where)):
        return
    with contextlib.suppress(OSError):
        fd, tmp = tempfile.mkstemp(dir=where, prefix=".tmp-")  # 0600
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, where / name)
        except OSError:
            os.unlink(tmp)
