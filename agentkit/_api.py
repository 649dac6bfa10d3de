"""Assembling an orchestrator from settings: catalog mode or LLM mode."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import anyio

from ._catalog._planner import CatalogPlanner
from ._catalog._recipe import RecipeRunner
from ._catalog._synth import TemplateSynthesizer
from ._catalog._template import load_catalog
from ._config import Settings
from ._host import Host
from ._orchestrator import Limits, Orchestrator
from ._runner import DefaultRunner
from ._sandbox._sandbox import BUILTIN_TOOLS
from ._tool import Tool
from ._trace import Trace
from ._types import Answer, Budget

# The LLM stack (httpx, tenacity, the backends, planner and synthesizer prompts) is imported
# when a model is configured: catalog mode sends nothing, and `agentkit ask` without a model
# starts a third faster without it.
if TYPE_CHECKING:
    import httpx

    from ._llm._messages import Model


def make_model(settings: Settings, client: httpx.AsyncClient | None = None) -> Model:
    """The configured backend (OpenAI-compatible, or Anthropic Messages)."""
    from ._llm._limiter import RequestLimiter
    from ._llm._openai import OpenAIChatModel
    from ._llm._retry import RetryPolicy

    assert settings.base_url and settings.model
    retry = RetryPolicy(max_attempts=settings.max_retries)
    limiter = RequestLimiter(settings.rps, settings.max_in_flight)
    if settings.provider == "anthropic":
        from ._llm._anthropic import AnthropicModel

        return AnthropicModel(settings.base_url, settings.model, api_key=settings.api_key(),
                              timeout_s=settings.timeout_s, retry=retry, client=client,
                              limiter=limiter)
    return OpenAIChatModel(settings.base_url, settings.model, api_key=settings.api_key(),
                           timeout_s=settings.timeout_s, retry=retry, client=client,
                           limiter=limiter, stream=settings.stream)


def build_orchestrator(settings: Settings, host: Host, *, trace: Trace | None = None,
                       model: Model | None = None, catalog_only: bool = False,
                       tools: dict[str, Tool] | None = None,
                       http_client: httpx.AsyncClient | None = None) -> Orchestrator:
    orch = _build(settings, host, trace, model, catalog_only, tools, http_client)
    orch.config = {"task_dirs": list(settings.task_dirs), "max_tasks": settings.max_tasks,
                   "max_steps": settings.max_steps, "task_deadline_s": settings.task_deadline_s,
                   "concurrency": settings.concurrency, "model": settings.model,
                   "provider": settings.provider}
    return orch


def _build(settings: Settings, host: Host, trace: Trace | None, model: Model | None,
           catalog_only: bool, tools: dict[str, Tool] | None,
           http_client: httpx.AsyncClient | None) -> Orchestrator:
    trace = trace or Trace.disabled()
    catalog = load_catalog(settings.task_dirs)
    recipes = RecipeRunner(catalog)
    all_tools = dict(tools if tools is not None else BUILTIN_TOOLS)
    if model is None and settings.llm_configured and not catalog_only:
        model = make_model(settings, http_client)
    if model is None or catalog_only:
        return Orchestrator(CatalogPlanner(catalog, max_tasks=max(settings.max_tasks, 24)),
                            DefaultRunner(None, recipes), TemplateSynthesizer(), host,
                            trace=trace, concurrency=settings.concurrency, tools=all_tools,
                            catalog=catalog, mode="catalog")
    from ._llm._context import FittingModel
    from ._llm._textcalls import TextCallsModel
    from ._llm._traced import TracedModel
    from ._llm._truncation import CompletingModel
    from ._planner import LLMPlanner
    from ._synthesizer import LLMSynthesizer

    # a request too long is retried smaller, a reply cut short with a larger budget, and a
    # call written as JSON in the text is read as a call
    traced = TracedModel(TextCallsModel(CompletingModel(FittingModel(model))), trace)
    budget = Budget(max_steps=settings.max_steps, deadline_s=settings.task_deadline_s)
    planner = LLMPlanner(traced, catalog, sorted(all_tools), max_tasks=settings.max_tasks,
                         budget=budget, fallback=CatalogPlanner(catalog, max_tasks=max(
                             settings.max_tasks, 24)))
    return Orchestrator(planner, DefaultRunner(traced, recipes), LLMSynthesizer(traced), host,
                        trace=trace, concurrency=settings.concurrency, tools=all_tools,
                        catalog=catalog, model=model, mode="llm")


def investigate_sync(question: str, root: str | os.PathLike[str] = "/", *,
                     tasks: Sequence[str] | None = None, limits: Limits | None = None,
                     **kwargs: Any) -> Answer:
    """Investigate from synchronous code (runs its own event loop).

    >>> answer = investigate_sync("Is NCCL tuned?", root="snapshots/gpu-node-07")  # doctest: +SKIP
    >>> answer.mode  # doctest: +SKIP
    'catalog'
    """

    async def go() -> Answer:
        async with Orchestrator.from_env(root, **kwargs) as orch:
            return await orch.investigate(question, tasks=tasks, limits=limits)

    return anyio.run(go)
