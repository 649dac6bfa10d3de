"""The one command substitution the start-script reading follows, ``$(grep -v '^#' FILE |
xargs)``, against real bash, grep and xargs on generated NAME=VALUE files: wherever agentkit
gives an output, it is bash's; everything else it says is not established (Undecided)."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentkit._hostmodel._shell import Undecided, Var, Where
from agentkit._hostmodel._shsubst import reader_of, substitute
from agentkit._hostmodel._wrapper import read_command

_TOOLS = all(shutil.which(t) for t in ("bash", "grep", "xargs"))
_COMMANDS = ["grep -v '^#' {f} | xargs", "grep -v ^# {f} | xargs", "grep -v '^#' {f}",
             "grep -vE '^#' {f} | grep -v '^$' | xargs", "grep NCCL {f} | xargs",
             "grep -v '^$' {f} | xargs", "cat {f} | xargs", "grep -v '^#' {f} | xargs -0",
             "grep -v '#' {f} | sort | xargs", "grep -v \"^#\" {f}|xargs"]
_LINE = st.one_of(
    st.from_regex(r"NCCL_[A-Z]{1,4}=[A-Za-z0-9,^]{0,4}", fullmatch=True),
    st.from_regex(r"# ?[A-Za-z =]{0,8}", fullmatch=True),
    st.sampled_from(["", " ", "X=a b", "Y='q w'", 'Z="1"', "-n", "A=*", "B=\\x", "  C=1",
                     "D=1 # c", "\t"]))


def _bash(command: str) -> str:
    out = subprocess.run(["bash", "-c", f'printf %s "$({command})"'], capture_output=True,
                         text=True, check=False, timeout=30, env={"PATH": "/usr/bin:/bin"})
    return out.stdout


@pytest.mark.skipif(not _TOOLS, reason="bash, grep or xargs is not installed")
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines=st.lists(_LINE, max_size=6), end=st.booleans(),
       command=st.sampled_from(_COMMANDS))
def test_substitution_output_is_bashs(lines: list[str], end: bool, command: str) -> None:
    text = "\n".join(lines) + ("\n" if end and lines else "")
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "nccl.env"
        f.write_text(text)
        cmd = command.format(f=f)
        try:
            got = substitute(cmd, reader_of({str(f): text}, []))
        except Undecided:
            return  # not established: allowed for anything, never a wrong value
        assert got.rstrip("\n") == _bash(cmd), (cmd, text)


def test_only_the_modelled_forms_are_followed() -> None:
    files: dict[str, str | None] = {"/e": "NCCL_PROTO=LL\n"}
    for cmd in ["cat /e", "cat /e | xargs", "grep -v '^#' e | xargs", "grep -r x /e",
                "grep -v $X /e | xargs", "grep -v '^#' /e | xargs echo", "hostname"]:
        with pytest.raises(Undecided):
            substitute(cmd, reader_of(files, []))
    wanted: list[str] = []
    with pytest.raises(Undecided):
        substitute("grep -v '^#' /other | xargs", reader_of(files, wanted))
    assert wanted == ["/other"]


def test_export_of_the_substitution_in_a_start_script() -> None:
    """``export $(grep -v '^#' FILE | xargs)``: bash exports every NAME=VALUE of the file."""
    script = ("#!/bin/bash\nexport $(grep -v '^#' /etc/vllm/nccl.env | xargs)\n"
              "exec /opt/v/bin/vllm serve /m --tensor-parallel-size 8\n")
    files: dict[str, str | None] = {
        "/opt/run.sh": script,
        "/etc/vllm/nccl.env": "# tuning\nNCCL_PROTO=LL\nNCCL_P2P_LEVEL=SYS\n"}
    reading = read_command(["/opt/run.sh"], {}, files, lambda a: "serve" in a,
                           Where("/u.service", 3))
    assert reading.launch is not None and reading.launch.argv is not None
    env: dict[str, Var] = reading.launch.env
    assert {k: v.value for k, v in env.items() if k.startswith("NCCL_")} == {
        "NCCL_PROTO": "LL", "NCCL_P2P_LEVEL": "SYS"}
    assert env["NCCL_PROTO"].at is not None and env["NCCL_PROTO"].at.line == 2
