"""The typed data model: what flows from question to answer.

Everything here is a pydantic model so it validates at the boundaries (LLM output, task files,
traces) and exports a JSON schema. ``SCHEMA_VERSION`` is bumped on any incompatible change.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ._fleet_model import Fleet

SCHEMA_VERSION = 1

_TASK_ID = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Budget(_Model):
    """Limits for one subagent.

    >>> Budget(max_steps=4).deadline_s
    120.0
    """

    max_steps: int = Field(12, ge=1, le=200)
    max_tokens: int = Field(60_000, ge=256)
    deadline_s: float = Field(120.0, gt=0)


class TaskSpec(_Model):
    """One independent piece of an investigation, run by one subagent.

    ``template`` names a catalog task: such a task runs its recipe (no model calls);
    without it, an LLM subagent works towards ``objective`` with ``tools``.

    >>> TaskSpec(id="nccl", title="NCCL", objective="read the unit", tools=["read_file"]).budget
    Budget(max_steps=12, max_tokens=60000, deadline_s=120.0)
    """

    id: str
    title: str
    objective: str
    tools: list[str] = Field(default_factory=list)
    budget: Budget = Field(default_factory=Budget)
    template: str | None = None
    inputs: dict[str, Any] = Field(default_factory=dict)
    reason: str = ""

    @field_validator("id")
    @classmethod
    def _check_id(cls, v: str) -> str:
        if not _TASK_ID.match(v):
            raise ValueError(f"task id {v!r} must be lowercase letters, digits, '-', '_' or '.'")
        return v


class SubQuestion(_Model):
    """One part of a compound question and the tasks that answer it.

    >>> SubQuestion(text="Is NCCL tuned?", tasks=["nccl-env"]).tasks
    ['nccl-env']
    """

    text: str
    tasks: list[str] = Field(default_factory=list)


class Plan(_Model):
    """The question expanded into independent tasks.

    >>> Plan(question="q", mode="catalog", tasks=[TaskSpec(id="a", title="a", objective="")]).mode
    'catalog'
    """

    question: str
    mode: Literal["catalog", "llm", "replay"]
    tasks: list[TaskSpec]
    subquestions: list[SubQuestion] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    usage: Usage = Field(default_factory=lambda: Usage())  # what planning cost (model calls)


EvidenceKind = Literal["file", "command", "config", "nvml", "listing", "derived"]


class Evidence(_Model):
    """Something a tool observed, citable by its stable ``id``.

    The id depends only on what was looked at (kind + locator), never on what was seen, so the
    same look in another run or another subagent has the same id and drift shows up as a
    changed ``sha256``.

    >>> ev = Evidence.of("file", "/etc/nccl.conf:2", "NCCL_DEBUG=WARN", "NCCL_DEBUG=WARN")
    >>> ev.id == Evidence.make_id("file", "/etc/nccl.conf:2")
    True
    """

    id: str
    kind: EvidenceKind
    locator: str
    excerpt: str = ""
    sha256: str = ""
    # the host (or node range) it was seen on, in a fleet answer; None on a one-host run
    host: str | None = None

    @staticmethod
    def make_id(kind: str, locator: str, host: str | None = None) -> str:
        # the same look on another host is another look: the host is part of the id
        key = f"{kind}\0{locator}" if host is None else f"{host}\0{kind}\0{locator}"
        return f"E{hashlib.sha256(key.encode()).hexdigest()[:10]}"

    @classmethod
    def of(cls, kind: EvidenceKind, locator: str, excerpt: str, content: str | bytes) -> Evidence:
        data = content.encode() if isinstance(content, str) else content
        return cls(
            id=cls.make_id(kind, locator),
            kind=kind,
            locator=locator,
            excerpt=excerpt,
            sha256=hashlib.sha256(data).hexdigest(),
        )


class Finding(_Model):
    """A claim and the evidence that proves it.

    >>> Finding(claim="NCCL_PROTO=LL is set", evidence=["E0123456789"]).headline
    False
    """

    claim: str
    evidence: list[str] = Field(default_factory=list)
    headline: bool = False


class Fact(_Model):
    """A named value a task established, with its evidence.

    >>> Fact(value=61, evidence=["E0123456789"]).value
    61
    """

    value: Any
    evidence: list[str] = Field(default_factory=list)


class Usage(_Model):
    """What a task or a whole run consumed.

    >>> (Usage(llm_calls=2) + Usage(llm_calls=3, tool_calls=1)).llm_calls
    5
    """

    llm_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    tool_calls: int = 0
    wall_s: float = 0.0

    def add(self, other: Usage) -> Usage:
        return Usage(
            llm_calls=self.llm_calls + other.llm_calls,
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            tool_calls=self.tool_calls + other.tool_calls,
            wall_s=max(self.wall_s, other.wall_s),
        )

    __add__ = add


TaskStatus = Literal["ok", "partial", "failed", "timed-out"]


class TaskResult(_Model):
    """The structured result one subagent hands back to the parent.

    >>> TaskResult(task_id="t", status="partial", summary="no unit found").findings
    []
    """

    task_id: str
    status: TaskStatus
    summary: str
    findings: list[Finding] = Field(default_factory=list)
    facts: dict[str, Fact] = Field(default_factory=dict)
    evidence: list[Evidence] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)


class Claim(_Model):
    """One statement of the answer and the evidence ids it rests on.

    >>> Claim(text="122 allreduces per decode step", evidence=["E0123456789"]).text
    '122 allreduces per decode step'
    """

    text: str
    evidence: list[str] = Field(default_factory=list)


class Section(_Model):
    """A titled part of the answer (one per sub-question in catalog mode).

    >>> Section(title="NCCL", claims=[Claim(text="tuned")]).claims[0].text
    'tuned'
    """

    title: str
    claims: list[Claim] = Field(default_factory=list)
    tasks: list[str] = Field(default_factory=list)


class Cell(_Model):
    """One table cell, citable like a claim.

    >>> Cell(text="61", evidence=["E0123456789"]).text
    '61'
    """

    text: str
    evidence: list[str] = Field(default_factory=list)


class Table(_Model):
    """A comparison table (rows of cells; the first cell of a row is its label).

    >>> Table(title="t", columns=["", "a"], rows=[[Cell(text="layers"), Cell(text="61")]]).title
    't'
    """

    title: str
    columns: list[str]
    rows: list[list[Cell]]


class Citation(_Model):
    """One entry of the answer's reference list: evidence id → where it was seen.

    >>> Citation(id="E0123456789", kind="file", locator="/etc/nccl.conf:2", excerpt="").kind
    'file'
    """

    id: str
    kind: EvidenceKind
    locator: str
    excerpt: str
    host: str | None = None  # fleet answers: the host or node range it was seen on


class Answer(_Model):
    """The merged answer: a bottom line, sections, an optional table, and citations.

    Every ``Claim`` and ``Cell`` names evidence ids; ``citations`` resolves each of them.

    >>> a = Answer(question="q", mode="catalog", bottom_line=[Claim(text="x", evidence=["E1"])])
    >>> a.cited_ids()
    {'E1'}
    """

    schema_version: int = SCHEMA_VERSION
    question: str
    mode: Literal["catalog", "llm", "replay"]
    bottom_line: list[Claim]
    sections: list[Section] = Field(default_factory=list)
    table: Table | None = None
    citations: list[Citation] = Field(default_factory=list)
    tasks: dict[str, TaskStatus] = Field(default_factory=dict)
    failed_tasks: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    fleet: Fleet | None = None  # a fleet investigation: buckets and value groups per fact

    def cited_ids(self) -> set[str]:
        ids: set[str] = set()
        for claim in self.bottom_line:
            ids.update(claim.evidence)
        for section in self.sections:
            for claim in section.claims:
                ids.update(claim.evidence)
        if self.table:
            for row in self.table.rows:
                for cell in row:
                    ids.update(cell.evidence)
        return ids


def failure_note(r: TaskResult) -> str:
    """One line on why a task did not succeed, for the answer's notes."""
    detail = "; ".join(e for e in r.errors if e not in r.summary)
    return f"{r.task_id} {r.status}: {r.summary}" + (f" ({detail})" if detail else "")


def json_schemas() -> dict[str, dict[str, Any]]:
    """JSON schemas of the boundary types, for other runtimes and for docs."""
    return {
        m.__name__: m.model_json_schema()
        for m in (Plan, TaskSpec, TaskResult, Evidence, Finding, Answer)
    }
