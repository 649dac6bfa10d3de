"""``agentkit tasks list`` and ``agentkit tasks show NAME``."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ._errors import CLIError


def register(sub: Any) -> None:
    p = sub.add_parser("tasks", help="the task catalog (what catalog mode can answer)")
    p.add_argument("--tasks-dir", action="append", default=None, metavar="DIR")
    tsub = p.add_subparsers(dest="tasks_command", required=True, metavar="ACTION")
    tsub.add_parser("list", help="one line per task template").set_defaults(func=list_tasks)
    sp = tsub.add_parser("show", help="a template in full")
    sp.add_argument("name")
    sp.set_defaults(func=show_task)


def _catalog(args: argparse.Namespace) -> Any:
    from .._catalog._template import TemplateError, load_catalog

    try:
        return load_catalog(args.tasks_dir)
    except TemplateError as exc:
        raise CLIError(str(exc)) from None


def list_tasks(args: argparse.Namespace) -> int:
    cat = _catalog(args)
    width = max(len(n) for n in cat)
    for name in sorted(cat):
        print(f"{name:<{width}}  {cat[name].title}")
    return 0


def show_task(args: argparse.Namespace) -> int:
    cat = _catalog(args)
    tpl = cat.get(args.name)
    if tpl is None:
        raise CLIError(f"no task template {args.name!r}; `agentkit tasks list` shows them all")
    print(f"# {tpl.name}: {tpl.title}\n# from {tpl.source}\n")
    print(Path(tpl.source).read_text(encoding="utf-8"))
    return 0
