"""File tools with good and bad input: confinement, symlinks, caps, binary and devices."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest

from agentkit import Host, Sandbox
from agentkit._sandbox._paths import Root

from .conftest import write_tree


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = write_tree(tmp_path / "host", {
        "etc/app.conf": "a=1\nb=2\nc=3\n",
        "etc/sub/deep.txt": "deep\n",
        "opt/data.bin": "",
    })
    (r / "opt/data.bin").write_bytes(b"\x00\x01binary\x00")
    (tmp_path / "outside.txt").write_text("SECRET-OUTSIDE\n")
    (tmp_path / "host-evil").mkdir()
    (tmp_path / "host-evil" / "x.txt").write_text("SIBLING\n")
    return r


def call(root: Path, name: str, **args: object) -> object:
    box = Sandbox(Host.at(root), task_id="t")
    return anyio.run(box.call, name, dict(args))


def test_read_file_lines_and_evidence(root: Path) -> None:
    r = call(root, "read_file", path="/etc/app.conf", start=2, end=3)
    assert r.ok, r.error
    assert r.data["text"] == "2: b=2\n3: c=3"
    assert r.data["total_lines"] == 3
    [ev] = r.evidence
    assert ev.locator == "/etc/app.conf:2-3" and ev.id == r.data["evidence_id"]
    again = call(root, "read_file", path="/etc/app.conf", start=2, end=3)
    assert again.evidence[0].id == ev.id  # stable ids


@pytest.mark.parametrize("path", ["/../outside.txt", "../outside.txt", "/etc/../../outside.txt"])
def test_dotdot_refused(root: Path, path: str) -> None:
    r = call(root, "read_file", path=path)
    assert not r.ok and "above the root" in r.error


def test_absolute_path_stays_inside_root(root: Path, tmp_path: Path) -> None:
    r = call(root, "read_file", path=str(tmp_path / "outside.txt"))
    assert not r.ok and "no such file" in r.error
    assert "SECRET-OUTSIDE" not in r.error


def test_symlink_leading_out_is_refused(root: Path, tmp_path: Path) -> None:
    os.symlink("../../outside.txt", root / "etc/rel-out")
    os.symlink(str(tmp_path / "outside.txt"), root / "etc/abs-out")
    os.symlink(str(tmp_path), root / "etc/dir-out")
    for p in ("/etc/rel-out", "/etc/abs-out", "/etc/dir-out/outside.txt"):
        r = call(root, "read_file", path=p)
        assert not r.ok, p
        assert "SECRET-OUTSIDE" not in str(r.data)


def test_symlink_inside_root_is_followed(root: Path) -> None:
    os.symlink("/etc/app.conf", root / "etc/alias.conf")
    r = call(root, "read_file", path="/etc/alias.conf")
    assert r.ok and r.data["path"] == "/etc/app.conf"


def test_sibling_prefix_root_not_allowed(root: Path, tmp_path: Path) -> None:
    box = Sandbox(Host(root=Root(str(tmp_path), allow=("/host",))), task_id="t")
    ok = anyio.run(box.call, "read_file", {"path": "/host/etc/app.conf"})
    evil = anyio.run(box.call, "read_file", {"path": "/host-evil/x.txt"})
    assert ok.ok
    assert not evil.ok and "outside the allowed paths" in evil.error


def test_binary_file_refused(root: Path) -> None:
    r = call(root, "read_file", path="/opt/data.bin")
    assert not r.ok and "binary" in r.error


def test_fifo_and_proc_refused(root: Path) -> None:
    os.mkfifo(root / "etc/fifo")
    r = call(root, "read_file", path="/etc/fifo")
    assert not r.ok and "not a regular file" in r.error
    r = call(root, "read_file", path="/proc/self/environ")
    assert not r.ok and "never reads" in r.error


def test_huge_file_capped(root: Path) -> None:
    (root / "etc/big.log").write_text("x" * 100 + "\n" * 5000)
    box = Sandbox(Host.at(root, read_limit=1000), task_id="t")
    r = anyio.run(box.call, "read_file", {"path": "/etc/big.log"})
    assert r.ok and r.data["truncated"] and "truncated" in r.data["text"]


def test_list_glob_grep(root: Path) -> None:
    listing = call(root, "list_dir", path="/etc")
    assert {"name": "sub", "type": "dir"} in listing.data["entries"]
    g = call(root, "glob", pattern="/etc/**/*.txt")
    assert g.data["paths"] == ["/etc/sub/deep.txt"]
    hits = call(root, "grep", pattern="^b=", path="/etc")
    assert [(m["path"], m["line"]) for m in hits.data["matches"]] == [("/etc/app.conf", 2)]
    assert hits.evidence[0].locator == "/etc/app.conf:2"


def test_bad_arguments_never_reach_the_tool(root: Path) -> None:
    r = call(root, "read_file", path="/etc/app.conf", start=0)
    assert not r.ok and "invalid arguments" in r.error
    r = call(root, "read_file", nope=1)
    assert not r.ok and "path" in r.error
    r = call(root, "grep", pattern="(", path="/etc")
    assert not r.ok and "invalid regular expression" in r.error


def test_unknown_tool(root: Path) -> None:
    r = call(root, "write_file", path="/x")
    assert not r.ok and "not available" in r.error
