"""``agentkit mcp``: serve agentkit to MCP clients (stdio, or streamable HTTP)."""

from __future__ import annotations

import argparse
from typing import Any

from ._common import add_root


def register(sub: Any) -> None:
    from ._fleet_cmd import add_ssh

    p = sub.add_parser("mcp", help="run an MCP server (stdio; --http PORT for streamable HTTP)")
    add_root(p)
    p.add_argument("--allow-root", action="append", default=None, metavar="DIR",
                   help="another directory clients may name as root (repeatable); --root "
                   "is always allowed")
    p.add_argument("--http", type=int, metavar="PORT", help="serve streamable HTTP on "
                   "127.0.0.1:PORT instead of stdio")
    p.add_argument("--tasks-dir", action="append", default=[], metavar="DIR",
                   help="extra task template directory (repeatable)")
    p.add_argument("--catalog", action="store_true", help="catalog mode even with a model")
    g = p.add_argument_group("fleets (off unless allowed here: a client names a subset)")
    g.add_argument("--fleet-dir", action="append", default=[], metavar="DIR",
                   help="a snapshot fleet directory clients may ask about (repeatable)")
    g.add_argument("--fleet-hosts", action="append", default=[], metavar="RANGE",
                   help="SSH hosts clients may ask about: gpu[01-64], a list, @FILE or "
                   "ssh-config (repeatable); host keys must be in known_hosts")
    add_ssh(g)
    p.set_defaults(func=run)


def _policy(args: argparse.Namespace) -> Any:
    import os

    from .._fleet._names import InventoryError
    from .._mcp_fleet import policy_from
    from ._errors import CLIError

    for d in args.fleet_dir:
        if not os.path.isdir(d):
            raise CLIError(f"--fleet-dir {d!r} is not a directory: give a directory of "
                           "per-host snapshots (DIR/<host>/)")
    try:
        return policy_from(args.fleet_dir, args.fleet_hosts, config=args.ssh_config,
                           known_hosts=args.known_hosts, remote_command=args.remote_command)
    except InventoryError as exc:
        raise CLIError(f"--fleet-hosts: {exc}") from None


def run(args: argparse.Namespace) -> int:
    from ._common import host_from
    from ._errors import CLIError

    try:
        from .._mcp import build_server
    except ImportError as exc:
        if (exc.name or "").split(".")[0] != "mcp":
            raise
        raise CLIError("the MCP server needs the mcp extra, which is not installed: "
                       "pip install 'agentkit[mcp]'") from None

    host_from(args)  # a bad --root fails here, with its one-line error
    server = build_server(args.root, allowed_roots=args.allow_root, task_dirs=args.tasks_dir,
                          fleet=_policy(args), catalog_only=args.catalog)
    if args.http:
        server.run("streamable-http", host="127.0.0.1", port=args.http)
    else:
        server.run("stdio")
    return 0
