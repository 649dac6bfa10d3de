"""Small snapshot hosts for calling one runtime's ``discover`` directly (no investigation),
so the runtimes' tests stay fast enough for their mutation targets."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio

from agentkit import Host
from agentkit._hostmodel._model import HostModel, Server
from agentkit._sandbox._context import RecipeContext
from agentkit._sandbox._sandbox import Sandbox
from agentkit._types import TaskSpec


def snapshot(root: Path, files: dict[str, str],
             commands: list[tuple[list[str], str, int]] | None = None,
             manifest_dirs: list[str] | None = None) -> Host:
    """A snapshot root holding ``files`` and the captured ``commands`` (argv, stdout, rc)."""
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    (root / ".agentkit/commands").mkdir(parents=True, exist_ok=True)
    captured = []
    for n, (argv, out, rc) in enumerate(commands or []):
        (root / f".agentkit/commands/{n}.txt").write_text(out)
        captured.append({"argv": argv, "stdout": f"commands/{n}.txt", "exit_code": rc})
    (root / ".agentkit/snapshot.json").write_text(json.dumps(
        {"format": "agentkit-snapshot", "version": 1, "commands": captured,
         "manifest_dirs": manifest_dirs or []}))
    return Host.at(root)


def discover(runtime: Any, host: Host, model: HostModel | None = None
             ) -> tuple[RecipeContext, HostModel, dict[str, Server]]:
    """``runtime.discover`` on ``host``: its context (for citations), the model, and the
    servers it found by name."""
    ctx = RecipeContext(Sandbox(host, task_id="t"), TaskSpec(id="t", title="t", objective="o"))
    model = model or HostModel()
    servers = anyio.run(runtime.discover, ctx, model)
    return ctx, model, {s.name: s for s in servers}


def cited(ctx: RecipeContext, ev: str) -> tuple[str, str]:
    """(locator, excerpt) of an evidence id."""
    e = ctx.box.evidence[ev]
    return e.locator, e.excerpt
