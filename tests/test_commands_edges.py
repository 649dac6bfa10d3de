"""run_command's edges, each through the real tool: the limits a child runs under, which
binary is trusted, git's repository vetting, captured outputs on a snapshot (journal cut at
the old end, stderr, exit codes, the capture time in the citation), operands that are links,
and the process lifecycle (exit codes, a leader that lingers, stderr caps).

Expected values come from the kernel's and git's documented behaviour, not from agentkit's
output: /proc/self/limits prints the limits a process runs under; git refuses nothing here,
the vetting does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from agentkit import Host, Sandbox
from agentkit._sandbox import _spawn
from agentkit._sandbox._commands import trusted_binary
from agentkit._sandbox._paths import Root
from agentkit._sandbox._spawn import _run
from agentkit._sandbox._tool import ToolError


def call(host: Host, argv: list[str], **kw: object) -> Any:
    box = Sandbox(host, task_id="t")
    return anyio.run(box.call, "run_command", {"argv": argv, **kw})


def limits(stdout: str) -> dict[str, tuple[str, str]]:
    """/proc/self/limits as {name: (soft, hard)}."""
    out = {}
    for line in stdout.splitlines()[1:]:
        name, soft, hard = line[:26].strip(), *line[26:].split()[:2]
        out[name] = (soft, hard)
    return out


# --- the limits the child runs under ---------------------------------------------------------

@pytest.mark.parametrize("through", ["prlimit", "preexec"])
def test_child_runs_under_every_limit(through: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if through == "preexec":  # a host without util-linux's prlimit
        monkeypatch.setattr(_spawn, "_PRLIMIT", "/nonexistent/prlimit")
    out, _, code, timed_out, _ = _run(["/bin/cat", "/proc/self/limits"], {"PATH": "/usr/bin"},
                                      7.0, 100_000, "/")
    assert code == 0 and not timed_out
    got = limits(out)
    assert got["Max file size"] == ("0", "0")
    assert got["Max core file size"] == ("0", "0")
    assert got["Max cpu time"] == ("9", "9")  # the deadline (7 s) plus 2
    assert got["Max address space"] == (str(4 << 30), str(4 << 30))


def test_the_fallback_sets_each_limit_soft_and_hard(monkeypatch: pytest.MonkeyPatch) -> None:
    # The fallback runs between fork and exec, where no test can watch it: record what it asks
    # the kernel for (the real effect is checked through /proc/self/limits above).
    import resource

    asked: list[tuple[int, tuple[int, int]]] = []
    monkeypatch.setattr(resource, "setrlimit", lambda which, pair: asked.append((which, pair)))
    _spawn._limits(11)
    assert sorted(asked) == sorted([(resource.RLIMIT_FSIZE, (0, 0)),
                                    (resource.RLIMIT_CORE, (0, 0)),
                                    (resource.RLIMIT_CPU, (11, 11)),
                                    (resource.RLIMIT_AS, (4 << 30, 4 << 30))])


def test_without_prlimit_the_argv_is_the_program_s_own() -> None:
    argv, preexec = _spawn._limited(["/bin/true"], 3)
    if os.access("/usr/bin/prlimit", os.X_OK):
        assert argv[0] == "/usr/bin/prlimit" and argv[-2:] == ["--", "/bin/true"]
        assert preexec is None
    saved = _spawn._PRLIMIT
    try:
        _spawn._PRLIMIT = "/nonexistent/prlimit"
        argv, preexec = _spawn._limited(["/bin/true"], 3)
    finally:
        _spawn._PRLIMIT = saved
    assert argv == ["/bin/true"] and callable(preexec)


# --- which binary runs -----------------------------------------------------------------------

def _exe(path: Path, mode: int = 0o755) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(mode)
    return path


def test_trusted_binary_takes_the_first_directory_that_holds_a_runnable_file(
        tmp_path: Path) -> None:
    none, a, b, c = (tmp_path / x for x in ("none", "a", "b", "c"))
    (a / "tool").mkdir(parents=True)  # a directory of that name is not a program
    _exe(b / "tool", 0o646)  # not executable (and world-writable, but it is never run)
    _exe(c / "tool")
    dirs = (str(none), str(a), str(b), str(c))  # the first does not exist at all
    assert trusted_binary("tool", dirs) == str(c / "tool")
    (b / "tool").chmod(0o755)
    assert trusted_binary("tool", dirs) == str(b / "tool")


def test_trusted_binary_refuses_world_writable_and_names_the_missing(tmp_path: Path) -> None:
    d = tmp_path / "bin"
    exe = _exe(d / "tool")
    exe.chmod(0o757)
    with pytest.raises(ToolError, match=r"bin/tool is world-writable; refusing to run it"):
        trusted_binary("tool", (str(d),))
    with pytest.raises(ToolError) as err:
        trusted_binary("absent", (str(d), "/nonexistent"))
    assert str(err.value) == (f"absent is not installed in the trusted directories "
                              f"{[str(d), '/nonexistent']}")


# --- operands on a live host -----------------------------------------------------------------

def test_a_link_inside_the_allowed_paths_to_outside_is_refused(tmp_path: Path) -> None:
    (tmp_path / "in.txt").write_text("fine\n")
    os.symlink("/etc/passwd", tmp_path / "pw")
    host = Host(root=Root("/", allow=(str(tmp_path),)), command_timeout_s=5.0)
    bad = call(host, ["cat", str(tmp_path / "pw")])
    assert not bad.ok and bad.error.startswith("refused: ")
    assert "root:" not in str(bad.data)
    ok = call(host, ["cat", str(tmp_path / "in.txt")])
    assert ok.ok and ok.data["stdout"] == "fine\n"


def test_a_live_result_names_its_command_and_evidence(tmp_path: Path) -> None:
    (tmp_path / "in.txt").write_text("fine\n")
    host = Host(root=Root("/", allow=(str(tmp_path),)), command_timeout_s=5.0)
    argv = ["head", "-n", "1", str(tmp_path / "in.txt")]
    r = call(host, argv)
    assert r.data["argv"] == argv and r.data["captured"] is None
    assert r.data["evidence_id"] == r.evidence[0].id
    assert r.evidence[0].locator == f"$ {' '.join(argv)} [exit 0]"  # no capture time: live


def test_a_relative_operand_is_read_from_the_root(tmp_path: Path) -> None:
    (tmp_path / "in.txt").write_text("fine\n")
    host = Host(root=Root("/", allow=(str(tmp_path),)), command_timeout_s=5.0)
    r = call(host, ["cat", str(tmp_path / "in.txt").lstrip("/")])
    assert r.ok and r.data["stdout"] == "fine\n"
    r = call(host, ["cat", "etc/passwd"])  # relative, and outside the allowed paths
    assert not r.ok and "outside the allowed paths" in r.error


# --- git in a vetted repository --------------------------------------------------------------

def _repo(path: Path) -> Path:
    path.mkdir()
    env = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
    for argv in (["init", "-q", "-b", "main"], ["-c", "user.name=t", "-c", "user.email=t@t",
                                               "commit", "-q", "--allow-empty", "-m", "first"]):
        subprocess.run(["git", *argv], cwd=path, check=True, env=env)
    return path


@pytest.fixture
def repo_host(tmp_path: Path) -> tuple[Host, Path]:
    repo = _repo(tmp_path / "repo")
    return Host(root=Root("/", allow=(str(tmp_path),)), command_timeout_s=10.0), repo


def _real_git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
    return subprocess.run(["git", "-C", str(repo), *args], env=env, capture_output=True,
                          text=True, check=True).stdout


def test_git_runs_in_a_plain_repository(repo_host: tuple[Host, Path]) -> None:
    # git is never run (issue 28): its answers come from agentkit's reader, and where the
    # shape is git's own (--oneline, rev-parse) they are compared with real git's
    host, repo = repo_host
    r = call(host, ["git", "-C", str(repo), "log", "--oneline"])
    assert r.ok, r.error
    assert r.data["stdout"] == _real_git(repo, "log", "--oneline", "--abbrev=7")
    assert r.data["exit_code"] == 0
    r = call(host, ["git", "-C", str(repo), "rev-parse", "HEAD"])
    assert r.ok and r.data["stdout"] == _real_git(repo, "rev-parse", "HEAD")
    r = call(host, ["git", "-C", str(repo).lstrip("/"), "rev-parse", "--abbrev-ref", "HEAD"])
    assert r.ok and r.data["stdout"] == "main\n"
    assert not (repo / ".git" / "index.lock").exists()


def _relink(path: Path, target: str) -> None:
    path.unlink()
    os.symlink(target, path)


@pytest.mark.parametrize("plant,why", [
    (lambda g: os.symlink("/etc", g / "info2"), None),
    (lambda g: (g / "commondir").write_text("/elsewhere\n"), None),
    (lambda g: (g / "objects/info/alternates").write_text("/x/objects\n"), None),
    (lambda g: (g / "config").write_text("[core]\n\tfsmonitor = /tmp/x.sh\n"), None),
    (lambda g: (g / "config.worktree").write_text("[diff]\n\texternal = /tmp/x\n"), None),
    (lambda g: _relink(g / "config", "/etc/hostname"), "config: Too many levels"),
    (lambda g: os.mkfifo(g / "commondir"), None),
])
def test_git_never_follows_what_a_repository_points_to(repo_host: tuple[Host, Path],
                                                       plant: Any, why: str | None) -> None:
    # The reader copies only HEAD, refs, objects and the index (issue 28): what the rest of
    # .git names (another repository, a program, a file) is never read or run. A config
    # that is a link is refused (its object format cannot be told).
    host, repo = repo_host
    plant(repo / ".git")
    r = call(host, ["git", "-C", str(repo), "log", "--oneline"])
    if why is None:
        assert r.ok and r.data["stdout"].endswith(" first\n"), r.error
    else:
        assert not r.ok and r.error.startswith("refused: ") and why in r.error, r.error


def test_git_vets_a_config_that_is_not_utf8(repo_host: tuple[Host, Path]) -> None:
    host, repo = repo_host
    with (repo / ".git" / "config").open("ab") as f:
        f.write(b"[user]\n\tname = J\xf6rg\n")  # Latin-1, as old configs sometimes are
    r = call(host, ["git", "-C", str(repo), "log", "--oneline"])
    assert r.ok and r.data["stdout"].endswith(" first\n"), r.error


def test_git_refuses_a_directory_without_a_plain_git_dir(tmp_path: Path) -> None:
    (tmp_path / "notrepo").mkdir()
    host = Host(root=Root("/", allow=(str(tmp_path),)), command_timeout_s=10.0)
    r = call(host, ["git", "-C", str(tmp_path / "notrepo"), "log"])
    assert not r.ok
    assert r.error.startswith(f"refused: {tmp_path / 'notrepo'} is not a git repository with a "
                              "plain .git directory (")


def test_git_reads_past_a_config_of_any_size(tmp_path: Path) -> None:
    # the configuration is never vetted key by key any more: nothing in it is run
    repo = _repo(tmp_path / "repo")
    with (repo / ".git" / "config").open("a") as f:
        f.write("# padding\n" * 500)
    host = Host(root=Root("/", allow=(str(tmp_path),)), command_timeout_s=10.0,
                read_limit=1000)
    r = call(host, ["git", "-C", str(repo), "log"])
    assert r.ok and "first" in r.data["stdout"], r.error


# --- captured outputs on a snapshot ----------------------------------------------------------

def _snapshot(root: Path, commands: list[dict[str, Any]], captured_at: str = "") -> Host:
    cap = root / ".agentkit"
    (cap / "commands").mkdir(parents=True)
    entries = []
    for i, c in enumerate(commands):
        entry: dict[str, Any] = {"argv": c["argv"], "stdout": f"commands/{i}.out",
                                 "exit_code": c.get("exit_code", 0)}
        (cap / f"commands/{i}.out").write_text(c["stdout"])
        if "stderr" in c:
            (cap / f"commands/{i}.err").write_text(c["stderr"])
            entry["stderr"] = f"commands/{i}.err"
        entries.append(entry)
    (cap / "snapshot.json").write_text(json.dumps(
        {"format": "agentkit-snapshot", "version": 1, "captured_at": captured_at,
         "commands": entries}))
    return Host.at(root)


JOURNAL = ["journalctl", "-u", "x.service", "-n", "2000", "--no-pager"]


def test_a_long_journal_keeps_its_newest_lines_whole(tmp_path: Path) -> None:
    lines = [f"Nov 20 10:{i:02d}:00 h x[1]: line {i:03d}" for i in range(60)]
    text = "\n".join(lines) + "\n"
    _snapshot(tmp_path, [{"argv": JOURNAL, "stdout": text}], "2026-11-20T14:02:11Z")
    host = Host.at(tmp_path, output_limit=500)
    r = call(host, JOURNAL)
    assert r.ok and r.data["truncated"] is True
    shown = r.data["stdout"].split("\n[…")[0].splitlines()
    assert shown == lines[-len(shown):] and len(shown) >= 10  # whole lines, the newest
    assert len("\n".join(shown)) < 500 and r.data["stderr"] == ""
    assert r.data["stdout"].endswith("[… older lines cut: only the newest 500 bytes are shown]")
    assert r.evidence[0].locator == ("$ " + " ".join(JOURNAL) +
                                     " [exit 0] (captured 2026-11-20T14:02:11Z)")
    assert r.data["captured"] == "2026-11-20T14:02:11Z"


def test_a_short_journal_and_other_outputs_are_served_whole_or_cut_at_the_end(
        tmp_path: Path) -> None:
    long = "".join(f"row {i:03d}\n" for i in range(100))
    _snapshot(tmp_path, [{"argv": JOURNAL, "stdout": "one\ntwo\n"},
                         {"argv": ["uname", "-a"], "stdout": long, "exit_code": 3,
                          "stderr": "warn: " + "e" * 20_000}])
    host = Host.at(tmp_path, output_limit=100)
    j = call(host, JOURNAL)
    assert j.ok and j.data["stdout"] == "one\ntwo\n" and j.data["truncated"] is False
    u = call(host, ["uname", "-a"])
    assert u.ok and u.data["exit_code"] == 3 and u.data["truncated"] is True
    assert u.data["stdout"] == long[:100] + "\n[… output truncated at 100 bytes]"
    assert u.data["stderr"].startswith("warn: e") and len(u.data["stderr"]) == 16 * 1024
    assert u.data["captured"] == "snapshot"  # no capture time in the manifest
    assert u.evidence[0].locator == "$ uname -a [exit 3] (captured snapshot)"
    assert u.evidence[0].excerpt.startswith("row 000")


def test_outputs_exactly_at_the_limit_are_whole(tmp_path: Path) -> None:
    text = "0123456789" * 9 + "012345678\n"  # 100 bytes
    _snapshot(tmp_path, [{"argv": JOURNAL, "stdout": text},
                         {"argv": ["uname", "-a"], "stdout": text}])
    host = Host.at(tmp_path, output_limit=100)
    for argv in (JOURNAL, ["uname", "-a"]):
        r = call(host, argv)
        assert r.data["stdout"] == text and r.data["truncated"] is False, argv


def test_a_cut_journal_keeps_its_stderr_and_says_snapshot_without_a_time(tmp_path: Path
                                                                          ) -> None:
    _snapshot(tmp_path, [{"argv": JOURNAL, "stdout": "x\n" * 200,
                          "stderr": "Hint: You are currently not seeing messages from other "
                                    "users and the system.\n"}])
    r = call(Host.at(tmp_path, output_limit=100), JOURNAL)
    assert r.data["truncated"] and r.data["captured"] == "snapshot"
    assert r.data["stderr"].startswith("Hint: You are currently not seeing")
    assert r.evidence[0].locator.endswith("[exit 0] (captured snapshot)")


def test_a_file_reader_on_a_snapshot_reads_the_snapshot_s_file_not_the_host_s(
        tmp_path: Path) -> None:
    root = tmp_path / "snap"
    (root / "etc").mkdir(parents=True)
    (root / "etc/os-release").write_text("NAME=SnapshotOS\n")  # /etc/os-release exists here too
    (root / "Xtra.conf").write_text("NCCL_PROTO=LL\n")
    _snapshot(root, [])
    host = Host.at(root)
    r = call(host, ["cat", "etc/os-release"])  # relative: from the root
    assert r.ok and r.data["stdout"] == "NAME=SnapshotOS\n", r.error
    r = call(host, ["grep", "-H", "NCCL", "/Xtra.conf"])
    assert r.ok and r.data["stdout"] == "/Xtra.conf:NCCL_PROTO=LL\n", r.error
    bad = call(host, ["cat", "/etc/../../outside"])
    assert not bad.ok and bad.error.startswith("refused: ")


def test_what_a_snapshot_cannot_answer_is_said(tmp_path: Path) -> None:
    _snapshot(tmp_path, [{"argv": ["uname", "-r"], "stdout": "6.8\n"},
                         {"argv": ["nvidia-smi", "-L"], "stdout": "GPU 0\n"}])
    r = call(Host.at(tmp_path), ["uname", "-a"])
    assert not r.ok
    assert r.error == ("`uname -a` was not captured in this snapshot. Captured: uname -r; "
                       "nvidia-smi -L")
    empty = tmp_path / "empty"
    _snapshot(empty, [])
    r = call(Host.at(empty), ["uname", "-a"])
    assert not r.ok and r.error.endswith("Captured: none")
    plain = tmp_path / "plain"
    plain.mkdir()
    r = call(Host.at(plain), ["uname", "-a"])
    assert not r.ok and r.error == (
        f"`uname -a` cannot run: the root {plain} is not the live host and has no snapshot "
        "manifest (.agentkit/snapshot.json); read files instead")


def test_a_capture_file_that_is_missing_is_an_error_not_empty_output(tmp_path: Path) -> None:
    _snapshot(tmp_path, [{"argv": ["uname", "-r"], "stdout": "6.8\n", "stderr": "x"}])
    (tmp_path / ".agentkit/commands/0.err").unlink()
    r = call(Host.at(tmp_path), ["uname", "-r"])
    assert not r.ok and "0.err" in r.error


# --- the process itself ----------------------------------------------------------------------

def test_exit_code_and_both_streams_of_a_real_process() -> None:
    out, err, code, timed_out, truncated = _run(
        ["/bin/sh", "-c", "echo out; echo err >&2; exit 5"], {"PATH": "/usr/bin:/bin"}, 5.0,
        1000, "/")
    assert (out, err, code, timed_out, truncated) == ("out\n", "err\n", 5, False, False)


def test_stderr_is_capped_without_truncating_stdout() -> None:
    out, err, code, timed_out, truncated = _run(
        ["/bin/sh", "-c", "head -c 40000 /dev/zero | tr '\\0' e >&2; echo done"],
        {"PATH": "/usr/bin:/bin"}, 5.0, 1000, "/")
    assert out == "done\n" and len(err) == 16 * 1024 and set(err) == {"e"}
    assert code == 0 and not timed_out and not truncated


def test_stdout_over_the_cap_stops_the_process_and_says_truncated() -> None:
    out, _, _, timed_out, truncated = _run(["/bin/sh", "-c", "yes row"], {"PATH": "/usr/bin:/bin"},
                                           5.0, 1000, "/")
    assert truncated and not timed_out and out == "row\n" * 250


def test_output_of_exactly_the_cap_is_whole_and_bad_bytes_are_replaced() -> None:
    out, err, code, _, truncated = _run(
        ["/bin/sh", "-c", "head -c 1000 /dev/zero | tr '\\0' a; printf 'bad \\377\\n' >&2"],
        {"PATH": "/usr/bin:/bin"}, 5.0, 1000, "/")
    assert out == "a" * 1000 and not truncated and code == 0
    assert err == "bad \ufffd\n"  # not valid UTF-8: replaced, never an exception
    out, _, _, _, _ = _run(["/bin/sh", "-c", "printf 'x\\377y'"], {"PATH": "/usr/bin:/bin"},
                           5.0, 1000, "/")
    assert out == "x\ufffdy"


def test_a_leader_that_closes_its_output_but_lives_is_timed_out() -> None:
    out, _, code, timed_out, _ = _run(
        ["/bin/sh", "-c", "echo hi; exec >&- 2>&-; sleep 30"], {"PATH": "/usr/bin:/bin"}, 1.0,
        1000, "/")
    assert out == "hi\n" and timed_out and code == -9


def test_a_backgrounded_child_dies_with_the_group() -> None:
    out, _, _, _, _ = _run(["/bin/sh", "-c", "sleep 60 >/dev/null 2>&1 & echo $!"],
                           {"PATH": "/usr/bin:/bin"}, 5.0, 1000, "/")
    pid = int(out)
    for _ in range(100):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        with open(f"/proc/{pid}/stat") as f:
            if f.read().split()[2] == "Z":
                break
        anyio.run(anyio.sleep, 0.02)
    else:
        pytest.fail(f"background child {pid} outlived its process group")


def test_stdin_is_empty_and_no_descriptor_leaks(tmp_path: Path) -> None:
    # Put a pipe on our own stdin and an inheritable descriptor beside it: the child must
    # see neither (stdin is /dev/null, every other descriptor is closed).
    r_fd, w_fd = os.pipe()
    saved = os.dup(0)
    leak = os.open(str(tmp_path), os.O_RDONLY)
    os.set_inheritable(leak, True)
    try:
        os.dup2(r_fd, 0)
        out, _, code, _, _ = _run(["/bin/sh", "-c", "readlink /proc/self/fd/0; ls /proc/self/fd"],
                                  {"PATH": "/usr/bin:/bin"}, 5.0, 10_000, "/")
    finally:
        os.dup2(saved, 0)
        for fd in (saved, r_fd, w_fd, leak):
            os.close(fd)
    first, *fds = out.split()
    assert code == 0 and first == "/dev/null"
    assert leak > 3 and str(leak) not in fds, fds  # 0-2, and 3: the directory ls reads


def test_the_working_directory_is_the_given_one(tmp_path: Path) -> None:
    out, _, code, _, _ = _run(["/bin/pwd"], {"PATH": "/usr/bin:/bin"}, 5.0, 1000, str(tmp_path))
    assert code == 0 and out == f"{tmp_path}\n"


def test_a_link_then_dotdot_is_policed_where_the_kernel_goes(tmp_path: Path) -> None:
    # allowed/sub/certs -> outside/deep/certs: allowed/sub/certs/../../secret.txt is, for the
    # kernel (links first, then '..'), outside/secret.txt; the text alone says
    # allowed/secret.txt, which the policy allows.
    allowed, outside = tmp_path / "allowed", tmp_path / "outside"
    (outside / "deep/certs").mkdir(parents=True)
    (outside / "secret.txt").write_text("CANARY-SECRET\n")
    (allowed / "sub").mkdir(parents=True)
    (allowed / "ok.txt").write_text("fine\n")
    os.symlink(outside / "deep/certs", allowed / "sub/certs")
    host = Host(root=Root("/", allow=(str(allowed),)), command_timeout_s=5.0)
    bad = call(host, ["head", "-n", "1", f"{allowed}/sub/certs/../../secret.txt"])
    assert not bad.ok and bad.error.startswith("refused: ")
    assert "CANARY" not in json.dumps(bad.data)
    good = call(host, ["grep", "-H", "fine", f"{allowed}/ok.txt"])
    assert good.ok and good.data["stdout"] == f"{allowed}/ok.txt:fine\n"


def test_a_link_inside_the_allowed_paths_is_read_and_named_as_given(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "real/a.conf").write_text("NCCL_PROTO=LL\n")
    os.symlink(tmp_path / "real", tmp_path / "alias")
    host = Host(root=Root("/", allow=(str(tmp_path),)), command_timeout_s=5.0)
    r = call(host, ["grep", "-H", "NCCL", f"{tmp_path}/alias/a.conf"])
    assert r.ok and r.data["stdout"] == f"{tmp_path}/alias/a.conf:NCCL_PROTO=LL\n"
    r = call(host, ["grep", "-rc", "NCCL", str(tmp_path / "real")])
    assert r.ok and r.data["stdout"] == f"{tmp_path}/real/a.conf:1\n"


@pytest.mark.parametrize("argv,ok", [
    (["nvidia-smi", "-i", "0", "drain"], False),  # a state-changing subcommand out of place
    (["nvidia-smi", "-i", "0", "-pm", "1"], False),
    (["nvidia-smi", "-q", "-i", "0", "-d", "MEMORY"], True),
    (["nvidia-smi", "topo", "-p2p", "r"], True),
    (["git", "describe", "--dirty"], False),  # it leaves .git/index.lock behind
    (["git", "describe", "--broken=x"], False),
    (["git", "describe", "--tags"], False),  # not one of the reader's questions
])
def test_argument_rules_for_state_changing_words(argv: list[str], ok: bool) -> None:
    from agentkit._sandbox._programs import Refused, check

    if ok:
        check(argv)
    else:
        with pytest.raises(Refused):
            check(argv)


def test_shadow_backups_are_never_read(tmp_path: Path) -> None:
    from agentkit._sandbox._paths import PathRefused, check_policy

    for path in ("/etc/shadow-", "/etc/gshadow-", "/etc/security/opasswd"):
        with pytest.raises(PathRefused, match="credential"):
            check_policy(Root("/"), path)


def test_grep_r_skips_the_files_the_guard_refuses(tmp_path: Path) -> None:
    # grep -r run by the program itself read every file under the directory, credential
    # files included; the walk now goes through the path guard, as the grep tool's does.
    (tmp_path / "app/.docker").mkdir(parents=True)
    (tmp_path / "app/.docker/config.json").write_text('{"auths": {"x": "CANARY-AUTH"}}\n')
    (tmp_path / "app/server.key").write_text("CANARY-KEY\n")
    (tmp_path / "app/notes.txt").write_text("CANARY-PLAIN is fine to find\n")
    host = Host(root=Root("/", allow=(str(tmp_path),)), command_timeout_s=5.0)
    r = call(host, ["grep", "-rn", "CANARY", str(tmp_path / "app")])
    assert r.ok, r.error
    assert r.data["stdout"] == f"{tmp_path}/app/notes.txt:1:CANARY-PLAIN is fine to find\n"
    none = call(host, ["grep", "-r", "CANARY", str(tmp_path / "app/.docker")])
    assert none.ok and none.data["stdout"] == "" and none.data["exit_code"] == 1


@pytest.mark.parametrize("argv", [["ps", "-e", "-o", "pid,environ"], ["ps", "-eoenviron"],
                                  ["ps", "-o", "pid", "-o", "environ"],
                                  ["ps", "-e", "-o", "pid args"]])
def test_ps_never_prints_an_environment(argv: list[str]) -> None:
    # procps has an `environ` column: every process's environment, secrets included
    r = call(Host.at("/"), argv)
    if "environ" in " ".join(argv):
        assert not r.ok and "environ" in r.error
    else:
        assert r.ok and r.data["exit_code"] == 0


@pytest.mark.parametrize("planted", ["info/grafts", "objects/pack", "refs/tags/v9"])
def test_a_link_in_dot_git_is_never_followed(repo_host: tuple[Host, Path], tmp_path: Path,
                                             planted: str) -> None:
    # git follows a link below the top of .git (grafts, an objects directory) to any file and
    # prints what it read ("bad graft data: <content>"); the red team read files so
    host, repo = repo_host
    outside = tmp_path / "outside-secret"
    outside.write_text("CANARY-grafts\n")
    link = repo / ".git" / planted
    link.parent.mkdir(parents=True, exist_ok=True)
    if link.exists():
        subprocess.run(["rm", "-rf", str(link)], check=True)
    os.symlink(outside, link)
    r = call(host, ["git", "-C", str(repo), "log"])
    if planted == "info/grafts":  # never copied, so never read (issue 28)
        assert r.ok, r.error
    else:
        assert not r.ok and "symbolic link inside .git" in r.error and planted in r.error
    assert "CANARY" not in str(r.data) + r.error


@pytest.mark.parametrize("args", [["describe", "--dirt"], ["describe", "--broke"],
                                  ["log", "--outpu=/tmp/x"], ["log", "-GSECRET"],
                                  ["log", "-S", "SECRET"]])
def test_git_abbreviations_and_the_pickaxe_are_refused(repo_host: tuple[Host, Path],
                                                       args: list[str]) -> None:
    host, repo = repo_host
    r = call(host, ["git", "-C", str(repo), *args])
    assert not r.ok and "not allowed" in r.error


def test_git_show_of_a_dot_env_file_is_redacted_as_cat_redacts_it(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    value = "Zk2x9QpL7vR4tY8wN3mB"  # under a key name no rule knows: only the .env rule
    (repo / ".env").write_text(f"UPSTREAM={value}\n")
    env = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
    for argv in (["init", "-q", "-b", "main"], ["add", ".env"],
                 ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "env"]):
        subprocess.run(["git", *argv], cwd=repo, check=True, env=env, capture_output=True)
    host = Host(root=Root("/", allow=(str(tmp_path),)), command_timeout_s=10.0)
    cat = call(host, ["cat", str(repo / ".env")])
    assert cat.ok and value not in cat.data["stdout"]
    # named, or only in the diff's headers (red team round 1: log -p, show HEAD, -L)
    for args in (["show", "HEAD:.env"], ["log", "-p", "--", ".env"], ["log", "-p"],
                 ["show", "HEAD"]):
        r = call(host, ["git", "-C", str(repo), *args])
        assert r.ok and "UPSTREAM" in r.data["stdout"] and value not in r.data["stdout"], args
    assert not call(host, ["git", "-C", str(repo), "log", "-L1,1:.env"]).ok  # not offered


def test_tools_call_json_never_carries_a_raw_bidi_override_or_c1_control(tmp_path: Path) -> None:
    # JSON leaves U+202E (which reorders what a terminal shows) and C1 controls (0x9b is
    # CSI) raw; the CLI writes them as \u escapes, which decode to the same text
    f = tmp_path / "bidi.txt"
    f.write_text("safe\u202eeulav\x9b[2J\n")
    done = subprocess.run([sys.executable, "-m", "agentkit", "tools", "call", "read_file",
                           "--args", json.dumps({"path": str(f)})], capture_output=True,
                          text=True, check=True)
    assert "\u202e" not in done.stdout and "\x9b" not in done.stdout
    # the C1 control sequence is taken out when the file is decoded (issue 28: text is
    # normalised before redaction); the bidi override is text and stays, escaped
    assert "safe\u202eeulav" in json.loads(done.stdout)["data"]["text"]
