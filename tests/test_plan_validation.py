"""The LLM planner's validation of a submitted plan, tested directly: what is refused, with
which message, and what a valid plan becomes."""

from __future__ import annotations

from typing import Any

import pytest

from agentkit._agents._planner import LLMPlanner
from agentkit._catalog._load import load_catalog
from agentkit.testing import ScriptedModel, reply

TOOLS = ["read_file", "grep", "parse_config"]


def planner(max_tasks: int = 3) -> LLMPlanner:
    return LLMPlanner(ScriptedModel(lambda _: reply()), load_catalog(), TOOLS,
                      max_tasks=max_tasks)


def free(task_id: str, **extra: Any) -> dict[str, Any]:
    return {"id": task_id, "title": task_id.upper(), "objective": f"find {task_id}", **extra}


def test_duplicate_task_ids_are_refused_and_named() -> None:
    with pytest.raises(ValueError, match=r"task ids must be unique; repeated: a$"):
        planner()._validate("q", {"tasks": [free("a"), free("b"), free("a")]})


@pytest.mark.parametrize("cap", [1, 3, 5])
def test_the_task_cap_admits_exactly_max_tasks(cap: int) -> None:
    ok = planner(cap)._validate("q", {"tasks": [free(f"t{i}") for i in range(cap)]})
    assert [t.id for t in ok.tasks] == [f"t{i}" for i in range(cap)]
    with pytest.raises(ValueError, match=f"^{cap + 1} tasks; at most {cap} allowed$"):
        planner(cap)._validate("q", {"tasks": [free(f"t{i}") for i in range(cap + 1)]})


def test_a_template_task_takes_the_templates_tools_and_title() -> None:
    catalog = load_catalog()
    plan = planner()._validate("q", {"tasks": [{"id": "n", "title": "x", "template": "nccl-env"}]})
    (task,) = plan.tasks
    assert task.template == "nccl-env" and task.tools == catalog["nccl-env"].tools
    assert task.title == catalog["nccl-env"].title and "catalog template" in task.reason


def test_unknown_template_tools_and_missing_objective() -> None:
    with pytest.raises(ValueError, match=r"task n: unknown template 'nope'; known: .*nccl-env"):
        planner()._validate("q", {"tasks": [{"id": "n", "title": "x", "template": "nope"}]})
    with pytest.raises(ValueError, match=r"task a: unknown tools \['shell'\]"):
        planner()._validate("q", {"tasks": [free("a", tools=["grep", "shell"])]})
    # a free-form task without an objective is its title (a strict model sends null for it)
    plan = planner()._validate("q", {"tasks": [{"id": "a", "title": "A", "objective": None}]})
    assert plan.tasks[0].objective == "A"


def test_free_form_tasks_get_every_tool_unless_they_name_some() -> None:
    plan = planner()._validate("q", {"tasks": [free("a"), free("b", tools=["grep"])]})
    assert [t.tools for t in plan.tasks] == [TOOLS, ["grep"]]
    assert plan.mode == "llm" and plan.question == "q"


def test_subquestions_name_only_planned_tasks() -> None:
    raw = {"tasks": [free("a")], "subquestions": [{"text": "why?", "tasks": ["a", "zz"]}]}
    assert planner()._validate("q", raw).subquestions[0].tasks == ["a"]  # zz left out


def test_task_ids_are_made_valid_and_unique_and_subquestions_follow() -> None:
    raw = {"tasks": [free("Serving X"), free("serving-x"), {"title": "t", "template": "nccl-env"}],
           "subquestions": [{"text": "why?", "tasks": ["Serving X", "serving-x"]}]}
    plan = planner()._validate("q", raw)
    assert [t.id for t in plan.tasks] == ["serving-x", "serving-x-2", "nccl-env"]
    unnamed = planner()._validate("q", {"tasks": [{"title": "u", "objective": "o"}]})
    assert [t.id for t in unnamed.tasks] == ["task-1"]
    assert plan.subquestions[0].tasks == ["serving-x", "serving-x-2"]
    assert plan.tasks[2].inputs == {"question": "q"}  # a recipe gets the question it answers
    dupes = {"tasks": [free("a"), free("a")]}
    with pytest.raises(ValueError, match="task ids must be unique; repeated: a"):
        planner()._validate("q", dupes)


def test_shape_errors_are_refused() -> None:
    with pytest.raises(ValueError):
        planner()._validate("q", {"tasks": []})
    with pytest.raises(ValueError):
        planner()._validate("q", {"tasks": [free("a", extra_field=1)]})


def test_messages_list_every_name() -> None:
    with pytest.raises(ValueError, match=r"repeated: a, b$"):
        planner(4)._validate("q", {"tasks": [free("b"), free("a"), free("a"), free("b")]})
    with pytest.raises(ValueError) as err:
        planner()._validate("q", {"tasks": [{"id": "n", "title": "x", "template": "nope"}]})
    assert ", ".join(sorted(load_catalog())) in str(err.value)


def test_every_task_gets_the_planners_budget_and_says_who_chose_it() -> None:
    from agentkit._types import Budget

    budget = Budget(max_steps=3, max_tokens=1000, deadline_s=9.0)
    p = LLMPlanner(ScriptedModel(lambda _: reply()), load_catalog(), TOOLS, budget=budget)
    plan = p._validate("q", {"tasks": [{"id": "n", "title": "x", "template": "nccl-env"},
                                       free("a"), free("b")]})
    assert [t.id for t in plan.tasks] == ["n", "a", "b"]  # a template task does not end it
    assert all(t.budget == budget for t in plan.tasks)
    assert [t.reason for t in plan.tasks] == ["chosen by the model planner (catalog template)",
                                              "chosen by the model planner",
                                              "chosen by the model planner"]
