"""The answer as people read it in a terminal (rich renders the Markdown), captured at 80 and
150 columns: host text keeps its characters (a glob's `*`), the Evidence list is one item per
citation, the bottom line is said once, and --brief is the bottom line and the table."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from rich.console import Console
from rich.markdown import Markdown

from agentkit._render import md_escape, to_markdown

from .conftest import EXAMPLES, REFERENCE_QUESTION
from .scenarios.runner import investigate


def shown(markdown: str, width: int) -> str:
    console = Console(width=width, record=True, force_terminal=False, color_system=None)
    console.print(Markdown(markdown))
    return console.export_text()


@pytest.mark.parametrize("width", [80, 150])
def test_host_text_keeps_its_characters_and_evidence_is_a_list(width: int, tmp_path: Path
                                                               ) -> None:
    (tmp_path / "etc").mkdir()
    answer = investigate(tmp_path, "Is NCCL tuned?").answer  # nothing serves: where it looked
    text = " ".join(shown(to_markdown(answer), width).split())
    assert "/opt/*/{compose,docker-compose}.y*ml" in text, text
    hopper = investigate(EXAMPLES / "hopper-deepseek", REFERENCE_QUESTION).answer
    out = shown(to_markdown(hopper), width)
    evidence = out.split("Evidence", 1)[1]
    items = [ln for ln in evidence.splitlines() if re.match(r"\s*•\s*\[\d+\]", ln)]
    assert len(items) == len(hopper.citations)  # one bullet per citation, none run together
    assert "NCCL_* tuning variable" in " ".join(out.split())


def test_the_bottom_line_is_said_once() -> None:
    answer = investigate(EXAMPLES / "hopper-deepseek", REFERENCE_QUESTION).answer
    md = to_markdown(answer)
    for claim in answer.bottom_line:  # the whole claim: other claims may open the same way
        assert md.count(md_escape(claim.text)) == 1, claim.text


def test_brief_is_the_bottom_line_and_the_table_with_their_evidence() -> None:
    answer = investigate(EXAMPLES / "hopper-deepseek", REFERENCE_QUESTION).answer
    md = to_markdown(answer, brief=True)
    assert "## Bottom line" in md and "## Served model vs earlier model" in md
    assert "## Question 1" not in md and "## How this was found" not in md
    refs = {int(n) for n in re.findall(r"\[(\d+)\]", md.split("## Evidence")[0])}
    listed = re.findall(r"^- \[(\d+)\]", md.split("## Evidence")[1], re.M)
    assert refs == {int(n) for n in listed}  # every mark points at a listed item, no more
    assert len(listed) < len(answer.citations)
