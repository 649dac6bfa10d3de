"""``agentkit trace show``: a recorded run for the terminal (rich).

Every text in a trace may come from a host file, so none reaches the terminal as it is: rich
markup (``[link=…]``) is escaped, control characters (escape sequences) are shown as
``\\x1b``, and a long text is cut, so a crafted trace can neither drive the terminal nor
stall the table layout."""

from __future__ import annotations

from typing import Any

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from .._render import visible_controls
from ._read import TraceFile
from ._timeline import build

MAX_TEXT = 2000


def safe(text: Any, limit: int = MAX_TEXT) -> str:
    """``text`` as the terminal may show it: controls made visible, markup escaped, cut.

    >>> safe("[link=file:///etc]x[/link] \\x1b[2J")
    '\\\\[link=file:///etc]x\\\\[/link] \\\\x1b[2J'
    """
    text = str(text)
    if len(text) > limit:
        text = f"{text[:limit]}… ({len(text) - limit} more characters)"
    return escape(visible_controls(text))


def render_show(tf: TraceFile, console: Console | None = None) -> None:
    console = console or Console(highlight=False)
    t = build(tf)
    console.print(f"[bold]{safe(t.question)}[/bold]")
    console.print(f"root {safe(t.root)} · {safe(t.mode)} mode · {safe(t.outcome)} · "
                  f"{t.duration:.3f} s")
    for note in t.notes:
        console.print(f"[yellow]note:[/yellow] {safe(note)}")
    if t.plan:
        plan = Table(title="Plan", show_lines=False)
        for col in ("task", "how", "why"):
            plan.add_column(col)
        for task in t.plan["tasks"]:
            how = f"recipe {task['template']}" if task.get("template") else "LLM subagent"
            plan.add_row(safe(task["id"]), safe(how), safe(task.get("reason", "")))
        console.print(plan)
    rows = Table(title="Tasks", caption="start, took: seconds; llm, tools: calls",
                 box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, 1, 0, 0))
    # Short headers and a task column that may wrap: at 80 columns the summary keeps room
    # (with the long headers it was squeezed to nothing)
    rows.add_column("task", overflow="fold")
    for col in ("start", "took", "status", "llm", "tools"):
        rows.add_column(col, no_wrap=True)
    rows.add_column("summary", ratio=1, min_width=20, overflow="fold")
    for r in t.rows:
        took = (r.end if r.end is not None else t.duration) - r.start
        rows.add_row(safe(r.id), f"{r.start:.3f}", f"{took:.3f}", safe(r.status),
                     str(sum(c.kind == "llm" for c in r.calls)),
                     str(sum(c.kind == "tool" for c in r.calls)), safe(r.summary))
    console.print(rows)
    for r in t.rows:
        console.print(f"[bold]{safe(r.id)}[/bold]")
        for c in r.calls:
            mark = ("[yellow]cancelled[/yellow]" if c.cancelled else
                    "[yellow]unfinished[/yellow]" if c.end is None else
                    "ok" if c.ok else "[red]refused[/red]")
            console.print(f"  {c.start:8.3f}s  {c.kind:4} {safe(c.name)} {safe(c.detail)} "
                          f"{mark}")
    if t.answer:
        console.print("[bold]Answer[/bold]")
        for claim in t.answer["bottom_line"]:
            console.print(f"- {safe(claim['text'])}")
