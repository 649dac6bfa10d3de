"""``agentkit schema``: the investigate tool's declaration for other runtimes."""

from __future__ import annotations

import argparse
import json
from typing import Any


def register(sub: Any) -> None:
    p = sub.add_parser("schema", help="print the `investigate` tool schema for function calling")
    p.add_argument("--format", choices=["openai", "anthropic", "mcp"], default="openai",
                   help="whose function-calling shape: openai (default), anthropic or mcp")
    p.add_argument("--strict", action="store_true",
                   help="strict-mode shape: every property required, optional ones nullable")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from .._schema import investigate_tool

    print(json.dumps(investigate_tool(args.format, strict=args.strict), indent=2))
    return 0
