"""``investigate`` as one tool for other agent runtimes: its schema in OpenAI, Anthropic
and MCP shapes, and a handler that validates arguments and returns the cited answer."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ._api import Orchestrator
from ._llm._schemas import drop_nulls
from ._orchestrator import UnknownTask
from ._render import to_markdown

DESCRIPTION = (
    "Investigate a question about an ML serving host (GPUs, NCCL, vLLM/SGLang units, model "
    "configs, KV cache, attention backends) by reading its files, configs, command outputs and "
    "GPU readings, read-only. Returns a bottom line, sections, an optional comparison table and "
    "a citation (file:line, command, config key) for every claim."
)


class InvestigateArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    question: str = Field(min_length=1, max_length=8000,
                          description="The question, in plain words.")
    root: str | None = Field(None, description="Directory standing for the host's / (a "
                             "snapshot); default: the configured root.")
    tasks: list[str] | None = Field(None, description="Catalog task names to run instead of "
                                    "planning (see list_tasks).")


def _parameters(strict_shape: bool = False, task_dirs: Sequence[str] = ()) -> dict[str, Any]:
    """The arguments' schema: task names as an enum of the catalog's templates; in strict
    shape (OpenAI strict function tools, Anthropic strict tool use) every property required,
    ``root`` and ``tasks`` nullable, so a model passes null rather than guessing them."""
    from ._catalog._load import load_catalog
    from ._llm._schemas import strict

    schema = InvestigateArgs.model_json_schema()
    schema["properties"]["tasks"] = {
        "anyOf": [{"type": "array", "items": {"type": "string",
                                              "enum": sorted(load_catalog(list(task_dirs)))}},
                  {"type": "null"}],
        "description": "Catalog task names to run instead of planning (see list_tasks)."}
    if strict_shape:
        shaped = strict(schema)
        for name, prop in shaped["properties"].items():  # descriptions help the model
            desc = InvestigateArgs.model_fields[name].description
            if desc:
                prop["description"] = desc
        return shaped
    schema.pop("title", None)
    for prop in schema["properties"].values():
        prop.pop("title", None)
        if "anyOf" in prop:  # plain shapes travel better across runtimes
            kinds = [a for a in prop.pop("anyOf") if a.get("type") != "null"]
            prop.update(kinds[0])
            prop.pop("default", None)
    return schema


def investigate_tool(format: Literal["openai", "anthropic", "mcp"] = "openai", *,
                     strict: bool = False) -> dict[str, Any]:
    """The ``investigate`` tool's declaration for function calling; ``strict`` gives the
    strict-mode shape (and ``"strict": true`` for OpenAI).

    >>> investigate_tool("anthropic")["input_schema"]["required"]
    ['question']
    >>> investigate_tool("openai", strict=True)["function"]["parameters"]["required"]
    ['question', 'root', 'tasks']
    """
    params = _parameters(strict)
    if format == "openai":
        fn: dict[str, Any] = {"name": "investigate", "description": DESCRIPTION,
                              "parameters": params}
        if strict:
            fn["strict"] = True
        return {"type": "function", "function": fn}
    if format == "anthropic":
        out: dict[str, Any] = {"name": "investigate", "description": DESCRIPTION,
                               "input_schema": params}
        if strict:
            out["strict"] = True
        return out
    return {"name": "investigate", "description": DESCRIPTION, "inputSchema": params}


def _inside(path: str, roots: Sequence[str]) -> bool:
    real = os.path.realpath(path)
    return any(real == os.path.realpath(r) or real.startswith(os.path.realpath(r).rstrip("/")
                                                             + "/") for r in roots)


async def handle_investigate(arguments: dict[str, Any] | str, *, root: str = "/",
                             allowed_roots: Sequence[str] | None = None,
                             **from_env: Any) -> dict[str, Any]:
    """Run one ``investigate`` tool call; returns ``{"answer", "markdown"}`` or ``{"error"}``.

    A ``root`` in the arguments must lie inside ``root`` or one of ``allowed_roots``:
    the calling model chooses the question, the embedding program chooses what may be read.

    >>> import anyio
    >>> anyio.run(lambda: handle_investigate({"question": ""}))["error"][:30]
    'invalid arguments for investig'
    """
    try:
        raw = json.loads(arguments) if isinstance(arguments, str) else arguments
        args = InvestigateArgs.model_validate(drop_nulls(raw) if isinstance(raw, dict) else raw)
    except (ValueError, ValidationError) as exc:
        return {"error": f"invalid arguments for investigate: {exc}"}
    chosen = args.root or root
    # the embedding program's own ``root`` is always allowed: ``allowed_roots`` adds to it
    allowed = [root, *(r for r in allowed_roots or () if r != root)]
    if not _inside(chosen, allowed):
        return {"error": f"root {chosen!r} is not allowed here; allowed: {allowed}"}
    try:
        async with Orchestrator.from_env(chosen, **from_env) as orch:
            answer = await orch.investigate(args.question, tasks=args.tasks)
    except (UnknownTask, FileNotFoundError) as exc:
        return {"error": str(exc)}
    except Exception as exc:  # the caller's loop must get an answer, not a crash
        return {"error": f"{type(exc).__name__}: {exc}"}
    return {"answer": answer.model_dump(mode="json"), "markdown": to_markdown(answer)}
