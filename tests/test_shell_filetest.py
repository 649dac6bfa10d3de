"""File tests in start scripts (``[ -f F ] && . F``) decided by the host's files, and where
they must not be. Expected values are bash's (bash(1), CONDITIONAL EXPRESSIONS: -e exists,
-f regular file, -s size > 0; ``!`` negates; ``test`` is ``[`` without the ``]``), written
before running; the differential test (test_shell_differential.py) holds the same rules to
bash on generated scripts."""

from __future__ import annotations

import pytest

from agentkit._hostmodel._shell import Where
from agentkit._hostmodel._shexec import Reading
from agentkit._hostmodel._wrapper import read_command

ENV = "export NCCL_PROTO=LL\n"
F = "/etc/vllm/nccl.env"


def _read(script: str, files: dict[str, str | None]) -> Reading:
    """As the host model reads (_command.follow_command): what it asks for, then again; a
    path not in ``files`` could not be read."""
    have: dict[str, str | None] = {"/start.sh": "#!/bin/bash\n" + script, **files}
    while True:
        got = read_command(["/start.sh"], {}, have, lambda a: a[:1] == ["vllm"],
                           Where("unit", 1))
        new = [p for p in got.wanted if p not in have]
        if not new:
            return got
        have.update({p: None for p in new})


def _proto(script: str, files: dict[str, str | None]) -> str | None:
    """NCCL_PROTO as the engine gets it: its value, None when absent, "?" not established."""
    launch = _read(script + "\nexec vllm serve /m\n", files).launch
    assert launch is not None
    var = launch.env.get("NCCL_PROTO")
    if var is None:  # after code it cannot follow (a source it could not read) any name may
        return "?" if launch.wild is not None else None
    return var.value if var.settled else "?"


@pytest.mark.parametrize("script", [
    f"[ -f {F} ] && . {F}", f"test -e {F} && source {F}", f"[ ! -f {F} ] || . {F}",
    f"if [ -s {F} ]; then . {F}; fi", f"if test ! -e {F}; then :; else . {F}; fi",
    f"echo starting 2>&1\n[ -f {F} ] && . {F}",  # a descriptor copy writes no file
    f"X=$(cat /etc/hostname)\n[ -f {F} ] && . {F}",  # cat changes no file
])
def test_a_file_the_reader_read_decides_the_test(script: str) -> None:
    assert _proto(script, {F: ENV}) == "LL"


def test_it_fails_the_other_way_too() -> None:
    assert _proto(f"[ ! -e {F} ] && . {F}", {F: ENV}) is None


@pytest.mark.parametrize("script,files", [
    (f"[ -f {F} ] && . {F}", {}),  # could not be read: missing or refused, not known which
    (f"[ -r {F} ] && . {F}", {F: ENV}),  # readable by the service's user: not known
    (f"[ -d {F} ] || . {F}", {F: ENV}),
    ("[ -f nccl.env ] && . /etc/vllm/nccl.env", {F: ENV}),  # relative: the working directory
    (f"rm -f {F}\n[ -f {F} ] && . {F}", {F: ENV}),  # the script may have removed it
    (f"echo x > /tmp/flag\n[ -f {F} ] && . {F}", {F: ENV}),  # a redirection writes a file
    (f"{{ true; }} > /tmp/log\n[ -f {F} ] && . {F}", {F: ENV}),
    (f"/opt/setup\n[ -f {F} ] && . {F}", {F: ENV}),  # any program may write files
    (f"H=$(hostname)\n[ -f {F} ] && . {F}", {F: ENV}),  # so may a command substitution
])
def test_what_the_files_do_not_prove_stays_not_established(
        script: str, files: dict[str, str | None]) -> None:
    assert _proto(script, files) == "?"


def test_an_empty_text_proves_existence_only() -> None:
    # an empty read: an empty file, or a device that reads empty; -f and -s are not known
    assert _proto(f"[ -e {F} ] && export NCCL_PROTO=LL", {F: ""}) == "LL"
    assert _proto(f"[ -f {F} ] && export NCCL_PROTO=LL", {F: ""}) == "?"


def test_an_assigning_default_whose_word_is_not_known_still_assigns() -> None:
    # bash assigns ${X:=word} whatever word gives: the value is not established, not absent
    assert _proto('export NCCL_PROTO\n: "${NCCL_PROTO:=$(cat /etc/p)}"', {}) == "?"


def test_a_case_with_a_star_arm_always_runs_an_arm() -> None:
    script = ('case "$(cat /etc/p)" in a) export NCCL_PROTO=LL;; *) export NCCL_PROTO=LL;; '
              "esac")
    assert _proto(script, {}) == "LL"
    assert _proto(script.replace("*)", "b)"), {}) == "?"  # no arm may match: unset then
