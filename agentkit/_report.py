"""The HTML report: one self-contained file (no network fetches) with the answer, clickable
citations that reveal their evidence, and a timeline of orchestrator and subagents."""

from __future__ import annotations

import math
from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2

from ._timeline import build
from ._trace_read import TraceFile
from ._types import Answer

LABEL_W, WIDTH, ROW_H = 170, 900, 22


@lru_cache(maxsize=1)
def _template() -> jinja2.Template:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(Path(__file__).parent / "_templates")),
        autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    return env.get_template("report.html.j2")


def _ticks(duration: float) -> list[dict[str, Any]]:
    # at most 11 ticks whatever the duration: a step of whole 10 minutes past an hour and a
    # half (a fixed step made a trace spanning years allocate millions of them)
    step = next((s for s in (0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300)
                 if duration / s <= 10), 600 * math.ceil(duration / 6000))
    n = int(duration / step) + 1
    return [{"x": WIDTH * i * step / max(duration, 1e-9),
             "label": f"{i * step * 1000:g} ms" if step < 1 else f"{i * step:g} s"}
            for i in range(n)]


def render_report(tf: TraceFile) -> str:
    t = build(tf)
    answer = Answer.model_validate(t.answer) if t.answer else None
    num = {c.id: n for n, c in enumerate(answer.citations, 1)} if answer else {}
    scale = WIDTH / max(t.duration, 1e-9)
    return _template().render(t=t, a=answer, num=num, label_w=LABEL_W, width=WIDTH,
                              row_h=ROW_H, x=lambda s: round(max(s, 0.0) * scale, 2),
                              ticks=_ticks(t.duration))
