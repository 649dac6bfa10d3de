"""README.md says what is there (issue 25 item 9): the examples/traces line names the files
that directory holds, the exit-code table covers every command with codes the CLI defines,
and the read-only commands its snippets show run as written."""

from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from agentkit.cli import _parser
from agentkit.cli._errors import EXIT_CODES

from .conftest import EXAMPLES, REPO

README = (REPO / "README.md").read_text(encoding="utf-8")


def test_the_examples_traces_line_names_what_is_there() -> None:
    para = README.split("`examples/traces/`", 1)[1].split("\n\n", 1)[0]
    named = set(re.findall(r"`([\w.-]+\.jsonl(?:\.gz)?)`", para))
    assert named == {p.name for p in (EXAMPLES / "traces").iterdir()}, para


def _commands() -> set[str]:
    out: set[str] = set()
    for action in _parser()._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                subs = [a for a in sub._actions if isinstance(a, argparse._SubParsersAction)]
                out |= {f"{name} {s}" for a in subs for s in a.choices} if subs else {name}
    return out


def _exit_table() -> dict[str, set[int]]:
    table = README.split("| command | exit codes |", 1)[1].split("\n\n", 1)[0]
    rows: dict[str, set[int]] = {}
    for line in table.splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        codes = {int(c) for c in cells[1].split(",")}
        for cmd in re.findall(r"`([^`]+)`", cells[0]):
            rows[cmd] = codes
    return rows


def test_the_exit_code_table_covers_every_command() -> None:
    rows = _exit_table()
    assert set(rows) == _commands(), set(rows) ^ _commands()
    used = set().union(*rows.values())
    assert used <= set(EXIT_CODES)
    assert set(EXIT_CODES) - used == {1, 130}  # said for every command, above the table


@pytest.mark.parametrize("command", sorted(_commands()))
def test_a_bad_option_is_exit_2_for_every_command(command: str) -> None:
    with pytest.raises(SystemExit) as exc:
        _parser().parse_args([*command.split(), "--no-such-option"])
    assert exc.value.code == 2 and 2 in _exit_table()[command]


def _snippets() -> list[str]:
    blocks = re.findall(r"```sh\n(.*?)```", README, re.S)
    lines = [ln.split("  #")[0].strip() for b in blocks for ln in b.splitlines()]
    keep = ("agentkit doctor", "agentkit tasks list", "agentkit tasks show",
            "agentkit tools list", "agentkit trace list")
    return [ln for ln in lines if ln.startswith(keep)]


@pytest.mark.parametrize("line", _snippets())
def test_the_read_only_snippets_run_as_written(line: str, tmp_path: Path) -> None:
    argv = shlex.split(line)[1:]
    done = subprocess.run([sys.executable, "-m", "agentkit", *argv], cwd=REPO, timeout=60,
                          capture_output=True, text=True,
                          env={**os.environ, "AGENTKIT_TRACE_DIR": str(tmp_path),
                               "AGENTKIT_CONFIG": "/dev/null"})
    assert done.returncode == 0, (line, done.stderr)


def test_doctor_and_trace_list_are_among_the_snippets() -> None:
    said = " ".join(_snippets())
    assert "agentkit doctor" in said and "agentkit trace list" in said
