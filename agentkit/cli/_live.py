"""Live progress on a terminal (rich): the plan, then one line per subagent with its state,
elapsed time, step count and current tool, updated in place."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from .._render import visible_controls

_STYLE = {"running": "cyan", "ok": "green", "partial": "yellow", "failed": "red",
          "timed-out": "red", "cancelled": "red", "queued": "dim"}


@dataclass
class _Task:
    id: str
    title: str
    state: str = "queued"
    started: float | None = None
    ended: float | None = None
    steps: int = 0
    tool: str = ""
    tools: int = 0


@dataclass
class LiveProgress:
    console: Console
    tasks: dict[str, _Task] = field(default_factory=dict)
    mode: str = ""
    phase: str = "planning"  # planning → running tasks → writing the answer
    live: Live | None = None

    def __enter__(self) -> LiveProgress:
        self.live = Live(self, console=self.console, refresh_per_second=8, transient=False)
        self.live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.live is not None:
            self.live.update(self, refresh=True)
            self.live.__exit__(None, None, None)

    def __rich__(self) -> Group:
        now = time.monotonic()
        table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
        for col in ("task", "state", "elapsed", "steps", "tools", "now"):
            table.add_column(col)
        for t in list(self.tasks.values()):
            took = ((t.ended or now) - t.started) if t.started else 0.0
            # Text, not markup: a task id or tool name comes from the model and may hold
            # "[link=…]" or escape sequences
            table.add_row(Text(visible_controls(t.id)), Text(t.state,
                          style=_STYLE.get(t.state, "")), f"{took:6.2f}s", str(t.steps),
                          str(t.tools),
                          Text(visible_controls(t.tool) if t.state == "running" else ""))
        done = sum(t.state not in ("queued", "running") for t in self.tasks.values())
        if self.phase == "planning":
            head = Text("planning: choosing the tasks for this question …", style="bold")
            return Group(head)
        head = Text(f"{self.mode} mode · {done}/{len(self.tasks)} tasks done"
                    + (" · writing the answer …" if self.phase == "answering" else ""),
                    style="bold")
        return Group(head, table)

    def __call__(self, ev: dict[str, Any]) -> None:
        kind, phase, data = ev["kind"], ev["phase"], ev["data"]
        task = self.tasks.get(ev.get("task") or "")
        if kind == "synthesize" and phase == "start":
            self.phase = "answering"
        if kind == "plan":
            self.phase = "running"
            self.mode = data["mode"]
            self.tasks = {t["id"]: _Task(t["id"], t["title"]) for t in data["tasks"]}
        elif kind == "task" and task is not None:
            if phase == "start":
                task.state, task.started = "running", time.monotonic()
            else:
                result = data.get("result")
                task.state = result["status"] if result else "cancelled"
                task.ended = time.monotonic()
        elif kind == "tool" and task is not None:
            if phase == "start":
                task.tool = data["tool"]
                task.steps = max(task.steps, ev.get("step") or 0)
            else:
                task.tools += 1
        elif kind == "llm" and task is not None and phase == "start":
            task.steps = max(task.steps, ev.get("step") or 0)
