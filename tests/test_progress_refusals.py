"""The CLI's progress log says each kind of refusal once, with a count at the end: a live
host refuses dozens of paths for the same reason (the issue saw 48 lines of "… is under
/dev")."""

from __future__ import annotations

import pytest

from agentkit.cli._progress import progress_logger, refusal_kind


def _refused(error: str) -> dict[str, object]:
    return {"kind": "tool", "phase": "end", "task": "t", "span": "s", "ts": 0.0,
            "data": {"tool": "read_file", "ok": False, "error": error}}


def test_refusals_of_one_kind_are_one_line_and_a_count(capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    on = progress_logger(warnings_only=True)
    on({"kind": "plan", "phase": "end", "data": {"mode": "llm", "tasks": []}})
    for p in ("/dev/null", "/dev/zero", "/dev/shm/x"):
        on(_refused(f"{p} is under /dev, which the sandbox never reads"))
    on(_refused("/etc/shadow is a credential file; refused"))
    on({"kind": "run", "phase": "end", "data": {"status": "ok"}})
    err = capsys.readouterr().err
    assert err.count("tool refused") == 2, err
    assert err.count("is under /dev") == 2  # the first, and the summary's example
    assert "count=3" in err and "credential" in err
    assert "/dev/zero" not in err and "/dev/shm/x" not in err


def test_what_makes_two_refusals_the_same_kind() -> None:
    assert refusal_kind("/a/b is under /a, which the sandbox never reads") == refusal_kind(
        "/c is under /d, which the sandbox never reads")
    assert refusal_kind("`uname -a` was not captured") == refusal_kind("`ls` was not captured")
    assert refusal_kind("x is too large (12 bytes)") != refusal_kind("x is a directory")


def test_a_host_string_cannot_break_or_colour_the_line(capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    # A path comes from the host: a newline would forge a log line, ESC a terminal sequence.
    on = progress_logger()
    on({"kind": "plan", "phase": "end", "data": {"mode": "catalog", "tasks": []}})
    on(_refused("/etc/x\n12:00:00 [info     ] run finished \x1b[31mred"))
    err = capsys.readouterr().err
    assert "\x1b" not in err and err.count("\n") == 2, err
    assert "tool refused" in err and "\\x1b[31mred" in err


def test_an_absent_optional_path_is_not_a_warning(capsys: pytest.CaptureFixture[str]) -> None:
    # LLM mode warns about refusals (the model asked for something it may not have), but a
    # path the host simply lacks (~/.nccl.conf, /etc/rancher/k3s) is nothing to act on.
    on = progress_logger(warnings_only=True)
    on({"kind": "plan", "phase": "end", "data": {"mode": "llm", "tasks": []}})
    for p in ("/home/vllm/.nccl.conf", "/etc/rancher/k3s", "/etc/rancher/rke2"):
        on(_refused(f"{p}: no such file or directory"))
    on(_refused("`systemctl list-units` was not captured in this snapshot"))
    on({"kind": "run", "phase": "end", "data": {"status": "ok"}})
    assert capsys.readouterr().err == ""
