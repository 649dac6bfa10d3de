"""Task templates load with clear errors that name the file and the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentkit._catalog._load import load_catalog
from agentkit._catalog._recipe import FUNCTIONS
from agentkit._catalog._template import TemplateError
from agentkit._sandbox._sandbox import BUILTIN_TOOLS
from agentkit.cli import main

GOOD = """name: {name}
title: Disk usage
description: How full the model disk is.
triggers:
  keywords: [disk]
tools: [run_command]
steps:
  - tool: run_command
    args: {{argv: ["uname", "-r"]}}
    save: uname
  - fact: kernel
    value: "vars.uname.stdout.strip()"
    cite: [uname]
findings:
  - claim: "Kernel {{{{ facts.kernel.value }}}}."
    headline: true
    cite: [kernel]
"""


def test_bundled_catalog_is_valid() -> None:
    cat = load_catalog()
    assert len(cat) >= 11
    for tpl in cat.values():
        assert set(tpl.tools) <= set(BUILTIN_TOOLS), tpl.name
        for step in tpl.steps:
            assert step.call is None or step.call in FUNCTIONS, (tpl.name, step.call)


@pytest.mark.parametrize("mutation,field", [
    (lambda t: t.replace("tools: [run_command]\n", ""), "tools"),
    (lambda t: t.replace("title: Disk usage", "title: [1, 2]"), "title"),
    (lambda t: t.replace("  - fact: kernel\n", "  - fact: kernel\n    call: x\n"), "steps.1"),
    (lambda t: t + "surprise: 1\n", "surprise"),
])
def test_bad_field_named(tmp_path: Path, mutation: object, field: str) -> None:
    path = tmp_path / "disk.yaml"
    path.write_text(mutation(GOOD.format(name="disk")))  # type: ignore[operator]
    with pytest.raises(TemplateError) as err:
        load_catalog([tmp_path])
    assert str(path) in str(err.value) and f"field '{field}" in str(err.value)


def test_name_must_match_file(tmp_path: Path) -> None:
    (tmp_path / "disk.yaml").write_text(GOOD.format(name="other"))
    with pytest.raises(TemplateError, match="must match"):
        load_catalog([tmp_path])


def test_cli_reports_bad_template(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "disk.yaml").write_text(GOOD.format(name="disk").replace("steps:", "stepz:"))
    assert main(["tasks", "--tasks-dir", str(tmp_path), "list"]) == 2
    err = capsys.readouterr().err
    assert "disk.yaml" in err and "field 'steps'" in err


def test_user_template_with_declarative_steps_runs(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    import json

    (tmp_path / "disk.yaml").write_text(GOOD.format(name="disk"))
    from .conftest import EXAMPLES

    code = main(["ask", "How full is the disk?", "--root", str(EXAMPLES / "blackwell-kimi"),
                 "--tasks-dir", str(tmp_path), "--json", "-q"])
    out = capsys.readouterr()
    assert code == 0, out.err
    answer = json.loads(out.out)
    kernel = (EXAMPLES / "blackwell-kimi/.agentkit/commands/uname-r.txt").read_text().strip()
    assert answer["bottom_line"][0]["text"] == f"Kernel {kernel}."
    assert answer["citations"][0]["locator"].startswith("$ uname -r [exit 0]")


def test_no_code_names_the_bundled_examples() -> None:
    # The examples must answer because the code found the facts, not because it knew them.
    import re

    from .conftest import REPO

    pattern = re.compile(r"kimi|glm|deepseek|hopper|blackwell|qwen", re.I)
    offenders = [f"{p.relative_to(REPO)}:{n}" for d in ("agentkit", "tasks", "prompts")
                 for p in (REPO / d).rglob("*") if p.suffix in (".py", ".yaml", ".j2")
                 for n, line in enumerate(p.read_text().splitlines(), 1)
                 if pattern.search(line)]
    assert offenders == []
