"""The ``agentkit`` command line. Heavy imports happen inside each command, so
``agentkit --help`` and ``agentkit tools list`` start fast."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ._errors import EXIT_CODES, CLIError

__all__ = ["main"]


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("agentkit")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown (not installed)"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="agentkit",
        description="Answers questions about ML serving deployments by finding out.",
        epilog="Exit codes: " + "; ".join(f"{c} {w}" for c, w in EXIT_CODES.items()))
    p.add_argument("--version", action="version", version=f"agentkit {_version()}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    from . import (
        _ask,
        _catalog_cmd,
        _mcp_cmd,
        _replay_cmd,
        _schema_cmd,
        _snapshot_cmd,
        _tools_cmd,
    )

    _ask.register(sub)
    _tools_cmd.register(sub)
    _catalog_cmd.register(sub)
    _snapshot_cmd.register(sub)
    _schema_cmd.register(sub)
    _mcp_cmd.register(sub)
    _replay_cmd.register(sub)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except CLIError as exc:
        print(f"agentkit: {exc}", file=sys.stderr)
        return exc.code
    except KeyboardInterrupt:
        print("agentkit: interrupted; the trace was closed", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
