"""Verdicts a model cannot overturn (issue 24, item 6): a synthesizer that writes the opposite of
what the catalog's recipes established in the same run, citing real evidence ids, never gets
its claim through unflagged; the established verdict stands in the bottom line.

Expected facts come from the bundled host's files, not from agentkit's output:
examples/blackwell-kimi is 8 PCIe-only GPUs at TP 8 whose vLLM journal says "Custom allreduce
is disabled", whose installed vLLM 0.11.0 has only TRITON_MLA for this GPU, which raises
NotImplementedError for an FP8 KV cache, whose unit sets NCCL_PROTO=LL, and whose served model
has 61 layers (122 allreduces per step)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from agentkit import Host, Orchestrator
from agentkit._catalog._guard import (
    _allreduce_counts,
    _contradiction,
    _nccl_values,
    _verdict,
    uphold,
)
from agentkit._catalog._synth import TemplateSynthesizer
from agentkit._types import Answer, Claim, Plan, TaskResult
from agentkit.testing import FakeLLMServer, Reply

from .conftest import EXAMPLES, REFERENCE_QUESTION
from .scenarios import runner
from .test_llm_degrade import template_plan, tools_of

KIMI = EXAMPLES / "blackwell-kimi"

# Each states the opposite of what the host's files show (see the module docstring).
FALSE = {
    "fp8": "Yes: an FP8 KV cache works on this host and would improve decode throughput.",
    "car": "Custom allreduce carries the tensor-parallel allreduces on this server.",
    "proto": "The served unit sets NCCL_PROTO=Simple.",
    "count": "Kimi-K2.5 does 156 allreduces per decode step.",
}


def lying_synth(body: dict[str, Any]) -> Reply:
    ids = re.findall(r"\b(E[0-9a-f]{10})\b", body["messages"][1]["content"])
    return Reply.openai(calls=[("submit_answer", {
        "bottom_line": [{"text": t, "evidence": ids[:1]} for t in FALSE.values()],
        "sections": [{"title": "Details", "claims": [
            {"text": "Custom allreduce is used, so NCCL only carries large messages.",
             "evidence": ids[1:2]}]}]})])


def _investigate(script: Callable[[dict[str, Any]], Reply]) -> Answer:
    """The reference question on the reference host, LLM mode, ``script`` as the model."""
    async def go(server: FakeLLMServer) -> Answer:
        async with Orchestrator.from_env(root=KIMI, base_url=server.base_url,
                                         model="fake") as orch:
            return await orch.investigate(REFERENCE_QUESTION)

    with FakeLLMServer(script) as server:
        return anyio.run(go, server)


def test_a_contradicting_synthesizer_is_overruled() -> None:
    def script(body: dict[str, Any]) -> Reply:
        return template_plan() if "submit_plan" in tools_of(body) else lying_synth(body)

    answer = _investigate(script)
    every = [c.text for c in answer.bottom_line] + [c.text for s in answer.sections
                                                    for c in s.claims]
    for text in [*FALSE.values(), "Custom allreduce is used, so NCCL only carries large "
                 "messages."]:
        assert text not in every, text
        assert any(text[:60] in n and "contradicts" in n for n in answer.notes), text
    bottom = " ".join(c.text for c in answer.bottom_line)
    # the established verdicts stand, cited, worded as the catalog words them
    assert re.search(r"No: .*custom allreduce is not used", bottom)
    assert re.search(r"No: .*no attention backend .* accepts a fp8 KV cache", bottom)
    assert all(c.evidence for c in answer.bottom_line)
    assert {i for c in answer.bottom_line for i in c.evidence} <= {c.id for c in
                                                                   answer.citations}


def test_a_model_that_agrees_keeps_its_words() -> None:
    def script(body: dict[str, Any]) -> Reply:
        if "submit_plan" in tools_of(body):
            return template_plan()
        ids = re.findall(r"\b(E[0-9a-f]{10})\b", body["messages"][1]["content"])
        return Reply.openai(calls=[("submit_answer", {"bottom_line": [
            {"text": t, "evidence": ids[:1]} for t in (
                "No: an FP8 KV cache is refused by the installed vLLM on this GPU.",
                "Custom allreduce is not used: TP 8 over PCIe only.",
                "The unit sets NCCL_PROTO=LL and NCCL_P2P_LEVEL=SYS.",
                "Kimi-K2.5 does 122 allreduces per decode step against 156 for GLM-5.")]})])

    answer = _investigate(script)
    assert len(answer.bottom_line) == 4
    assert not any("contradicts" in n for n in answer.notes)


class _Capture(TemplateSynthesizer):
    async def synthesize(self, question: str, plan: Plan, results: list[TaskResult]) -> Answer:
        self.plan, self.results = plan, results
        return await super().synthesize(question, plan, results)


@pytest.mark.parametrize("name", [n for n in runner.names() if n.startswith("d-")])
def test_the_catalog_s_own_words_never_contradict_its_verdicts(name: str,
                                                                tmp_path: Path) -> None:
    """Differential against the catalog: every claim the template synthesizer writes about a
    variant host (the recipes' own wording, no exemption applied) agrees with the verdicts
    and allreduce counts the same run established; so the heuristics that judge a model's
    claims do not misread the way these facts are stated."""
    sc = runner.load(name)
    root = runner.build(sc, tmp_path)
    for question in dict.fromkeys([sc.question, REFERENCE_QUESTION]):
        orch = Orchestrator.catalog(Host.at(root))
        cap = _Capture()
        orch.synthesizer = cap
        answer = anyio.run(orch.investigate, question)
        verdicts = [v for r in cap.results if (v := _verdict(r)) is not None]
        counts = _allreduce_counts(cap.results)
        for claim in [*answer.bottom_line, *(c for s in answer.sections for c in s.claims)]:
            assert _contradiction(claim.text, verdicts, {}, counts) == "", claim.text
        kept = uphold(answer.model_copy(deep=True), cap.plan, cap.results)
        assert kept.bottom_line == answer.bottom_line


def test_nccl_values_are_judged_against_every_source() -> None:
    result = TaskResult(task_id="nccl-env", status="ok", summary="", facts={
        "nccl_settings": {"value": [{"name": "NCCL_PROTO", "value": "LL"},
                                    {"name": "NCCL_IB_HCA", "value": "=mlx5_0,mlx5_1"}]}})
    nccl = _nccl_values([result])
    assert _contradiction("NCCL_PROTO=LL is set.", [], nccl, set()) == ""
    assert _contradiction("NCCL_IB_HCA==mlx5_0,mlx5_1 is set", [], nccl, set()) == ""
    assert "not Simple" in _contradiction("It sets NCCL_PROTO=Simple.", [], nccl, set())
    # a variable no source sets may be another unit's: not judged
    assert _contradiction("The old unit set NCCL_ALGO=Tree.", [], nccl, set()) == ""
    plan = Plan(question="q", mode="llm", tasks=[])
    answer = Answer(question="q", mode="llm", bottom_line=[Claim(text="NCCL_PROTO=Simple")])
    assert uphold(answer, plan, [result]).bottom_line  # no catalog task: nothing to uphold
