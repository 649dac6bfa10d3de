"""The LLM planner: the model expands a question into independent tasks.

The catalog is offered too: the model may pick templates (run as recipes, exact and free)
and add free-form tasks for what no template covers. The plan is validated (unique ids,
known tools and templates, a cap on tasks) and sent back with the problem a bounded number
of times.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from .._catalog._template import TaskTemplate
from .._llm._messages import Message, Model, ModelError, ToolSpec
from .._llm._schemas import drop_nulls, restrict, strict
from .._types import Budget, Plan, SubQuestion, TaskResult, TaskSpec, Usage
from ._prompts import render
from ._submission import ask_for_submission


class PlanError(Exception):
    """The model did not produce a valid plan."""


class _PlannedTask(BaseModel):
    # LLM mode only: its validator is built when a plan is first submitted, not at import
    model_config = ConfigDict(extra="forbid", defer_build=True)
    id: str = ""  # a short name; made valid and unique here, so a model cannot get it wrong
    title: str
    objective: str = ""
    template: str | None = None
    tools: list[str] = Field(default_factory=list)


class _PlanSubmission(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)
    tasks: list[_PlannedTask] = Field(min_length=1)
    subquestions: list[SubQuestion] = Field(default_factory=list)


class LLMPlanner:
    def __init__(self, model: Model, catalog: dict[str, TaskTemplate], tools: list[str], *,
                 max_tasks: int = 8, max_repairs: int = 2, budget: Budget | None = None,
                 fallback: Any = None) -> None:
        self.model = model
        self.catalog = catalog
        self.tools = tools
        self.max_tasks = max_tasks
        self.max_repairs = max_repairs
        self.budget = budget or Budget()
        self.fallback = fallback  # a catalog planner, for when the model gives no valid plan

    async def plan(self, question: str) -> Plan:
        spec = ToolSpec("submit_plan", "Submit the plan: independent tasks.",
                        self.schema(), strict=True)
        messages = [
            Message.system(render("planner_system.j2", tools=self.tools,
                                  templates=sorted(self.catalog.values(), key=lambda t: t.name),
                                  max_tasks=self.max_tasks)),
            Message.user(render("planner_user.j2", question=question)),
        ]
        usage = Usage()
        failed: ModelError | None = None
        try:
            plan, problem = await ask_for_submission(
                self.model, messages, spec, task="plan", purpose="plan",
                tries=self.max_repairs + 1,
                judge=lambda raw: (self._validate(question, raw), ""), usage=usage)
        except ModelError as exc:  # degrade, never discard: the catalog may still plan
            if exc.status in (401, 403, 404):
                raise  # a key or model name that is wrong: say so, do not answer without it
            plan, problem, failed = None, "", exc
        if plan is not None:
            plan.usage = usage
            return plan
        why = (f"the model did not write the plan: the planning call failed ({failed})"
               if failed is not None else
               f"the model gave no valid plan after {self.max_repairs + 1} tries: {problem}")
        if self.fallback is not None:
            from .._catalog._planner import NoMatchingTask

            try:
                plan = await self.fallback.plan(question)
            except NoMatchingTask:
                if failed is not None:
                    raise failed from None  # nothing can be planned: the model's error says why
                raise PlanError(why) from None
            plan = plan.model_copy(update={"mode": "llm", "usage": usage, "notes": [
                f"{why[:300]}; the task catalog planned the parts it covers", *plan.notes]})
            return plan
        if failed is not None:
            raise failed
        raise PlanError(why)

    async def rescue(self, question: str, plan: Plan, results: list[TaskResult]
                     ) -> Plan | None:
        """When the model's tasks established nothing that can be cited, the catalog's tasks
        for the question (those not run yet), to run as well; None when they did, or when the
        catalog has nothing for the question."""
        if self.fallback is None or any(f.evidence for r in results for f in r.findings):
            return None  # something was established, with evidence
        from .._catalog._planner import NoMatchingTask

        try:
            catalog = await self.fallback.plan(question)
        except NoMatchingTask:
            return None
        ran = {t.template for t in plan.tasks if t.template}
        ids = {t.id for t in plan.tasks}
        extra = [t.model_copy(update={"id": t.id if t.id not in ids else f"{t.id}-catalog",
                                      "budget": self.budget})
                 for t in catalog.tasks if t.template not in ran]
        if not extra:
            return None
        return Plan(question=question, mode="llm", tasks=extra, notes=[
            "the model's tasks established nothing that can be cited; the task catalog's "
            f"tasks for the question ran as well ({', '.join(t.id for t in extra)})"])

    def schema(self) -> dict[str, Any]:
        """submit_plan's arguments, with the valid template and tool names as enums."""
        schema = _PlanSubmission.model_json_schema()
        restrict(schema, ["$defs", "_PlannedTask", "properties", "template"],
                 sorted(self.catalog))
        restrict(schema, ["$defs", "_PlannedTask", "properties", "tools", "items"],
                 sorted(self.tools))
        return strict(schema)

    def _validate(self, question: str, raw: dict[str, Any]) -> Plan:
        sub = _PlanSubmission.model_validate(drop_nulls(raw))
        if len(sub.tasks) > self.max_tasks:
            raise ValueError(f"{len(sub.tasks)} tasks; at most {self.max_tasks} allowed")
        ids = [t.id for t in sub.tasks]
        dupes = sorted({i for i in ids if i and ids.count(i) > 1})
        if dupes:
            raise ValueError(f"task ids must be unique; repeated: {', '.join(dupes)}")
        renamed = _task_ids(sub.tasks)
        tasks = []
        for t in sub.tasks:
            t.id = renamed[t.id] if t.id in renamed else renamed[f"#{sub.tasks.index(t)}"]
            if t.template is not None:
                tpl = self.catalog.get(t.template)
                if tpl is None:
                    raise ValueError(f"task {t.id}: unknown template {t.template!r}; known: "
                                     f"{', '.join(sorted(self.catalog))}")
                tasks.append(TaskSpec(id=t.id, title=tpl.title, objective=tpl.description,
                                      tools=tpl.tools, template=tpl.name, budget=self.budget,
                                      reason="chosen by the model planner (catalog template)",
                                      inputs={"question": question}))
                continue
            unknown = sorted(set(t.tools) - set(self.tools))
            if unknown:
                raise ValueError(f"task {t.id}: unknown tools {unknown}; known: {self.tools}")
            tasks.append(TaskSpec(id=t.id, title=t.title, objective=t.objective or t.title,
                                  tools=t.tools or list(self.tools), budget=self.budget,
                                  reason="chosen by the model planner"))
        for sq in sub.subquestions:  # a grouping aid: a name it does not know is left out
            sq.tasks = [renamed[t] for t in sq.tasks if t in renamed]
        return Plan(question=question, mode="llm", tasks=tasks, subquestions=sub.subquestions)


def _task_ids(tasks: list[_PlannedTask]) -> dict[str, str]:
    """A valid, unique id for every task, keyed by the id the model gave (or ``#n`` for a
    task it gave none): lowercased, other characters as '-', else the template's name."""
    out: dict[str, str] = {}
    used: set[str] = set()
    for n, t in enumerate(tasks):
        base = re.sub(r"[^a-z0-9_.-]+", "-", t.id.lower()).strip("-._")[:48] or (
            t.template or f"task-{n + 1}")
        ident, k = base, 2
        while ident in used:
            ident, k = f"{base}-{k}", k + 1
        used.add(ident)
        out[t.id if t.id else f"#{n}"] = ident
    return out
