"""Wording an answer in the question's terms: which questions are yes/no, which verdict
answers them, and the words used (the decision itself is the task's)."""

from __future__ import annotations

from typing import Any

import pytest

from agentkit._catalog._framing import answer_word, frame, is_question, is_yes_no
from agentkit._types import Fact, Finding, TaskResult


@pytest.mark.parametrize("text,yes_no,question", [
    ("Do previous optimizations apply?", True, True),
    ("and would fp8 help", True, True),
    ("Is custom allreduce used", True, True),
    ("What is the weather in Paris?", False, True),
    ("which unit serves", False, True),
    ("We moved this box from A to B.", False, False),
    ("Tell me about NCCL", False, False),
    ("Tell me about NCCL?", False, True),
    ("Didn't we set NCCL_PROTO?", True, True),
])
def test_question_kinds(text: str, yes_no: bool, question: bool) -> None:
    assert is_yes_no(text) is yes_no and is_question(text) is question


@pytest.mark.parametrize("question,label,word", [
    ("Is NCCL tuned?", "yes", "Yes"), ("Is NCCL tuned?", "no", "No"),
    ("Did we lose the NCCL env?", "yes", "Not lost"), ("Did we lose the NCCL env?", "no", "Lost"),
    ("Is the tuning missing?", "yes", "Not missing"), ("Is the tuning missing?", "no", "Missing"),
    ("Is custom allreduce disabled?", "no", "Yes, disabled"),
    ("Is custom allreduce disabled?", "yes", "No, not disabled"),
    ("Did the env vars get dropped?", "yes", "Not dropped"),
    ("Are we running without tuning?", "no", "Yes"),
    ("Would fp8 help?", "undetermined", "Not established"),
    ("Would fp8 help?", "already-on", "Already on"),
    ("Would fp8 help?", "broken", "No (it is set and the server is failing)"),
    ("Would fp8 help?", "some-new-label", "Some new label"),
])
def test_answer_words(question: str, label: str, word: str) -> None:
    assert answer_word(question, label) == word


def result(task: str, answer: str, about: list[str], claim: str, evidence: list[str] | None = None,
           errors: list[str] | None = None) -> TaskResult:
    facts: dict[str, Any] = {"verdict": Fact(value={"answer": answer, "about": about,
                                                    "claim": claim}, evidence=evidence or [])}
    return TaskResult(task_id=task, status="ok", summary="s", facts=facts, errors=errors or [],
                      findings=[Finding(claim=claim, evidence=evidence or [], headline=True)])


def test_the_verdict_whose_subject_the_question_names_most_leads() -> None:
    nccl = result("nccl", "yes", ["nccl", "tuning"], "The tuning is in effect.", ["E1"])
    car = result("car", "no", ["custom allreduce"], "The custom allreduce is not used.", ["E2"])
    got = frame("Is custom allreduce used for nccl?", [nccl, car])
    assert got is not None and got.task == "nccl"  # one word each: the plan's order decides
    got = frame("Is custom allreduce used?", [nccl, car])
    assert got is not None and got.task == "car"
    assert got.claim.text == "No: the custom allreduce is not used."
    assert got.claim.evidence == ["E2"]
    got = frame("Is the nccl tuning in place?", [car, nccl])
    assert got is not None and got.task == "nccl"
    assert got.claim.text == "Yes: the tuning is in effect."


def test_no_frame_without_a_yes_no_question_or_a_matching_verdict() -> None:
    nccl = result("nccl", "yes", ["nccl"], "NCCL_PROTO=LL is set.")
    assert frame("What NCCL settings are used?", [nccl]) is None
    assert frame("Is the GPU an H100?", [nccl]) is None
    assert frame("Is NCCL tuned?", [TaskResult(task_id="x", status="ok", summary="s")]) is None


def test_a_task_that_could_not_decide_says_why() -> None:
    r = result("kv", "undetermined", ["fp8"], "", errors=["step 3 (kv): no priority list found"])
    got = frame("Would fp8 help?", [r])
    assert got is not None
    assert got.claim.text == "Not established: kv could not decide it: no priority list found"


def test_proper_names_keep_their_case() -> None:
    r = result("n", "yes", ["nccl"], "NCCL_PROTO=LL is in effect.")
    got = frame("Is nccl tuned?", [r])
    assert got is not None and got.claim.text == "Yes: NCCL_PROTO=LL is in effect."


def test_edges_of_the_wording() -> None:
    assert is_question("Tell me about NCCL? ") is True
    plain = TaskResult(task_id="plain", status="ok", summary="s")
    no_about = TaskResult(task_id="x", status="ok", summary="s", facts={
        "verdict": Fact(value={"answer": "yes", "claim": "c"})})
    r = result("kv", "undetermined", ["fp8"], "", errors=["step 3 (kv): source: no list"])
    got = frame("Would fp8 help?", [plain, no_about, r])  # results without a verdict are skipped
    assert got is not None and got.claim.text == "Not established: kv could not decide it: " \
                                                 "source: no list"
    r = result("kv", "undetermined", ["fp8"], "", errors=["no colon here"])
    got = frame("Would fp8 help?", [r])
    assert got is not None and got.claim.text.endswith("could not decide it: no colon here")
    r = result("kv", "undetermined", ["fp8"], "")
    got = frame("Would fp8 help?", [r])
    assert got is not None and got.claim.text.endswith(
        "could not decide it: the task found nothing to state")
