"""Path confinement, rule by rule, on a tree made for the test: links resolved inside the root
the way the kernel would (component by component, links first), what is refused and why."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentkit._sandbox._paths import (
    PathRefused,
    Root,
    check_policy,
    list_entries,
    normalize,
    open_in_root,
    opened,
    read_bytes,
)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "etc/app").mkdir(parents=True)
    (tmp_path / "etc/app/a.conf").write_text("A=1\n")
    (tmp_path / "etc/shadow").write_text("root:x\n")
    (tmp_path / "opt/v/lib").mkdir(parents=True)
    (tmp_path / "opt/v/lib/f.py").write_text("x = 1\n" * 10)
    os.symlink("app/a.conf", tmp_path / "etc/rel")            # relative, in the same dir
    os.symlink("/etc/app/a.conf", tmp_path / "etc/abs")       # absolute: taken from the root
    os.symlink("/opt/v", tmp_path / "current")                # a link to a directory
    os.symlink("../../..", tmp_path / "etc/app/up")           # climbs past the root
    os.symlink("loop2", tmp_path / "loop1")
    os.symlink("loop1", tmp_path / "loop2")
    os.symlink("/etc/shadow", tmp_path / "etc/nice")          # a denied file behind a name
    os.symlink("./app/a.conf", tmp_path / "etc/dot")          # a "." in a link's target
    os.symlink("app/..", tmp_path / "etc/updir")              # a ".." inside a link's target
    os.mkfifo(tmp_path / "etc/fifo")
    return tmp_path


def refused(root: Root, path: str, **kw: bool) -> str:
    with pytest.raises(PathRefused) as exc:
        with opened(root, path, **kw):
            pass
    return str(exc.value)


@pytest.mark.parametrize("path,norm", [
    ("/etc/./app//a.conf", "/etc/app/a.conf"), ("etc/app", "/etc/app"), ("/", "/"),
    ("/a/b/../c", "/a/c"), ("/a/..", "/"),
])
def test_normalize(path: str, norm: str) -> None:
    assert normalize(path) == norm


@pytest.mark.parametrize("path,words", [
    ("", "empty path"), ("/a\0b", "path contains a NUL byte"),
    ("/..", "'/..' climbs above the root with '..'"), ("/\udcff\ud800", "not valid UTF-8"),
])
def test_normalize_refuses(path: str, words: str) -> None:
    with pytest.raises(PathRefused, match=words):
        normalize(path)


def test_policy() -> None:
    r = Root("/x")
    for path, words in (("/proc", "under /proc"), ("/proc/1/environ", "under /proc"),
                        ("/sys/x", "under /sys"), ("/dev/null", "under /dev"),
                        ("/etc/shadow", "credential file"), ("/home/u/.ssh/id", "credential"),
                        ("/a/b.pem", "credential")):
        with pytest.raises(PathRefused, match=words):
            check_policy(r, path)
    check_policy(r, "/procfs/x")  # a prefix is a whole component
    with pytest.raises(PathRefused):
        check_policy(Root("/x", allow=("/X",)), "/etc")
    assert normalize("/a\udcff") == "/a\udcff"  # a byte that is not UTF-8, escaped: kept
    check_policy(r, "/developer")
    narrow = Root("/x", allow=("/etc", "/root"))
    check_policy(narrow, "/etc/a")
    check_policy(narrow, "/root")
    with pytest.raises(PathRefused, match=r"/root-evil is outside the allowed paths \['/etc', "
                                          r"'/root'\]"):
        check_policy(narrow, "/root-evil")


def test_links_resolve_inside_the_root(tree: Path) -> None:
    root = Root(str(tree))
    for path in ("/etc/rel", "/etc/abs", "/etc/app/a.conf", "/etc/dot"):
        with opened(root, path) as o:
            assert o.host_path == "/etc/app/a.conf", path
    with opened(root, "/current/lib/f.py") as o:
        assert o.host_path == "/opt/v/lib/f.py"
    with opened(root, "/etc/updir/app/a.conf") as o:  # a link to ".." in the middle of a path
        assert o.host_path == "/etc/app/a.conf"
    with opened(root, "/current", directory=True) as o:
        assert o.host_path == "/opt/v"
    with opened(root, "/", directory=True) as o:
        assert o.host_path == "/"


def test_what_is_refused_and_why(tree: Path) -> None:
    root = Root(str(tree))
    assert refused(root, "/etc/app/up/x") == "'/etc/app/up/x' leads above the root"
    assert refused(root, "/loop1") == "too many symlinks resolving '/loop1'"
    assert refused(root, "/loop1/x") == "too many symlinks resolving '/loop1/x'"
    assert refused(root, "/etc/nice") == ("/etc/shadow is a credential file; the sandbox never "
                                          "reads it")
    assert refused(root, "/etc/none") == "/etc/none: no such file or directory"
    assert refused(root, "/etc/none/x") == "/etc/none/x: no such file or directory"
    assert refused(root, "/etc/app/a.conf/x") == ("/etc/app/a.conf/x: a component is not a "
                                                  "directory")
    assert refused(root, "/etc/fifo") == ("/etc/fifo is not a regular file; the sandbox reads "
                                          "only those")
    assert refused(root, "/etc/app") == ("/etc/app is not a regular file; the sandbox reads only "
                                         "those")
    assert refused(root, "/etc/app/a.conf", directory=True).startswith("/etc/app/a.conf: ")


def test_the_allowed_subtrees_apply_to_the_resolved_path(tree: Path) -> None:
    only_etc = Root(str(tree), allow=("/etc",))
    with opened(only_etc, "/etc/abs") as o:
        assert o.host_path == "/etc/app/a.conf"
    msg = refused(only_etc, "/current/lib/f.py")
    assert "outside the allowed paths ['/etc']" in msg
    with pytest.raises(PathRefused, match="outside the allowed paths"):
        open_in_root(Root(str(tree), allow=("/opt",)), "/", directory=True)


def test_list_entries_kinds_in_order(tree: Path) -> None:
    root = Root(str(tree))
    assert list_entries(root, "/etc") == [("abs", "link"), ("app", "dir"), ("dot", "link"),
                                         ("fifo", "other"), ("nice", "link"), ("rel", "link"),
                                         ("shadow", "file"), ("updir", "link")]
    assert list_entries(root, "/current") == [("lib", "dir")]


def test_read_bytes_limit_size_and_recorder(tree: Path) -> None:
    seen: list[str] = []
    root = Root(str(tree), recorder=seen.append)
    data, size, path = read_bytes(root, "/current/lib/f.py", 7)
    assert (data, size, path) == (b"x = 1\nx", 60, "/opt/v/lib/f.py")
    assert seen == ["/opt/v/lib/f.py"]
    data, size, _ = read_bytes(root, "/etc/rel", 1 << 30)
    assert (data, size) == (b"A=1\n", 4)
    assert read_bytes(root, "/etc/rel", 0)[0] == b""
    assert not Root(str(tree)).is_live and Root("/").is_live


def test_normalize_messages_in_full() -> None:
    for path, msg in (("", "empty path"), ("/a\0b", "path contains a NUL byte"),
                      ("/\ud800", "path is not valid UTF-8"),
                      ("/a/../..", "'/a/../..' climbs above the root with '..'")):
        with pytest.raises(PathRefused) as exc:
            normalize(path)
        assert str(exc.value) == msg


@pytest.mark.parametrize("n,ok", [(40, True), (41, False)])
def test_a_chain_of_links_to_a_file(tmp_path: Path, n: int, ok: bool) -> None:
    (tmp_path / "f").write_text("x")
    for i in range(n):
        os.symlink(f"l{i + 1}" if i + 1 < n else "f", tmp_path / f"l{i}")
    root = Root(str(tmp_path))
    if ok:
        assert read_bytes(root, "/l0", 10) == (b"x", 1, "/f")
    else:
        assert refused(root, "/l0") == "too many symlinks resolving '/l0'"


@pytest.mark.parametrize("n,ok", [(40, True), (41, False)])
def test_a_chain_of_directory_links(tmp_path: Path, n: int, ok: bool) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "real/f").write_text("y")
    for i in range(n):
        os.symlink(f"/d{i + 1}" if i + 1 < n else "/real", tmp_path / f"d{i}")
    root = Root(str(tmp_path))
    if ok:
        assert read_bytes(root, "/d0/f", 10) == (b"y", 1, "/real/f")
    else:
        assert refused(root, "/d0/f") == "too many symlinks resolving '/d0/f'"


def test_opening_a_file_as_a_directory_and_big_reads(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"z" * ((3 << 20) + 5))
    root = Root(str(tmp_path))
    assert refused(root, "/f", directory=True) == "/f: Not a directory"
    data, size, _ = read_bytes(root, "/f", (3 << 20) + 5)
    assert len(data) == size == (3 << 20) + 5
    data, _, _ = read_bytes(root, "/f", (1 << 20) + 1)
    assert len(data) == (1 << 20) + 1


def test_links_in_the_middle_of_a_path(tree: Path) -> None:
    os.symlink("/opt/v", tree / "etc/app/optlink")   # absolute, two directories deep
    os.symlink("..", tree / "etc/up1")               # ".." taken at the first level
    os.symlink("./app", tree / "etc/dotdir")         # "." in a directory link's target
    root = Root(str(tree))
    for path, want in (("/etc/app/optlink/lib/f.py", "/opt/v/lib/f.py"),
                       ("/etc/up1/opt/v/lib/f.py", "/opt/v/lib/f.py"),
                       ("/etc/dotdir/a.conf", "/etc/app/a.conf")):
        with opened(root, path) as o:
            assert o.host_path == want, path


def test_no_descriptor_is_left_open(tree: Path) -> None:
    def count() -> int:
        return len(os.listdir("/proc/self/fd"))

    root = Root(str(tree))
    before = count()
    for _ in range(20):
        for path in ("/current/lib/f.py", "/etc/abs", "/etc/rel"):
            read_bytes(root, path, 10)
        for path in ("/etc/app/up/x", "/loop1/x", "/etc/none/x"):
            with pytest.raises(PathRefused):
                read_bytes(root, path, 10)
        list_entries(root, "/current/lib")
    assert count() == before


def test_the_denied_globs_as_one_pattern_refuse_what_each_glob_refuses() -> None:
    # paths made from each glob (its stars filled in, and near misses beside them) are
    # refused exactly when fnmatchcase matches some glob: the combined pattern neither
    # loses a credential file nor refuses a neighbour
    from fnmatch import fnmatchcase

    from agentkit._sandbox._paths import _DENIED, _DENIED_GLOBS

    paths = {"/etc/nccl.conf", "/home/u/.ssh", "/home/u/.sshx/a", "/etc/shadowx",
             "/x/tokens", "/a.pem.txt", "/run/secrets", "/etc/ssh/ssh_config"}
    for g in _DENIED_GLOBS:
        for fill in ("x", "a/b", "", ".bak"):
            p = g.replace("*", fill)
            paths |= {p, p + "x", p[:-1], "/pre" + p if p.startswith("/") else "/" + p}
    refused = {p for p in paths if any(fnmatchcase(p, g) for g in _DENIED_GLOBS)}
    assert {p for p in paths if _DENIED.match(p)} == refused
    assert "/home/u/.ssh/id_rsa" in refused or fnmatchcase("/home/u/.ssh/id_rsa", "*/.ssh/*")
    assert len(refused) > len(_DENIED_GLOBS) and len(paths) - len(refused) > 20
