"""``agentkit tools list`` and ``agentkit tools call NAME --args JSON``."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from ._common import add_root, host_from
from ._errors import CLIError


def register(sub: Any) -> None:
    p = sub.add_parser("tools", help="list the sandbox tools or call one directly")
    tsub = p.add_subparsers(dest="tools_command", required=True, metavar="ACTION")
    lp = tsub.add_parser("list", help="tools with their argument schemas")
    lp.add_argument("--json", action="store_true", help="the tools and their schemas as JSON")
    lp.set_defaults(func=list_tools)
    cp = tsub.add_parser("call", help="call one tool; its result as JSON on stdout")
    cp.add_argument("name", help="the tool's name (see agentkit tools list)")
    cp.add_argument("--args", default="{}", help="arguments as a JSON object")
    add_root(cp)
    cp.set_defaults(func=call_tool)


def list_tools(args: argparse.Namespace) -> int:
    from .._sandbox._host import sandbox_setting
    from .._sandbox._kernel import KernelUnavailable, layer
    from .._sandbox._sandbox import BUILTIN_TOOLS

    try:
        setting = sandbox_setting(os.environ.get("AGENTKIT_SANDBOX"))
        mode = layer(setting)
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    except KernelUnavailable as exc:  # required and missing: say so, commands will refuse
        mode = None
        print(f"sandbox: commands refused ({exc})")
    if mode is not None and not args.json:
        print(f"sandbox: {mode.mode} ({mode.detail})\n")
    if args.json:
        out = [{"name": t.name, "description": t.description, "parameters": t.parameters}
               for t in BUILTIN_TOOLS.values()]
        print(json.dumps(out, indent=2))
        return 0
    for t in BUILTIN_TOOLS.values():
        params = ", ".join(
            f"{k}{'' if k in t.parameters.get('required', []) else '?'}"
            for k in t.parameters.get("properties", {}))
        print(f"{t.name}({params})\n    {t.description}")
    return 0


def call_tool(args: argparse.Namespace) -> int:
    import anyio

    from .._sandbox._sandbox import BUILTIN_TOOLS, Sandbox

    if args.name not in BUILTIN_TOOLS:
        raise CLIError(f"no tool named {args.name!r}; try: {', '.join(BUILTIN_TOOLS)}")
    try:
        tool_args = json.loads(args.args)
    except json.JSONDecodeError as exc:
        raise CLIError(f"--args is not valid JSON ({exc.msg} at column {exc.colno}); give an "
                       "object such as '{\"path\": \"/etc/nccl.conf\"}'") from None
    if not isinstance(tool_args, dict):
        raise CLIError("--args must be a JSON object, e.g. '{\"path\": \"/etc/nccl.conf\"}'")
    box = Sandbox(host_from(args), task_id="cli")
    result = anyio.run(box.call, args.name, tool_args)
    if not result.ok:
        print(f"agentkit: {args.name} refused: {result.error}", file=sys.stderr)
        return 5
    out = {"tool": args.name, "args": tool_args, "data": result.data,
           "evidence": [e.model_dump() for e in result.evidence]}
    from .._render import json_safe

    print(json_safe(json.dumps(out, indent=2, ensure_ascii=False, default=str)))
    return 0
