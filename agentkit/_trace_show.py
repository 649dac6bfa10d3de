"""``agentkit trace show``: a recorded run for the terminal (rich)."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from ._timeline import build
from ._trace_read import TraceFile


def render_show(tf: TraceFile, console: Console | None = None) -> None:
    console = console or Console(highlight=False)
    t = build(tf)
    console.print(f"[bold]{t.question}[/bold]")
    console.print(f"root {t.root} · {t.mode} mode · {t.outcome} · {t.duration:.3f} s")
    for note in t.notes:
        console.print(f"[yellow]note:[/yellow] {note}")
    if t.plan:
        plan = Table(title="Plan", show_lines=False)
        for col in ("task", "how", "why"):
            plan.add_column(col)
        for task in t.plan["tasks"]:
            how = f"recipe {task['template']}" if task.get("template") else "LLM subagent"
            plan.add_row(task["id"], how, task.get("reason", ""))
        console.print(plan)
    rows = Table(title="Tasks")
    for col in ("task", "start s", "took s", "status", "model calls", "tool calls"):
        rows.add_column(col, no_wrap=True)
    rows.add_column("summary", ratio=1, overflow="fold")  # as wide as the screen allows
    for r in t.rows:
        took = (r.end if r.end is not None else t.duration) - r.start
        rows.add_row(r.id, f"{r.start:.3f}", f"{took:.3f}", r.status,
                     str(sum(c.kind == "llm" for c in r.calls)),
                     str(sum(c.kind == "tool" for c in r.calls)), r.summary)
    console.print(rows)
    for r in t.rows:
        console.print(f"[bold]{r.id}[/bold]")
        for c in r.calls:
            mark = "ok" if c.ok else "[red]refused[/red]"
            console.print(f"  {c.start:8.3f}s  {c.kind:4} {c.name} {c.detail} {mark}")
    if t.answer:
        console.print("[bold]Answer[/bold]")
        for claim in t.answer["bottom_line"]:
            console.print(f"- {claim['text']}")
