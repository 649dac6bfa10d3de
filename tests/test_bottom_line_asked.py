"""The bottom line answers the question asked (issue 25 item 1): "Which kernel version?" gets
the kernel in the bottom line, first, with ``--brief`` too; a finding a template marks with
``answers:`` leads when the question names it. Expected values are read from the snapshots'
own captures (``uname -r``), not from what agentkit prints."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentkit import investigate_sync
from agentkit._render import to_markdown

from .conftest import EXAMPLES


def _captured_uname(root: Path) -> str:
    manifest = json.loads((root / ".agentkit" / "snapshot.json").read_text())
    [cap] = [c for c in manifest["commands"] if c["argv"] == ["uname", "-r"]]
    return (root / ".agentkit" / cap["stdout"]).read_text().strip()


@pytest.mark.parametrize("example", ["blackwell-kimi", "hopper-deepseek"])
@pytest.mark.parametrize("question", ["Which kernel version?", "What kernel does it run?",
                                      "Which vLLM version and which kernel?"])
def test_the_kernel_question_is_answered_in_the_bottom_line(example: str, question: str
                                                            ) -> None:
    root = EXAMPLES / example
    kernel = _captured_uname(root)
    answer = investigate_sync(question, root=str(root))
    assert kernel in answer.bottom_line[0].text, [c.text for c in answer.bottom_line]
    brief = to_markdown(answer, brief=True)
    assert kernel in brief.split("## Evidence")[0]
    assert "uname -r" in brief  # the claim keeps its citation in the brief form


def test_a_question_that_does_not_ask_for_the_kernel_keeps_its_lead() -> None:
    answer = investigate_sync("Which vLLM version is installed?",
                              root=str(EXAMPLES / "blackwell-kimi"))
    assert answer.bottom_line[0].text.startswith("The server runs vLLM 0.11.0")
    assert all("Kernel" not in c.text for c in answer.bottom_line)


def test_the_attention_backend_asked_for_is_in_the_bottom_line() -> None:
    # the journal's own line: "Using TRITON_MLA attention backend out of potential backends"
    answer = investigate_sync("Which attention backend did the server log at start?",
                              root=str(EXAMPLES / "blackwell-kimi"))
    said = [c.text for c in answer.bottom_line]
    assert "The server chose the TRITON_MLA attention backend at start." in said, said
