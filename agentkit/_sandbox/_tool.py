"""Tools as typed functions: the JSON schema a model sees comes from the signature.

A tool is an ``async`` (or plain) function whose first parameter is a :class:`ToolContext`
and whose other parameters are typed; :func:`tool` turns it into a :class:`Tool`.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, get_type_hints

import anyio.to_thread
from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from .._llm._messages import ToolSpec
from .._types import Evidence, EvidenceKind
from ._host import Host
from ._redact import redact


class ToolError(Exception):
    """A refusal or bad input: the message says what was wrong and what to do instead.

    >>> str(ToolError("no such file: /etc/x"))
    'no such file: /etc/x'
    """


@dataclass
class ToolOutput:
    """What a tool returns: JSON-able data and the evidence it observed.

    >>> ToolOutput(data={"ok": True}).evidence
    []
    """

    data: dict[str, Any]
    evidence: list[Evidence] = field(default_factory=list)
    # what this call held back or could not vouch for (``_withheld.notice``): the sandbox
    # returns it under the data key ``withheld``
    withheld: list[str] = field(default_factory=list)


@dataclass
class ToolContext:
    """What a tool may use: the host (root, snapshot captures) and an evidence helper.

    >>> ctx = ToolContext(host=Host.at("/"))
    >>> ctx.evidence("derived", "disk nvme0n1", "SAMSUNG", "SAMSUNG").kind
    'derived'
    """

    host: Host

    def evidence(self, kind: EvidenceKind, locator: str, excerpt: str, content: str) -> Evidence:
        return Evidence.of(kind, redact(locator), redact(clip(excerpt)), content)


def clip(text: str, limit: int = 400) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


class _Args(BaseModel):
    # Built on first use, not at import: a validator costs ~10 ms to build, there are a few
    # dozen tools, and one investigation calls only some of them.
    model_config = ConfigDict(extra="forbid", defer_build=True)


@dataclass
class Tool:
    """A callable tool with a validated argument model and a JSON schema (make one with
    :func:`tool`).

    >>> from agentkit._sandbox._sandbox import BUILTIN_TOOLS
    >>> BUILTIN_TOOLS["read_file"].parameters["required"]
    ['path']
    """

    name: str
    description: str
    args_model: type[BaseModel]
    fn: Callable[..., Any]
    read_only: bool = True
    _schema: dict[str, Any] | None = None
    _spec: ToolSpec | None = None

    def __post_init__(self) -> None:
        self.is_async = inspect.iscoroutinefunction(self.fn)  # asked on every call: once

    def spec(self) -> ToolSpec:
        """The declaration a model sees (one shared object, encoded once per backend)."""
        if self._spec is None:
            self._spec = ToolSpec(self.name, self.description, self.parameters)
        return self._spec

    @property
    def parameters(self) -> dict[str, Any]:
        if self._schema is None:
            schema = self.args_model.model_json_schema()
            schema.pop("title", None)
            for prop in schema.get("properties", {}).values():
                prop.pop("title", None)
            self._schema = schema
        return self._schema

    def validate(self, args: dict[str, Any]) -> BaseModel:
        try:
            return self.args_model.model_validate(args)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or '(arguments)'}: {e['msg']}"
                for e in exc.errors()
            )
            raise ToolError(
                f"invalid arguments for {self.name}: {problems}. "
                f"Expected: {list(self.parameters.get('properties', {}))}"
            ) from None

    async def run(self, ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
        parsed = self.validate(args)
        kwargs = {k: getattr(parsed, k) for k in type(parsed).model_fields}
        if self.is_async:
            out = await self.fn(ctx, **kwargs)
        else:
            out = await anyio.to_thread.run_sync(lambda: self.fn(ctx, **kwargs))
        if not isinstance(out, ToolOutput):
            out = ToolOutput(data=out if isinstance(out, dict) else {"result": out})
        if not out.evidence:
            # A user's tool that says nothing about evidence still gets one citable record
            # of what it returned, so its results can back claims like any other.
            shown = json.dumps(out.data, sort_keys=True, default=str)
            ev = ctx.evidence("derived", f"tool {self.name} {json.dumps(args, sort_keys=True)}",
                              shown, shown)
            out = ToolOutput(data={**out.data, "evidence_id": ev.id}, evidence=[ev])
        return out


def tool(
    fn: Callable[..., Awaitable[Any]] | Callable[..., Any] | None = None,
    *,
    name: str | None = None,
) -> Any:
    """Turn a typed function into a :class:`Tool`.

    >>> from agentkit import tool, ToolContext
    >>> @tool
    ... def disk_model(ctx: ToolContext, device: str) -> dict:
    ...     '''Model name of a block device.'''
    ...     return {"device": device}
    >>> disk_model.parameters["required"]
    ['device']
    """

    # A tool defined inside a function (with postponed annotations) names types that only
    # the defining scope knows: resolve its annotations there too.
    frame = inspect.currentframe()
    caller = dict(frame.f_back.f_locals) if frame and frame.f_back else {}

    def wrap(f: Callable[..., Any]) -> Tool:
        hints = get_type_hints(f, localns=caller, include_extras=True)
        params = list(inspect.signature(f).parameters.values())[1:]
        fields: dict[str, Any] = {}
        for p in params:
            default = ... if p.default is inspect.Parameter.empty else p.default
            fields[p.name] = (hints.get(p.name, Any), default)
        model = create_model(f"{f.__name__}_args", __base__=_Args, **fields)
        doc = inspect.getdoc(f) or ""
        return Tool(
            name=name or f.__name__,
            description=doc.split("\n\n")[0].replace("\n", " "),
            args_model=model,
            fn=f,
        )

    return wrap(fn) if fn is not None else wrap
