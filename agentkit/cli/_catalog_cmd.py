"""``agentkit tasks list`` and ``agentkit tasks show NAME``."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ._errors import CLIError


def register(sub: Any) -> None:
    p = sub.add_parser("tasks", help="the task catalog (what catalog mode can answer)")
    p.add_argument("--tasks-dir", action="append", default=None, metavar="DIR",
                   help="extra task template directory (repeatable)")
    tsub = p.add_subparsers(dest="tasks_command", required=True, metavar="ACTION")
    lp = tsub.add_parser("list", help="one line per task template")
    lp.set_defaults(func=list_tasks)
    cp = tsub.add_parser("check", help="validate templates (the bundled ones and DIRs): "
                         "fields, Jinja, expressions, functions, tools; exit 2 on a mistake")
    cp.add_argument("dirs", nargs="*", metavar="DIR",
                    help="template directories to check besides the bundled ones")
    cp.set_defaults(func=check_tasks)
    sp = tsub.add_parser("show", help="a template in full")
    sp.add_argument("name", help="the template's name (see agentkit tasks list)")
    sp.set_defaults(func=show_task)
    for sub_p in (lp, cp, sp):  # also after the action: `agentkit tasks list --tasks-dir D`
        sub_p.add_argument("--tasks-dir", action="append", default=argparse.SUPPRESS,
                           metavar="DIR", help="extra task template directory (repeatable)")


def _catalog(args: argparse.Namespace) -> Any:
    from .._catalog._load import load_catalog
    from .._catalog._template import TemplateError

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


def check_tasks(args: argparse.Namespace) -> int:
    from .._catalog._load import check_tools, load_catalog
    from .._catalog._template import TemplateError
    from .._sandbox._sandbox import BUILTIN_TOOLS

    try:
        cat = load_catalog([*(args.tasks_dir or []), *args.dirs])
        check_tools(cat, list(BUILTIN_TOOLS))
    except TemplateError as exc:
        raise CLIError(str(exc)) from None
    print(f"{len(cat)} task templates check out: fields, Jinja, expressions, recipe "
          "functions and tools")
    return 0
