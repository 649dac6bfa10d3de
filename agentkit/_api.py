"""The facade: assembling an orchestrator from settings (catalog mode or LLM mode), and the
public :class:`Orchestrator`, which is the one-host orchestrator with its factories.

The factories live here, not on ``_orchestrator.Orchestrator``: they read settings, choose
the catalog or the LLM parts, and build fleets, all of which sit above the orchestrator, so
the class they build would otherwise import upward. The documented spellings
(``Orchestrator.from_env``, ``Orchestrator.catalog``, ``Orchestrator.fleet``) are kept by
making the public name this subclass: ``from agentkit import Orchestrator`` gets it."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import anyio

from ._agents._runner import DefaultRunner
from ._catalog._load import load_catalog
from ._catalog._planner import CatalogPlanner
from ._catalog._recipe import RecipeRunner
from ._catalog._synth import TemplateSynthesizer
from ._orchestrator import Limits
from ._orchestrator import Orchestrator as _Orchestrator
from ._sandbox._host import Host
from ._sandbox._sandbox import BUILTIN_TOOLS
from ._sandbox._tool import Tool
from ._settings import SettingsValues
from ._trace import Trace
from ._types import Answer, Budget

# The LLM stack (httpx, tenacity, the backends, planner and synthesizer prompts) is imported
# when a model is configured: catalog mode sends nothing, and `agentkit ask` without a model
# starts a third faster without it.
if TYPE_CHECKING:
    import httpx

    from ._fleet._outcome import Transport
    from ._fleet._run import FleetOrchestrator
    from ._llm._messages import Model


class Orchestrator(_Orchestrator):
    """Runs one investigation at a time over a :class:`Host`; build one with a factory.

    >>> orch = Orchestrator.catalog(Host.at("/"))
    >>> answer = anyio.run(orch.investigate, "Is NCCL tuned for this topology?")  # doctest: +SKIP
    """

    @classmethod
    def from_env(cls, root: str | os.PathLike[str] = "/", *, llm: Model | None = None,
                 http_client: httpx.AsyncClient | None = None,
                 tools: Sequence[Tool] = (), task_dirs: Sequence[str] = (),
                 trace: Trace | str | os.PathLike[str] | None = None,
                 config_file: str | None = None, catalog_only: bool = False,
                 **overrides: Any) -> Orchestrator:
        """Settings from the environment (``AGENTKIT_*``, config file) plus ``overrides``.

        Without a model configured (or with ``catalog_only``) it runs in catalog mode.
        Bring your own ``llm`` (anything with ``async complete(request)``) or your own
        ``http_client`` for the configured backend; add ``tools`` made with ``@tool``.
        ``overrides`` are settings (``base_url``, ``model`` (its name), ``concurrency``, …).

        >>> async with Orchestrator.from_env(root="snapshots/gpu-node-07") as orch:
        ...     answer = await orch.investigate("Is NCCL tuned?")  # doctest: +SKIP
        """
        from ._config import load_settings  # pydantic-settings: not on the CLI's path

        settings = load_settings(config_file, overrides)
        settings.task_dirs = [*settings.task_dirs, *map(str, task_dirs)]
        if not isinstance(trace, Trace):
            trace = Trace(trace) if trace is not None else None
        extra = {t.name: t for t in tools}
        all_tools = {**BUILTIN_TOOLS, **extra}
        return build_orchestrator(settings, Host.at(root), trace=trace, model=llm,
                                  catalog_only=catalog_only, tools=all_tools,
                                  http_client=http_client)

    @classmethod
    def catalog(cls, host: Host, *, trace: Trace | None = None,
                task_dirs: list[str] | None = None) -> Orchestrator:
        """An orchestrator that needs no model: catalog planner, recipes, template answer."""
        cat = load_catalog(task_dirs)
        return cls(CatalogPlanner(cat), RecipeRunner(cat), TemplateSynthesizer(), host,
                   trace=trace, catalog=cat)

    @classmethod
    def fleet(cls, transport: Transport, *, hosts: Sequence[str] | None = None,
              trace: Trace | None = None) -> FleetOrchestrator:
        """A catalog orchestrator that asks every host of a fleet and folds their answers.

        >>> from agentkit import SSHTransport
        >>> orch = Orchestrator.fleet(SSHTransport(concurrency=32), hosts=["gpu01", "gpu02"])
        >>> anyio.run(orch.investigate, "Which vLLM version?").fleet.recap  # doctest: +SKIP
        'ok=2 differs=0'
        """
        from ._fleet._run import FleetOrchestrator

        # the host is not read: each host's own agentkit reads its own
        return FleetOrchestrator(cls.catalog(Host.at("/"), trace=trace), transport, hosts)


def make_model(settings: SettingsValues, client: httpx.AsyncClient | None = None) -> Model:
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


def build_orchestrator(settings: SettingsValues, host: Host, *, trace: Trace | None = None,
                       model: Model | None = None, catalog_only: bool = False,
                       tools: dict[str, Tool] | None = None,
                       http_client: httpx.AsyncClient | None = None) -> Orchestrator:
    orch = _build(settings, host, trace, model, catalog_only, tools, http_client)
    orch.config = {"task_dirs": list(settings.task_dirs), "max_tasks": settings.max_tasks,
                   "max_steps": settings.max_steps, "task_deadline_s": settings.task_deadline_s,
                   "concurrency": settings.concurrency, "model": settings.model,
                   "provider": settings.provider}
    return orch


def _build(settings: SettingsValues, host: Host, trace: Trace | None, model: Model | None,
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
    from ._agents._planner import LLMPlanner
    from ._agents._synthesizer import LLMSynthesizer
    from ._llm._context import FittingModel
    from ._llm._textcalls import TextCallsModel
    from ._llm._traced import TracedModel
    from ._llm._truncation import CompletingModel

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
