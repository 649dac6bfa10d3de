"""The LLM planner: the model expands a question into independent tasks.

The catalog is offered too: the model may pick templates (run as recipes, exact and free)
and add free-form tasks for what no template covers. The plan is validated (unique ids,
known tools and templates, a cap on tasks) and sent back with the problem a bounded number
of times.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ._catalog._template import TaskTemplate
from ._llm._messages import Message, Model, ToolSpec
from ._prompts import render
from ._submission import ask_for_submission
from ._types import Budget, Plan, SubQuestion, TaskSpec


class PlanError(Exception):
    """The model did not produce a valid plan."""


class _PlannedTask(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    title: str
    objective: str = ""
    template: str | None = None
    tools: list[str] = Field(default_factory=list)


class _PlanSubmission(BaseModel):
    model_config = ConfigDict(extra="forbid")
    tasks: list[_PlannedTask] = Field(min_length=1)
    subquestions: list[SubQuestion] = Field(default_factory=list)


class LLMPlanner:
    def __init__(self, model: Model, catalog: dict[str, TaskTemplate], tools: list[str], *,
                 max_tasks: int = 8, max_repairs: int = 2, budget: Budget | None = None
                 ) -> None:
        self.model = model
        self.catalog = catalog
        self.tools = tools
        self.max_tasks = max_tasks
        self.max_repairs = max_repairs
        self.budget = budget or Budget()

    async def plan(self, question: str) -> Plan:
        spec = ToolSpec("submit_plan", "Submit the plan: independent tasks.",
                        _PlanSubmission.model_json_schema())
        messages = [
            Message.system(render("planner_system.j2", tools=self.tools,
                                  templates=sorted(self.catalog.values(), key=lambda t: t.name),
                                  max_tasks=self.max_tasks)),
            Message.user(render("planner_user.j2", question=question)),
        ]
        plan, problem = await ask_for_submission(
            self.model, messages, spec, task="plan", purpose="plan", tries=self.max_repairs + 1,
            judge=lambda raw: (self._validate(question, raw), ""))
        if plan is None:
            raise PlanError(f"the model gave no valid plan after {self.max_repairs + 1} tries: "
                            f"{problem}")
        return plan

    def _validate(self, question: str, raw: dict[str, Any]) -> Plan:
        sub = _PlanSubmission.model_validate(raw)
        if len(sub.tasks) > self.max_tasks:
            raise ValueError(f"{len(sub.tasks)} tasks; at most {self.max_tasks} allowed")
        ids = [t.id for t in sub.tasks]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            raise ValueError(f"task ids must be unique; repeated: {', '.join(dupes)}")
        tasks = []
        for t in sub.tasks:
            if t.template is not None:
                tpl = self.catalog.get(t.template)
                if tpl is None:
                    raise ValueError(f"task {t.id}: unknown template {t.template!r}; known: "
                                     f"{', '.join(sorted(self.catalog))}")
                tasks.append(TaskSpec(id=t.id, title=tpl.title, objective=tpl.description,
                                      tools=tpl.tools, template=tpl.name, budget=self.budget,
                                      reason="chosen by the model planner (catalog template)"))
                continue
            unknown = sorted(set(t.tools) - set(self.tools))
            if unknown:
                raise ValueError(f"task {t.id}: unknown tools {unknown}; known: {self.tools}")
            if not t.objective:
                raise ValueError(f"task {t.id}: a free-form task needs an objective")
            tasks.append(TaskSpec(id=t.id, title=t.title, objective=t.objective,
                                  tools=t.tools or list(self.tools), budget=self.budget,
                                  reason="chosen by the model planner"))
        for sq in sub.subquestions:
            missing = sorted(set(sq.tasks) - set(ids))
            if missing:
                raise ValueError(f"subquestion {sq.text!r} names unknown tasks {missing}")
        return Plan(question=question, mode="llm", tasks=tasks, subquestions=sub.subquestions)
