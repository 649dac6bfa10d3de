"""Options and helpers shared by the commands."""

from __future__ import annotations

import argparse
from typing import Any

from ._errors import CLIError


def add_root(p: argparse.ArgumentParser) -> None:
    p.add_argument("--root", default="/", metavar="DIR",
                   help="directory that stands for the host's / (a snapshot); default: /")
    p.add_argument("--manifests", action="append", default=None, metavar="DIR",
                   help="a directory (a host path) holding Kubernetes manifests or Compose "
                        "files, read besides the usual places (repeatable)")
    p.add_argument("--sandbox", choices=("auto", "kernel", "allowlist"), default=None,
                   help="commands under bubblewrap: auto (where it works, else warn), kernel "
                        "(refuse without it), allowlist (never); env AGENTKIT_SANDBOX")


def add_llm(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("model (optional: without one, catalog mode answers)")
    g.add_argument("--base-url", help="OpenAI-compatible or Anthropic endpoint "
                   "(env AGENTKIT_BASE_URL)")
    g.add_argument("--model", help="model name (env AGENTKIT_MODEL)")
    g.add_argument("--provider", choices=["openai", "anthropic"], help="wire protocol")
    g.add_argument("--api-key-env", metavar="VAR", help="variable that holds the API key")
    g.add_argument("--config", metavar="FILE", help="TOML config file")
    g.add_argument("--catalog", action="store_true", help="catalog mode even with a model")
    g.add_argument("--tasks-dir", action="append", default=None, metavar="DIR",
                   help="extra task template directory (repeatable)")


def settings_from(args: argparse.Namespace) -> Any:
    # the same layers and checks as agentkit.load_settings, without importing
    # pydantic-settings (tests/test_settings_read.py proves the two equal)
    from .._settings import ConfigError, read_settings

    overrides = {k: getattr(args, k, None) for k in
                 ("base_url", "model", "provider", "api_key_env", "max_tasks", "concurrency")}
    if getattr(args, "tasks_dir", None):
        overrides["task_dirs"] = args.tasks_dir
    try:
        return read_settings(getattr(args, "config", None), overrides)
    except ConfigError as exc:
        raise CLIError(str(exc)) from None


def host_from(args: argparse.Namespace) -> Any:
    from .._sandbox._captures import SnapshotError
    from .._sandbox._host import Host

    chosen = {"sandbox": args.sandbox} if getattr(args, "sandbox", None) else {}
    try:
        host = Host.at(args.root, manifest_dirs=tuple(getattr(args, "manifests", None) or ()),
                       **chosen)
        _ = host.snapshot
    except (FileNotFoundError, ValueError) as exc:
        raise CLIError(str(exc)) from None
    except SnapshotError as exc:
        raise CLIError(str(exc)) from None
    return host


def default_trace_path() -> str:
    """A new trace file in the trace directory (``agentkit._trace._files``), or a CLIError
    saying why there can be none."""
    from .._trace._files import TraceDirError, new_trace_path

    try:
        return new_trace_path()
    except TraceDirError as exc:
        raise CLIError(str(exc)) from None
