"""Citations: an answer may only cite evidence a task produced; the reference list follows
the order of first use."""

from __future__ import annotations

from agentkit._citations import evidence_index, finalize, unknown_ids
from agentkit._types import Answer, Cell, Claim, Evidence, Section, Table, TaskResult


def ev(i: str) -> Evidence:
    return Evidence(id=i, kind="file", locator=f"/etc/{i}:1", excerpt=f"x{i}", sha256="0" * 64)


def result(task: str, *ids: str) -> TaskResult:
    return TaskResult(task_id=task, status="ok", summary="s", evidence=[ev(i) for i in ids])


def test_unknown_ids_are_removed_and_noted_known_ones_listed_in_first_use_order() -> None:
    index = evidence_index([result("a", "E2", "E1"), result("b", "E3", "E1")])
    assert list(index) == ["E2", "E1", "E3"]
    answer = Answer(question="q", mode="catalog",
                    bottom_line=[Claim(text="one", evidence=["E3", "E9"]),
                                 Claim(text="two", evidence=["E1", "E3"])],
                    sections=[Section(title="s", claims=[Claim(text="three",
                                                               evidence=["E8", "E2"])])],
                    table=Table(title="t", columns=["", "x"],
                                rows=[[Cell(text="r"), Cell(text="v", evidence=["E7", "E1"])]]))
    assert unknown_ids(answer, index) == ["E7", "E8", "E9"]
    out = finalize(answer, index)
    assert [c.evidence for c in out.bottom_line] == [["E3"], ["E1", "E3"]]
    assert out.sections[0].claims[0].evidence == ["E2"]
    assert out.table is not None and out.table.rows[0][1].evidence == ["E1"]
    assert [c.id for c in out.citations] == ["E3", "E1", "E2"]
    assert out.citations[0].locator == "/etc/E3:1" and out.citations[0].excerpt == "xE3"
    assert out.notes == ["removed citations of evidence that does not exist: E7, E8, E9"]


def test_nothing_to_remove_adds_no_note() -> None:
    index = evidence_index([result("a", "E1")])
    out = finalize(Answer(question="q", mode="catalog",
                          bottom_line=[Claim(text="x", evidence=["E1", "E1"])]), index)
    assert out.notes == [] and [c.id for c in out.citations] == ["E1"]
    assert out.bottom_line[0].evidence == ["E1", "E1"]
