"""Messages are for people (issue 25 item 6): one line per failure in words, no Python reprs,
grammar that agrees with its numbers, and host text as written when the reader is not a
Markdown renderer."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentkit._fleet import _bottom
from agentkit._fleet_model import Fleet, FleetFact, FleetGroup

from .conftest import EXAMPLES, REPO

KV_QUESTION = "Would setting the k/v cache to fp8 improve performance?"


def _ask(*args: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agentkit", "ask", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "AGENTKIT_TRACE_DIR": str(tmp_path),
                               "AGENTKIT_CONFIG": "/dev/null"})


@pytest.mark.parametrize("quiet", [[], ["-q"]], ids=["default", "quiet"])
def test_no_matching_task_is_said_once_in_words(tmp_path: Path, quiet: list[str]) -> None:
    done = _ask("What colour is the sky over the datacenter?", "--root",
                str(EXAMPLES / "blackwell-kimi"), *quiet, tmp_path=tmp_path)
    assert done.returncode == 3, done.stderr
    assert done.stderr.startswith("agentkit: "), done.stderr
    assert "NoMatchingTask" not in done.stderr and "investigation error" not in done.stderr
    assert done.stderr.count("has nothing that matches") == 1, done.stderr


def _group(value: str, nodes: str, count: int) -> FleetGroup:
    return FleetGroup(value=value, text=value, nodes=nodes, count=count)


def test_fleet_claims_agree_with_their_numbers() -> None:
    # one host answered: "the one host", never "all 1 host"
    one = Fleet(transport="snapshots", hosts=1, buckets={"ok": "gpu01"}, counts={"ok": 1},
                recap="ok=1")
    said = _bottom._verdict("Is NCCL tuned the same everywhere?", one, []).text
    assert "all 1 host" not in said and "the one host" in said, said
    # one host per value past the shown groups: "1 more value on 1 host", never "1 hosts"
    groups = [_group(f"v{i}", f"gpu0{i}", 1) for i in range(1, 6)]
    split = FleetFact(task="t", fact="f", label="f", groups=groups, majority=False)
    said = _bottom._fact_line(split).text
    assert " 1 hosts" not in said and "1 more values" not in said, said
    assert "1 more value on 1 host" in said, said


def test_one_more_fact_differs_in_the_singular() -> None:
    said = _bottom._more_facts(["NCCL_ALGO"]).text
    assert said.startswith("1 more compared fact differs"), said


def test_catalog_sentences_read_as_english(tmp_path: Path) -> None:
    kv = _ask(KV_QUESTION, "--root", str(EXAMPLES / "blackwell-kimi"), tmp_path=tmp_path)
    assert kv.returncode == 0, kv.stderr
    assert "only TRITON_MLA supports this GPU" in kv.stdout, kv.stdout
    diff = _ask("Do previous optimizations still apply to the new model?", "--root",
                str(EXAMPLES / "blackwell-kimi"), tmp_path=tmp_path)
    assert "because it is the only other model on the host" in diff.stdout, diff.stdout
    assert "because the only other" not in diff.stdout


def test_plain_text_in_a_pipe_markdown_when_asked(tmp_path: Path) -> None:
    args = (KV_QUESTION, "--root", str(EXAMPLES / "blackwell-kimi"))
    plain = _ask(*args, tmp_path=tmp_path)
    assert plain.returncode == 0
    assert "['auto', 'bfloat16']" in plain.stdout and "\\[" not in plain.stdout
    md = _ask(*args, "--format", "md", tmp_path=tmp_path)
    assert "\\['auto', 'bfloat16'\\]" in md.stdout
    js = _ask(*args, "--format", "json", tmp_path=tmp_path)
    assert js.stdout.lstrip().startswith("{")
