"""Adversarial sandbox tests, part A: every escape attempt fails closed.

The attempts are data (attempts.py); each runs against a shared arena and is judged by
canary text in its result, marker files and changes to the arena. Process-level defences
(deadline, group kill, rlimits, PATH) and the symlink race are tested below them.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import anyio
import pytest

from agentkit import Host, Sandbox
from agentkit._sandbox._commands import _BASE_ENV, _run
from agentkit._sandbox._kernel import Setting
from agentkit._sandbox._paths import Root

from .attempts import (
    ATTEMPTS,
    CANARY,
    CONFIG_ATTEMPTS,
    FILE_ATTEMPTS,
    GIT,
    Arena,
    Attempt,
    build_arena,
    judge,
)

ALL = ATTEMPTS + FILE_ATTEMPTS + CONFIG_ATTEMPTS
# A hostile repository (programs in its config, hooks, alternates) is no longer refused: git
# is never run and its config never read (issue 28), so such attempts must only be harmless;
# what git could be asked to run or print is still refused (git-args).
MUST_REFUSE = {"wrappers", "program-path", "find", "sort", "awk", "sed", "redirection",
               "git-args", "credential-files"}


@pytest.fixture(scope="module")
def arena(tmp_path_factory: pytest.TempPathFactory) -> Arena:
    return build_arena(tmp_path_factory.mktemp("arena"))


def _id(a: Attempt) -> str:
    return f"{a.category}-{a.tool}-{str(a.args)[:60]}"


# Commands run twice: with the kernel layer, and with the userspace checks alone (each must
# hold by itself; the kernel layer is defence in depth, not the only wall).
MODES = [(a, "auto") for a in ALL] + [(a, "allowlist") for a in ALL if a.tool == "run_command"]


@pytest.mark.parametrize(("attempt", "sandbox"), MODES,
                         ids=[f"{i:03d}-{m}" for i, (_, m) in enumerate(MODES)])
def test_attempt_fails_closed(arena: Arena, attempt: Attempt, sandbox: Setting) -> None:
    if attempt.needs_git and GIT is None:
        pytest.skip("git is not installed in /usr/bin or /bin")
    start = time.monotonic()
    outcome = judge(arena, attempt, sandbox)
    assert not outcome.escaped, f"{_id(attempt)}: {outcome.why}"
    if attempt.category in MUST_REFUSE:  # not merely harmless: refused, with a reason
        assert outcome.refused and outcome.why, _id(attempt)
    assert time.monotonic() - start < 10, f"{_id(attempt)} took too long"


def test_hostile_repo_is_read_and_nothing_in_it_runs(arena: Arena) -> None:
    if GIT is None:
        pytest.skip("git missing")
    out = judge(arena, Attempt("x", "run_command", {"argv": ["git", "-C", "{R}", "log"]}))
    assert not out.refused and not out.escaped, out.why


def test_clean_repo_still_works(arena: Arena) -> None:
    if GIT is None:
        pytest.skip("git missing")
    box = Sandbox(arena.host(True), task_id="t")
    for argv in (["git", "-C", str(arena.allowed / "clean"), "log", "-p"],
                 ["git", "-C", str(arena.allowed / "clean"), "branch", "--list"],
                 ["git", "-C", str(arena.allowed / "clean"), "show", "HEAD:a.txt"]):
        r = anyio.run(box.call, "run_command", {"argv": argv})
        assert r.ok and r.data["exit_code"] == 0, (argv, r.error, r.data)
    assert "clean" in r.data["stdout"]


def test_benign_recursive_grep_inside_allowed_still_works(arena: Arena) -> None:
    box = Sandbox(arena.host(True), task_id="t")
    r = anyio.run(box.call, "run_command", {"argv": ["grep", "-r", "alpha", str(arena.allowed)]})
    assert r.ok and "alpha" in r.data["stdout"] and CANARY not in r.data["stdout"]


# -- the symlink race: a path flips between a regular file and a link to the canary

@pytest.mark.parametrize("tool", ["read_file", "grep", "parse_config", "cat", "tail"])
def test_symlink_swap_race_never_reads_the_canary(tmp_path: Path, tool: str) -> None:
    allowed, outside = tmp_path / "allowed", tmp_path / "outside"
    allowed.mkdir()
    outside.mkdir()
    (outside / "canary.txt").write_text(f"k = {CANARY}\n")
    target = allowed / "flip.ini"
    stop = threading.Event()
    flips = 0

    def swapper() -> None:
        nonlocal flips
        tmp_file, tmp_link = allowed / ".f", allowed / ".l"
        while not stop.is_set():
            tmp_file.write_text("[s]\nk = benign\n")
            os.replace(tmp_file, target)
            tmp_link.symlink_to(outside / "canary.txt")
            os.replace(tmp_link, target)
            flips += 2

    t = threading.Thread(target=swapper, daemon=True)
    t.start()
    box = Sandbox(Host(root=Root("/", allow=(str(allowed),))), task_id="race")
    # cat and tail: a content printer's redacted copy is opened through the same resolver
    args = {"read_file": {"path": str(target)}, "grep": {"pattern": ".", "path": str(allowed)},
            "parse_config": {"path": str(target), "format": "ini"},
            "cat": {"argv": ["cat", str(target)]},
            "tail": {"argv": ["tail", "-c", "+1", str(target)]}}[tool]
    if tool in ("cat", "tail"):
        tool = "run_command"
    reads = ok = 0

    async def hammer() -> None:
        nonlocal reads, ok
        # Until the race really ran: enough reads and enough swaps under them. On a loaded
        # machine the swapper thread gets less time, so a fixed time window proved too short;
        # the cap only stops a machine where it can never get there.
        deadline, cap = time.monotonic() + 1.5, time.monotonic() + 60
        while (time.monotonic() < deadline or reads < 300 or flips <= 1000) and \
                time.monotonic() < cap:
            r = await box.call(tool, args)
            reads += 1
            ok += r.ok
            shown = f"{r.data}{r.error}{[e.model_dump() for e in r.evidence]}"
            assert CANARY not in shown, f"canary read on attempt {reads}"

    try:
        anyio.run(hammer)
    finally:
        stop.set()
        t.join()
    assert flips > 1000 and reads >= 300 and ok > 0


# -- processes: deadline, group kill, rlimits, output cap, PATH

def test_never_ending_command_is_killed(tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # A FIFO given to wc hung it once; FIFOs are refused before open now (issue 28), so
    # the program that never ends is a sleep, run through run_command's own path
    from agentkit._sandbox import _commands

    real = _commands._run
    monkeypatch.setattr(_commands, "_run", lambda argv, *rest: real(
        ["/bin/sleep", "30"], *rest))
    (tmp_path / "f").write_text("x\n")
    host = Host(root=Root("/", allow=(str(tmp_path),)), command_timeout_s=1.0)
    start = time.monotonic()
    r = anyio.run(Sandbox(host, task_id="t").call, "run_command",
                  {"argv": ["wc", "-l", str(tmp_path / "f")]})
    assert not r.ok and "process group was killed" in r.error
    assert time.monotonic() - start < 5


def test_whole_group_dies_even_when_children_ignore_sigterm(tmp_path: Path) -> None:
    marker = tmp_path / "late"
    script = (f"trap '' TERM; (trap '' TERM; sleep 2; touch {marker}) & "
              f"(sleep 2; touch {marker}2) & sleep 30")
    start = time.monotonic()
    _, _, code, timed_out, _ = _run(["/bin/sh", "-c", script], dict(_BASE_ENV), 0.5, 1000,
                                    str(tmp_path))
    assert timed_out and code != 0 and time.monotonic() - start < 3
    time.sleep(2.5)
    assert not marker.exists() and not (tmp_path / "late2").exists()


def test_backgrounded_grandchild_of_a_finished_leader_dies(tmp_path: Path) -> None:
    marker = tmp_path / "bg"
    _, _, code, timed_out, _ = _run(
        ["/bin/sh", "-c", f"(sleep 1; touch {marker}) >/dev/null 2>&1 &"], dict(_BASE_ENV),
        5.0, 1000, str(tmp_path))
    assert code == 0 and not timed_out
    time.sleep(1.5)
    assert not marker.exists()


def test_rlimits_apply_to_the_child(tmp_path: Path) -> None:
    out, _, _, _, _ = _run(["/bin/sh", "-c", "ulimit -f; ulimit -c; ulimit -v; ulimit -t"],
                              dict(_BASE_ENV), 5.0, 1000, str(tmp_path))
    fsize, core, vmem, cpu = out.split()
    assert (fsize, core) == ("0", "0") and int(vmem) <= 4 * 1024 * 1024 and int(cpu) <= 10


def test_no_file_can_grow_and_memory_hogs_fail(tmp_path: Path) -> None:
    py = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else None
    _run(["/bin/sh", "-c", f"echo data > {tmp_path}/grown"], dict(_BASE_ENV), 5.0, 1000,
         str(tmp_path))
    assert not (tmp_path / "grown").exists() or (tmp_path / "grown").stat().st_size == 0
    if py is None:
        pytest.skip("no /usr/bin/python3 for the memory hog")
    _, err, code, _, _ = _run([py, "-c", "b = bytearray(8 << 30)"], dict(_BASE_ENV), 10.0,
                              1000, str(tmp_path))
    assert code != 0 and "MemoryError" in err


def test_output_flood_is_capped(tmp_path: Path) -> None:
    start = time.monotonic()
    out, _, _, timed_out, truncated = _run(["/usr/bin/yes", CANARY], dict(_BASE_ENV), 5.0,
                                           64 * 1024, str(tmp_path))
    assert truncated and not timed_out and len(out) <= 64 * 1024
    assert time.monotonic() - start < 3
    (tmp_path / "big").write_bytes(b"y\n" * (1 << 20))
    host = Host(root=Root("/", allow=(str(tmp_path),)), output_limit=4096)
    r = anyio.run(Sandbox(host, task_id="t").call, "run_command",
                  {"argv": ["cat", str(tmp_path / "big")]})
    assert r.ok and r.data["truncated"] and len(r.data["stdout"]) < 5000


def test_path_hijack_and_planted_binaries_never_run(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    evil = tmp_path / "bin"
    evil.mkdir()
    marker = tmp_path / "hijacked"
    for name in ("cat", "git", "grep", "prlimit", "uname"):
        (evil / name).write_text(f"#!/bin/sh\ntouch {marker}\n")
        (evil / name).chmod(0o755)
    monkeypatch.setenv("PATH", f"{evil}:{os.environ.get('PATH', '')}")
    monkeypatch.chdir(evil)
    (tmp_path / "a.txt").write_text("real\n")
    host = Host(root=Root("/", allow=(str(tmp_path),)))
    box = Sandbox(host, task_id="t")
    r = anyio.run(box.call, "run_command", {"argv": ["cat", str(tmp_path / "a.txt")]})
    r2 = anyio.run(box.call, "run_command", {"argv": ["uname", "-r"]})
    assert r.ok and r.data["stdout"] == "real\n" and r2.ok
    assert not marker.exists()


def test_untrusted_bin_dirs_are_not_searched(tmp_path: Path) -> None:
    (tmp_path / "cat").write_text("#!/bin/sh\ntouch /nonexistent\n")
    (tmp_path / "cat").chmod(0o777)
    host = Host(root=Root("/", allow=(str(tmp_path),)), trusted_bin_dirs=(str(tmp_path),))
    r = anyio.run(Sandbox(host, task_id="t").call, "run_command",
                  {"argv": ["cat", str(tmp_path / "cat")]})
    assert not r.ok and "world-writable" in r.error


def test_environment_is_scrubbed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LD_PRELOAD", str(tmp_path / "evil.so"))
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", "'core.pager'='touch /tmp/x'")
    monkeypatch.setenv("BASH_ENV", str(tmp_path / "rc"))
    host = Host(root=Root("/", allow=(str(tmp_path),)))
    r = anyio.run(Sandbox(host, task_id="t").call, "run_command", {"argv": ["env"]})
    assert r.ok
    seen = dict(line.split("=", 1) for line in r.data["stdout"].splitlines())
    # bubblewrap sets PWD to the directory it starts the program in, and nothing else
    assert seen.pop("PWD", "/") == "/"
    assert set(seen) <= set(_BASE_ENV), seen

