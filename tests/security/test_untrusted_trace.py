"""Issue 28, red team rt3 T-A: a trace read from disk is untrusted input. One copied from
another machine, or crafted, may hold secrets in clear in any string (a tool result, the
recorded answer); ``agentkit replay`` (text and JSON), ``agentkit trace show``,
``agentkit report`` and MCP ``replay`` must not print them.

Expected behaviour, written before the fix: every string of such a trace passes the same
redactor a tool's output passes before it is shown, so ``HF_TOKEN=hf_…`` and
``password=…`` come out as ``[REDACTED:…]``; the committed example traces, which were
redacted when recorded, still replay byte-identical and print exactly as before.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from agentkit.cli import main

from ..conftest import EXAMPLES

HF = "hf_Q7xPmL2vNc9RtW4bYk8JdF3sGh6Zz"   # the red team's shapes: hf_<canary>Zz, a password
PASSWORD = "QP4FxnkApfYnVX6JKNoI"
PLANT = f" HF_TOKEN={HF} password={PASSWORD}"
SECRETS = (HF[3:], PASSWORD)


def _poison(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _poison(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_poison(v) for v in value]
    if isinstance(value, str) and "RTX PRO 6000" in value:
        return value + PLANT
    return value


@pytest.fixture
def crafted(tmp_path: Path) -> Path:
    """The red team's recipe: a real trace whose strings naming the GPU gain two secrets."""
    src = EXAMPLES / "traces" / "blackwell-kimi.jsonl"
    lines = [json.dumps(_poison(json.loads(line)))
             for line in src.read_text(encoding="utf-8").splitlines()]
    out = tmp_path / "crafted.jsonl"
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert all(s in out.read_text(encoding="utf-8") for s in SECRETS)
    return out


def _clean(text: str) -> None:
    for s in SECRETS:
        assert s not in text, text[max(0, text.find(s) - 300): text.find(s) + 100]


@pytest.mark.parametrize("argv", [["replay"], ["replay", "--json"], ["trace", "show"]])
def test_a_crafted_traces_secrets_are_not_printed(argv: list[str], crafted: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*argv, str(crafted)]) == 0
    out = capsys.readouterr()
    _clean(out.out)
    _clean(out.err)
    assert "Do previous optimizations" in out.out  # the rest is still shown


def test_a_crafted_traces_secrets_are_not_in_the_report(
        crafted: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    html = tmp_path / "r.html"
    assert main(["report", str(crafted), "-o", str(html)]) == 0
    _clean(html.read_text(encoding="utf-8"))
    _clean(capsys.readouterr().err)


def test_replay_trace_returns_them_redacted(crafted: Path) -> None:
    """The route MCP ``replay`` takes (its answer and markdown are made of this result)."""
    from agentkit._replay import replay_trace

    result = anyio.run(replay_trace, str(crafted))
    assert result.answer is not None
    _clean(result.answer.model_dump_json())
    _clean(" ".join(result.notes))


@pytest.mark.parametrize("example", ["blackwell-kimi", "hopper-deepseek"])
def test_the_committed_traces_still_replay_identical(
        example: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(EXAMPLES / "traces" / f"{example}.jsonl")]) == 0
    assert "identical to the recorded one" in capsys.readouterr().err


def _bad_version(tmp_path: Path) -> Path:
    lines = (EXAMPLES / "traces" / "blackwell-kimi.jsonl").read_text(
        encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    header["v"] = PLANT.strip()
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n", encoding="utf-8")
    return bad


@pytest.mark.parametrize("argv", [["replay"], ["trace", "show"]])
def test_a_crafted_traces_error_does_not_quote_its_secrets(
        argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The reader's errors quote what they refuse (``trace version '…'``): redacted too."""
    assert main([*argv, str(_bad_version(tmp_path))]) != 0
    out = capsys.readouterr()
    _clean(out.out)
    _clean(out.err)
    assert "line 1" in out.err


def test_mcp_replay_error_does_not_quote_them(tmp_path: Path) -> None:
    from agentkit._mcp import Refusal, _replayed
    from agentkit._replay import replay_trace

    bad = _bad_version(tmp_path)
    with pytest.raises(Refusal) as err:
        anyio.run(_replayed, str(bad), str(bad), replay_trace)
    _clean(str(err.value))
    assert "line 1" in str(err.value)
