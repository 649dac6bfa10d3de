"""Fuzzing the path resolver (issue 12, item 6): whatever the path, and through a tree of
links in and out of the root, `normalize` gives a clean absolute path or refuses, and
`open_in_root`/`list_entries`/`read_bytes` open something inside the root or raise
PathRefused; nothing else, and never the file beside the root."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentkit._sandbox._paths import (
    PathRefused,
    Root,
    list_entries,
    normalize,
    open_in_root,
    read_bytes,
)

from .fuzzing import FUZZ

SECRET = b"outside the root"
# link name -> target: in the root, out of it by '..' and absolutely, loops, dangling
LINKS = {"etc/up": "../..", "etc/out": "../../outside", "etc/abs": "/etc", "etc/self": ".",
         "etc/loop": "loop", "etc/ping": "pong", "etc/pong": "ping", "etc/gone": "nowhere",
         "etc/dotdot": "../../../../../../..", "etc/secret": "/../outside/secret",
         "etc/rel": "sub/../../etc/a.conf", "etc/proc": "/proc/self/environ",
         "etc/creds": "/root/.netrc", "etc/fifo_link": "fifo"}
PARTS = ["", ".", "..", "etc", "sub", "a.conf", "fifo", "root", ".netrc", "proc", "self",
         "outside", "secret", *(n.split("/")[1] for n in LINKS), "x" * 300, "é", "\udcff",
         "\ud800", "\0", "*", "~"]


@pytest.fixture(scope="module")
def root() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as d:
        top = Path(d)
        (top / "outside").mkdir()
        (top / "outside" / "secret").write_bytes(SECRET)
        r = top / "root"
        (r / "etc" / "sub").mkdir(parents=True)
        (r / "root").mkdir()
        (r / "etc" / "a.conf").write_text("A=1\n")
        (r / "root" / ".netrc").write_text("machine x password y\n")
        os.mkfifo(r / "etc" / "fifo")
        for name, target in LINKS.items():
            os.symlink(target, r / name)
        yield r


PATHS = st.lists(st.sampled_from(PARTS) | st.text(max_size=4), max_size=8).map("/".join) | \
    st.text(max_size=30)


@FUZZ
@given(PATHS)
def test_fuzz_normalize(path: str) -> None:
    try:
        got = normalize(path)
    except PathRefused:
        return
    assert got.startswith("/") and "//" not in got and got == normalize(got)
    assert not {".", ".."} & set(got.split("/"))


@FUZZ
@given(PATHS, st.sampled_from(["file", "dir", "list", "read"]))
def test_fuzz_resolve_stays_in_the_root(root: Path, path: str, how: str) -> None:
    r = Root(str(root))
    real = os.path.realpath(root)
    try:
        if how == "list":
            list_entries(r, path)
            return
        if how == "read":
            data, _, host = read_bytes(r, path, 1 << 16)
            assert data != SECRET and host == normalize(host)
            return
        opened = open_in_root(r, path, directory=how == "dir")
    except PathRefused:
        return
    try:
        where = os.readlink(f"/proc/self/fd/{opened.fd}")
        assert where == real or where.startswith(real + "/"), (path, where)
        assert opened.host_path == normalize(opened.host_path)
    finally:
        os.close(opened.fd)


def test_a_last_name_too_long_is_refused(root: Path) -> None:
    # found by the fuzzer: ENAMETOOLONG on the last component escaped as OSError
    with pytest.raises(PathRefused, match="File name too long"):
        open_in_root(Root(str(root)), "/etc/" + "x" * 300)
