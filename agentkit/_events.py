"""Progress events for embedders, derived from the trace as it is written.

Each event is a small pydantic model with a ``kind`` tag, so a consumer can ``match`` on it::

    async for event in orch.stream("Would an FP8 KV cache help?"):
        match event.kind:
            case "task_finished": print(event.task_id, event.status)
            case "answer": print(event.answer.bottom_line)
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from ._types import Answer, Plan, TaskStatus, Usage


class PlanReady(BaseModel):
    """The plan, before any task runs.

    >>> PlanReady(plan=Plan(question="q", mode="catalog", tasks=[])).kind
    'plan'
    """

    kind: Literal["plan"] = "plan"
    plan: Plan


class TaskStarted(BaseModel):
    """A subagent started.

    >>> TaskStarted(task_id="nccl-env", title="NCCL").kind
    'task_started'
    """

    kind: Literal["task_started"] = "task_started"
    task_id: str
    title: str


class ToolCalled(BaseModel):
    """A tool call finished (``ok`` False: refused or failed, with the reason).

    >>> ToolCalled(task_id="t", step=1, tool="read_file", ok=True).tool
    'read_file'
    """

    kind: Literal["tool_called"] = "tool_called"
    task_id: str
    step: int
    tool: str
    ok: bool
    error: str = ""


class ModelAnswered(BaseModel):
    """A model call came back, asking for these tools.

    >>> ModelAnswered(task_id="t", step=2, tool_calls=["grep"]).step
    2
    """

    kind: Literal["model_answered"] = "model_answered"
    task_id: str
    step: int
    tool_calls: list[str]
    input_tokens: int = 0
    output_tokens: int = 0


class TaskFinished(BaseModel):
    """A subagent handed in its result (``done`` of ``total`` tasks so far).

    >>> TaskFinished(task_id="t", status="ok", summary="", done=1, total=3).done
    1
    """

    kind: Literal["task_finished"] = "task_finished"
    task_id: str
    status: TaskStatus
    summary: str
    done: int
    total: int
    usage: Usage = Field(default_factory=Usage)  # this task's model calls, tokens and tools


class HostFinished(BaseModel):
    """A fleet host's outcome arrived (``done`` of ``total`` hosts so far).

    >>> HostFinished(host="gpu07", status="unreachable", done=3, total=64).status
    'unreachable'
    """

    kind: Literal["host_finished"] = "host_finished"
    host: str
    status: str  # the transport's: ok, failed, unreachable, timed-out, refused
    error: str = ""
    done: int
    total: int


class AnswerReady(BaseModel):
    """The merged, cited answer: always the last event.

    >>> AnswerReady(answer=Answer(question="q", mode="catalog", bottom_line=[])).kind
    'answer'
    """

    kind: Literal["answer"] = "answer"
    answer: Answer


# Any progress event: match on ``event.kind``.
Event = (PlanReady | TaskStarted | ToolCalled | ModelAnswered | TaskFinished | HostFinished
         | AnswerReady)


class EventTranslator:
    """Turns trace events into :data:`Event` objects (keeps the task counts)."""

    def __init__(self) -> None:
        self.total = 0
        self.done = 0
        self.hosts = 0  # a fleet run's host count, from its run event
        self.hosts_done = 0

    def __call__(self, ev: dict[str, Any]) -> Event | None:
        kind, phase, data = ev["kind"], ev["phase"], ev["data"]
        if kind == "run" and phase == "start" and isinstance(data.get("fleet"), dict):
            self.hosts = int(data["fleet"].get("count") or 0)
        if kind == "host":
            self.hosts_done += 1
            return HostFinished(host=data["host"], status=data["status"],
                                error=data.get("error") or "", done=self.hosts_done,
                                total=max(self.hosts, self.hosts_done))
        if kind == "plan":  # a second plan (the catalog's rescue) adds its tasks
            self.total += len(data["tasks"])
            return PlanReady(plan=Plan.model_validate(data))
        if kind == "task" and phase == "start":
            return TaskStarted(task_id=ev["task"], title=data.get("title", ""))
        if kind == "task" and phase == "end" and "result" in data:
            self.done += 1
            r = data["result"]
            return TaskFinished(task_id=ev["task"], status=r["status"], summary=r["summary"],
                                done=self.done, total=self.total,
                                usage=Usage.model_validate(r.get("usage") or {}))
        if kind == "tool" and phase == "end":
            return ToolCalled(task_id=ev["task"] or "", step=ev["step"] or 0, tool=data["tool"],
                              ok=data["ok"], error=data.get("error", ""))
        if kind == "llm" and phase == "end" and "response" in data:
            usage = data["response"].get("usage") or {}
            return ModelAnswered(task_id=ev["task"] or "", step=ev["step"] or 0,
                                 tool_calls=[c["name"] for c in data["response"]["tool_calls"]],
                                 input_tokens=int(usage.get("input_tokens", 0)),
                                 output_tokens=int(usage.get("output_tokens", 0)))
        if kind == "synthesize" and phase == "end":
            return AnswerReady(answer=Answer.model_validate(data["answer"]))
        return None
