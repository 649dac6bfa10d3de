"""Template mistakes surface before anything runs: `agentkit tasks check` and every load name
the file, the field and the line; `ask` with such a template is exit 2, not an answer that
says "Not established". And every bundled template runs on every bundled example without a
template error."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentkit._catalog._load import load_catalog

from .conftest import EXAMPLES, REPO

GOOD = """\
name: my-check
title: A user template
description: checks a thing
tools: [read_file]
steps:
  - call: serving_unit
findings:
  - claim: "{{ facts.unit.value.name }} serves"
    cite: [unit]
"""


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agentkit", *args], capture_output=True,
                          text=True, timeout=120, cwd=REPO, env={**os.environ})


@pytest.mark.parametrize("old,new,says", [
    ("{{ facts.unit.value.name }} serves", "{{ facts.unit.value.name  serves",
     "field 'findings.0.claim' line 1"),
    ("cite: [unit]", "cite: [unit]\n    when: \"facts.unit ==\"",
     "field 'findings.0.when': expression"),
    ("call: serving_unit", "call: serving_unitt", "field 'steps.0.call': no recipe function"),
    ("tools: [read_file]", "tools: [read_fiel]", "field 'tools': no tool 'read_fiel'"),
    ("  - call: serving_unit", "  - call: serving_unit\n  - tool: grep\n    args: {pattern: x}",
     "field 'steps.1.tool': 'grep' is not in the template's tools"),
    # Jinja's compiler rejects unknown filters and tests; the load-time check only parses,
    # so it must find them on the syntax tree itself.
    ("{{ facts.unit.value.name }} serves", "{{ facts.unit.value.name | shout }} serves",
     "field 'findings.0.claim' line 1: No filter named 'shout'"),
    ("cite: [unit]", "cite: [unit]\n    when: \"facts.unit is loud\"",
     "No test named 'loud'"),
    ("cite: [unit]", "cite: [unit]\n    when: \"facts.unit 1\"",
     "field 'findings.0.when': expression"),
    ("  - call: serving_unit", "  - call: serving_unit\n  - tool: read_file\n    args: "
     "{path: '{{ facts.unit.value.path'}", "field 'steps.1.args.path' line 1"),
])
def test_a_template_mistake_is_named_with_its_file_field_and_line(
        tmp_path: Path, old: str, new: str, says: str) -> None:
    assert old in GOOD
    (tmp_path / "my-check.yaml").write_text(GOOD.replace(old, new))
    done = cli("tasks", "check", str(tmp_path))
    assert done.returncode == 2, done.stdout
    assert f"{tmp_path / 'my-check.yaml'}: " in done.stderr and says in done.stderr, done.stderr
    asked = cli("ask", "Is NCCL tuned?", "--root", str(EXAMPLES / "hopper-deepseek"),
                "--tasks-dir", str(tmp_path), "-q", "--trace", str(tmp_path / "t.jsonl"))
    assert asked.returncode == 2 and says in asked.stderr, asked.stderr


def test_a_good_template_checks_out_and_the_option_may_follow_the_action(tmp_path: Path
                                                                         ) -> None:
    (tmp_path / "my-check.yaml").write_text(GOOD)
    done = cli("tasks", "check", "--tasks-dir", str(tmp_path))
    bundled = len(list((EXAMPLES.parent / "tasks").glob("*.yaml")))  # and my-check
    assert done.returncode == 0 and f"{bundled + 1} task templates check out" in done.stdout, \
        done.stderr
    listed = cli("tasks", "list", "--tasks-dir", str(tmp_path))
    assert listed.returncode == 0 and "my-check" in listed.stdout


@pytest.mark.parametrize("example", sorted(p.name for p in EXAMPLES.iterdir()
                                           if (p / ".agentkit/snapshot.json").is_file()))
def test_every_bundled_template_runs_on_every_example_without_a_template_error(
        example: str) -> None:
    from .scenarios.runner import investigate

    names = sorted(load_catalog())
    out = investigate(EXAMPLES / example, "What does this host serve, and how?", names)
    answer = out.answer
    errors = [f"{t}: {e}" for t, r in out.results.items() for e in r.errors
              if "not stated" in e or "template" in e.lower() or "UndefinedError" in e]
    assert not errors, "\n".join(errors)
    text = " ".join(c.text for c in answer.bottom_line)
    assert "{{" not in text and "undefined" not in text.lower()
