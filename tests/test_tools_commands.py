"""run_command with real processes: allowlist, argument rules, deadlines, caps, environment,
and captured outputs on a snapshot root."""

from __future__ import annotations

import os
import time
from pathlib import Path

import anyio
import pytest

from agentkit import Host, Sandbox
from agentkit._sandbox._paths import Root

from .conftest import EXAMPLES


@pytest.fixture
def live(tmp_path: Path) -> Host:
    (tmp_path / "a.txt").write_text("alpha\nbeta\ngamma\n")
    return Host(root=Root("/", allow=(str(tmp_path),)), command_timeout_s=2.0)


def run(host: Host, argv: list[str], **kw: object) -> object:
    box = Sandbox(host, task_id="t")
    return anyio.run(box.call, "run_command", {"argv": argv, **kw})


def test_allowed_command_runs(live: Host, tmp_path: Path) -> None:
    r = run(live, ["head", "-n", "2", str(tmp_path / "a.txt")])
    assert r.ok, r.error
    assert r.data["stdout"] == "alpha\nbeta\n" and r.data["exit_code"] == 0
    assert r.evidence[0].locator.startswith("$ head -n 2 ")


def test_nonzero_exit_is_data_not_error(live: Host, tmp_path: Path) -> None:
    r = run(live, ["grep", "nomatch", str(tmp_path / "a.txt")])
    assert r.ok and r.data["exit_code"] == 1


@pytest.mark.parametrize("argv,why", [
    (["rm", "-rf", "/"], "not on the allowlist"),
    (["bash", "-c", "id"], "not on the allowlist"),
    (["find", "/tmp", "-delete"], "-delete"),
    (["find", "/tmp", "-exec", "rm", "{}", ";"], "-exec"),
    (["sed", "-i", "s/a/b/", "/tmp/x"], "-i"),
    (["sed", "-n", "1w /tmp/pwn", "/tmp/x"], "not allowed"),
    (["sort", "-o", "/tmp/pwn", "/tmp/x"], "-o"),
    (["tail", "-f", "/tmp/x"], "-f"),
    (["/usr/bin/cat", "/etc/hostname"], "by name"),
    (["git", "-c", "core.pager=sh", "log"], "subcommands"),
    (["nvidia-smi", "-r"], "not allowed"),
    (["journalctl", "--vacuum-size=1"], "not allowed"),
    (["systemctl", "restart", "x.service"], "needs one of"),
    (["hostname", "evil"], "at most 0"),
    (["env", "rm", "-rf", "/"], "not allowed"),
    (["env", "rm"], "at most 0"),
])
def test_forbidden_commands_refused(live: Host, argv: list[str], why: str) -> None:
    r = run(live, argv)
    assert not r.ok
    assert "refused" in r.error and why in r.error


def test_path_operands_policed(live: Host) -> None:
    r = run(live, ["cat", "/proc/self/environ"])
    assert not r.ok and "never reads" in r.error
    r = run(live, ["cat", "/etc/passwd"])  # outside the allowed subtree
    assert not r.ok and "outside the allowed paths" in r.error


def test_hung_command_killed_at_deadline(live: Host, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # A FIFO made wc hang here once; it is now refused before any program opens it (issue
    # 28), so the hang is a program that sleeps, run through run_command's own path.
    from agentkit._sandbox import _commands

    real = _commands._run
    monkeypatch.setattr(_commands, "_run", lambda argv, *rest: real(
        ["/bin/sleep", "30"], *rest))
    (tmp_path / "f").write_text("x\n")
    t0 = time.monotonic()
    r = run(live, ["wc", "-l", str(tmp_path / "f")], timeout_s=0.5)
    assert not r.ok and "did not finish within 0.5s" in r.error
    assert time.monotonic() - t0 < 5


def test_huge_output_capped(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("line\n" * 100_000)
    host = Host(root=Root("/", allow=(str(tmp_path),)), output_limit=1000)
    r = run(host, ["cat", str(tmp_path / "big.txt")])
    assert r.ok and r.data["truncated"]
    assert r.data["stdout"].endswith("[… output truncated at 1000 bytes]")


def test_environment_scrubbed(live: Host, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-should-not-leak-123")
    r = run(live, ["env"])
    assert r.ok and "tok-should-not-leak" not in r.data["stdout"]
    assert "PATH=/usr/bin:/bin" in r.data["stdout"]


def test_planted_binary_in_cwd_never_runs(live: Host, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    marker = tmp_path / "pwned"
    fake = tmp_path / "uname"
    fake.write_text(f"#!/bin/sh\ntouch {marker}\n")
    fake.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    r = run(live, ["uname", "-s"])
    assert r.ok and r.data["stdout"].strip() == "Linux"
    assert not marker.exists()


def test_snapshot_serves_captured_output() -> None:
    host = Host.at(EXAMPLES / "blackwell-kimi")
    r = run(host, ["nvidia-smi", "topo", "-m"])
    assert r.ok and "NODE" in r.data["stdout"] and r.data["captured"]
    missing = run(host, ["nvidia-smi", "-L"])
    assert not missing.ok and "not captured" in missing.error and "topo -m" in missing.error


def test_commands_cannot_write_files(live: Host, tmp_path: Path) -> None:
    # Even if an argument rule let a write through, RLIMIT_FSIZE=0 stops the bytes.
    from agentkit._sandbox._commands import _run

    target = tmp_path / "out.txt"
    _, _, code, _, _ = _run(["/usr/bin/sort", "-o", str(target), str(tmp_path / "a.txt")],
                                {"PATH": "/usr/bin"}, 5.0, 10_000, "/")
    assert code != 0
    assert not target.exists() or target.stat().st_size == 0


def test_file_readers_run_on_a_snapshot_s_own_files(tmp_path: Path) -> None:
    import shutil

    root = tmp_path / "snap"
    shutil.copytree(EXAMPLES / "blackwell-kimi", root)
    (tmp_path / "outside.txt").write_text("CANARY-OUTSIDE\n")
    os.symlink("/etc/nccl.conf", root / "etc/alias.conf")  # absolute: resolved in the root
    os.symlink(str(tmp_path / "outside.txt"), root / "etc/out.conf")
    host = Host.at(root)
    r = run(host, ["grep", "-c", "NCCL", "/etc/systemd/system/vllm-kimi.service",
                   "/etc/alias.conf"])
    assert r.ok, r.error
    assert r.data["stdout"] == ("/etc/systemd/system/vllm-kimi.service:3\n"
                                "/etc/alias.conf:2\n")  # host paths, not the snapshot's
    assert str(root) not in str(r.data)
    for argv in (["cat", "/etc/out.conf"], ["head", "/../outside.txt"], ["cat", "/etc"],
                 ["wc", "-l", "/etc/shadow"]):
        bad = run(host, argv)
        assert not bad.ok and "CANARY" not in str(bad.data) + bad.error, argv
    assert not run(host, ["uname", "-a"]).ok  # not a file reader, not captured: refused
