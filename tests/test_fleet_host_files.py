"""A fleet's host list given as a file (``--hosts @FILE``, one name or range a line) that is
missing, a directory, unreadable or not UTF-8 text: the real CLI process says in one line what
was wrong with which file and what to do, and exits 2 (a usage error, as every other bad
inventory does), with no traceback. ``--fleet`` takes a directory of snapshots, never a host
list: ``--fleet @FILE`` says to use ``--hosts @FILE``.

Expected from the OS's own errors (open(2): ENOENT, EISDIR, EACCES) and UTF-8 decoding, written
before running: nothing here depends on what agentkit printed before."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from .conftest import REPO


def _ask(*args: str, user: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([*(user or []), sys.executable, "-m", "agentkit", "ask",
                           "Which driver?", *args, "-q", "--catalog"], capture_output=True,
                          text=True, timeout=120, cwd=REPO, env=env)


def _one_line_error(done: subprocess.CompletedProcess[str], *words: str) -> str:
    err = done.stderr.strip()
    assert done.returncode == 2, (done.returncode, err)
    assert "Traceback" not in err, err
    assert len(err.splitlines()) == 1, err
    for w in words:
        assert w.lower() in err.lower(), (w, err)
    return err


@pytest.mark.parametrize(("kind", "words"), [
    ("missing", ["does not exist"]),
    ("directory", ["is a directory"]),
    ("latin1", ["not UTF-8", "line 2"]),
    ("binary", ["not UTF-8"]),
])
def test_a_bad_host_file_is_one_line_saying_what_and_what_to_do(
        tmp_path: Path, kind: str, words: list[str]) -> None:
    path = tmp_path / "hosts.txt"
    if kind == "directory":
        path.mkdir()
    elif kind == "latin1":
        path.write_bytes("gpu01\ngpu0\xe9\n".encode("latin-1"))
    elif kind == "binary":
        path.write_bytes(b"\x00\xff\xfe\x80" * 64)
    err = _one_line_error(_ask("--hosts", f"@{path}"), str(path), *words)
    # what to do: the file's form is said
    assert "one name or range a line" in err, err


def test_an_unreadable_host_file_says_permission(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "hosts.txt"
    user: list[str] = []
    if os.geteuid() == 0:  # root reads any file: run the CLI as nobody, who cannot
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root and setpriv is not installed: no user to deny")
        user = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"]
        # pytest's own tmp directories are root's alone: one nobody can enter, with the
        # (empty) config and a trace directory it may use
        shared = Path(tempfile.mkdtemp(dir="/tmp"))
        shared.chmod(0o755)
        (shared / "config.toml").write_text("")
        (shared / "traces").mkdir(mode=0o777)
        (shared / "traces").chmod(0o777)
        monkeypatch.setenv("AGENTKIT_CONFIG", str(shared / "config.toml"))
        monkeypatch.setenv("AGENTKIT_TRACE_DIR", str(shared / "traces"))
        path = shared / "hosts.txt"
    path.write_text("gpu01\n")
    path.chmod(0)
    try:
        err = _one_line_error(_ask("--hosts", f"@{path}", user=user), str(path),
                              "permission denied")
        assert "one name or range a line" in err, err
    finally:
        if user:
            shutil.rmtree(path.parent)


def test_fleet_with_an_at_file_points_to_hosts(tmp_path: Path) -> None:
    path = tmp_path / "hosts.txt"
    path.write_text("gpu01\n")
    _one_line_error(_ask("--fleet", f"@{path}"), "--hosts")


def test_the_good_file_still_names_its_hosts(tmp_path: Path) -> None:
    from agentkit._fleet._inventory import hosts_from

    path = tmp_path / "hosts.txt"
    path.write_text("# rack 1\ngpu[01-02]  # two\n\ngpu02\n", encoding="utf-8")
    assert hosts_from(f"@{path}") == ["gpu01", "gpu02"]


def test_a_missing_ssh_config_is_named_as_one_not_as_a_host_list(tmp_path: Path) -> None:
    # `--hosts ssh-config` reads the concrete Host entries of an ssh_config(5) file
    err = _one_line_error(_ask("--hosts", "ssh-config", "--ssh-config",
                               str(tmp_path / "nope")), str(tmp_path / "nope"), "ssh config")
    assert "one name or range a line" not in err and "host list" not in err, err
