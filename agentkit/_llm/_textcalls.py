"""Tool calls written in the message text, as many local models write them.

A server without a tool-call parser for its model (or a model that ignores ``tools``) hands
the call back as text: a JSON object in a fenced block, with prose around it, or inside
``<tool_call>…</tool_call>`` tags (the Hermes-style chat templates' form, ``{"name": …,
"arguments": …}``). When a reply carries no tool call, such text is read as one: an object
naming an offered tool with its arguments is that call; a bare object is the call of the one
offered tool whose schema it fits (all its required keys, no key the schema does not know),
and of none when it fits no tool or several. The call is then validated like any other.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

from ._messages import Model, ModelRequest, ModelResponse, ToolCallRequest, ToolSpec

_THINK = re.compile(r"<think>.*?</think>", re.S | re.I)  # reasoning some models inline
_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.S)
_FENCED = re.compile(r"```[a-zA-Z0-9_-]*\s*\n(.*?)```", re.S)


def calls_in_text(text: str, tools: list[ToolSpec]) -> list[ToolCallRequest]:
    """The tool calls ``text`` writes out, in order; [] when it writes none."""
    text = _THINK.sub("", text)
    blocks = _TAGGED.findall(text) or _FENCED.findall(text) or [text]
    calls: list[ToolCallRequest] = []
    for block in blocks:
        for obj in _objects(block):
            call = _as_call(obj, tools)
            if call is not None:
                name, args = call
                calls.append(ToolCallRequest(f"text_call_{len(calls)}", name,
                                             json.dumps(args)))
    return calls


def _objects(text: str) -> list[dict[str, Any]]:
    """Every top-level JSON object in ``text``, prose around them skipped."""
    out, decoder, i = [], json.JSONDecoder(), 0
    while (i := text.find("{", i)) != -1:
        try:
            obj, end = decoder.raw_decode(text, i)
        except ValueError:
            i += 1
            continue
        if isinstance(obj, dict):
            out.append(obj)
        i = end
    return out


def _as_call(obj: dict[str, Any], tools: list[ToolSpec]) -> tuple[str, dict[str, Any]] | None:
    by_name = {t.name: t for t in tools}
    name = obj.get("name")
    args = obj.get("arguments", obj.get("parameters"))
    if isinstance(args, str):  # some templates write the arguments as a JSON string
        try:
            args = json.loads(args)
        except ValueError:
            args = None
    if isinstance(name, str) and name in by_name and isinstance(args, dict):
        return name, args
    fits = [t.name for t in tools if _fits(obj, t.parameters)]
    return (fits[0], obj) if len(fits) == 1 else None


def _fits(obj: dict[str, Any], schema: dict[str, Any]) -> bool:
    props = schema.get("properties")
    if not isinstance(props, dict) or not obj:
        return False
    required = [r for r in schema.get("required", []) if r in props]
    # strict schemas list every property as required, nullable ones included: a key the
    # object leaves out must at least allow null there
    missing = [r for r in required if r not in obj and not _nullable(props[r])]
    return not missing and set(obj) <= set(props)


def _nullable(prop: Any) -> bool:
    if not isinstance(prop, dict):
        return False
    kinds = prop.get("type")
    if kinds == "null" or (isinstance(kinds, list) and "null" in kinds):
        return True
    return any(_nullable(p) for p in prop.get("anyOf", []))


class TextCallsModel:
    """Wraps a model: a reply without tool calls whose text writes one gets it as a call."""

    def __init__(self, inner: Model) -> None:
        self.inner = inner

    async def complete(self, request: ModelRequest) -> ModelResponse:
        resp = await self.inner.complete(request)
        if resp.tool_calls or not request.tools or not resp.text:
            return resp
        calls = calls_in_text(resp.text, request.tools)
        return replace(resp, tool_calls=calls) if calls else resp

    async def aclose(self) -> None:
        closer = getattr(self.inner, "aclose", None)
        if closer is not None:
            await closer()
