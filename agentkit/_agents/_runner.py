"""The default task runner: catalog tasks run their recipe; free-form tasks get an LLM
subagent. Either way the task works through its own sandbox."""

from __future__ import annotations

from .._catalog._recipe import RecipeRunner
from .._llm._messages import Model
from .._sandbox._sandbox import Sandbox
from .._types import TaskResult, TaskSpec
from ._subagent import Subagent


class DefaultRunner:
    def __init__(self, model: Model | None, recipes: RecipeRunner | None = None, *,
                 max_repairs: int = 2) -> None:
        self.model = model
        self.recipes = recipes
        self.max_repairs = max_repairs

    async def run(self, spec: TaskSpec, box: Sandbox) -> TaskResult:
        if spec.template is not None:
            if self.recipes is None:
                raise RuntimeError(f"task {spec.id} names template {spec.template} but no "
                                   "catalog is loaded")
            return await self.recipes.run(spec, box)
        if self.model is None:
            raise RuntimeError(f"task {spec.id} needs a model and none is configured")
        return await Subagent(self.model, box, spec, max_repairs=self.max_repairs).run()
