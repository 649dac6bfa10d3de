"""From a runtime's command line to the engine it starts: ``env K=V`` prefixes, start
scripts (their exports join the environment), and ``--config FILE``. Shared by every runtime:
a unit, a container and a Pod all start engines the same ways."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._engines import config_flags, engine_of, parse_serve_args
from ._model import Server, Setting
from ._wrapper import SHELLS, ScriptVar, parse_script, script_of, source_targets, strip_env

if TYPE_CHECKING:
    from .._sandbox._context import RecipeContext


async def follow_command(ctx: RecipeContext, server: Server) -> bool:
    """Resolve ``server.argv`` to an engine command (through ``env`` and a start script), and
    read its serving flags; False when it starts no engine this reading understands."""
    env_prefix(server, server.argv_source, server.argv_line,
               server.argv_evidence[0] if server.argv_evidence else "")
    if engine_of(server.argv) is None:
        inline = inline_script(server.argv)
        wrapped = script_of(server.argv)
        if inline is not None:
            label = f"{server.argv_source} ({server.argv[0].rsplit('/', 1)[-1]} -c)"
            if not await _apply_script(ctx, server, label, inline[0].split("\n"), inline[1],
                                       inline=True):
                return False
        elif wrapped is None or not await _through_script(ctx, server, *wrapped):
            return False
    server.engine = engine_of(server.argv)
    server.flags = parse_serve_args(server.argv)
    if "config" in server.flags:
        await _config_file(ctx, server)
    return True


async def _config_file(ctx: RecipeContext, server: Server) -> None:
    """``--config FILE``: its options apply where the command line does not set them (the
    command line wins, then the file, then the defaults)."""
    path = str(server.flags["config"])
    parsed = await ctx.tool("parse_config", optional=True, path=path, format="yaml")
    if not parsed:
        server.problems.append(f"--config {path} could not be read: its options are unknown")
        return
    entries = {e["key"]: e["value"] for e in parsed["entries"]
               if "." not in e["key"] or e["key"] == "kv_cache_config.dtype"}
    from_file = config_flags(entries)
    server.flags = {**from_file, **server.flags}
    server.argv_evidence = [*server.argv_evidence,
                            *[e["evidence_id"] for e in parsed["entries"]
                              if config_flags({e["key"]: e["value"]})]]


def env_prefix(server: Server, source: str, line: int, evidence: str) -> None:
    """``ExecStart=/usr/bin/env K=V … CMD``: K=V is in CMD's environment, over the unit's."""
    argv, pairs, clear = strip_env(server.argv)
    if not pairs and not clear:
        return
    if clear:
        server.env.clear()
    for k, v in pairs:
        if v == "\0":
            server.env.pop(k, None)
        else:
            server.env[k] = Setting(name=k, value=v, source=source, line=line,
                                    evidence=[evidence], origin="env(1) in ExecStart")
    server.argv = argv


async def _through_script(ctx: RecipeContext, server: Server, path: str,
                          args: list[str]) -> bool:
    """Follow a start script to the engine command it runs; what it exports joins the
    environment (set after the unit's, so it wins)."""
    lines = await ctx.read_lines(path, optional=True)
    if lines is None:
        server.problems.append(f"start script {path} could not be read")
        return False
    return await _apply_script(ctx, server, path, lines, args)


def inline_script(argv: list[str]) -> tuple[str, list[str]] | None:
    """(script text, its positional arguments after $0) of ``bash -c 'SCRIPT' [$0 [ARGS…]]``
    (also ``-lc``, ``-ec``, ``-xc``), else None."""
    if not argv or argv[0].rsplit("/", 1)[-1] not in SHELLS:
        return None
    for i, a in enumerate(argv[1:], 1):
        if not a.startswith("-"):
            return None
        if "c" in a[1:] and not a.startswith("--") and i + 1 < len(argv):
            return argv[i + 1], argv[i + 3 :]
    return None


async def _apply_script(ctx: RecipeContext, server: Server, path: str, lines: list[str],
                        args: list[str], inline: bool = False) -> bool:
    text = "\n".join(lines)
    sources: dict[str, str] = {}
    texts: dict[str, list[str]] = {path: lines}
    pending = source_targets(text)
    while pending and len(sources) < 8:
        target = pending.pop(0)
        if target in sources or "$" in target:
            continue
        sub = await ctx.read_lines(target, optional=True)
        if sub is not None:
            sources[target] = "\n".join(sub)
            texts[target] = sub
            pending += source_targets(sources[target])
    values = {k: s.value for k, s in server.env.items()}
    script = parse_script(text, path, values, args, lambda argv: engine_of(argv) is not None,
                          sources)
    if not script.command:
        server.problems.append(f"{'the inline script' if inline else 'start script'} {path} "
                               "runs no engine command this reading understands")
        return False
    for var in script.exported.values():
        _script_setting(ctx, server, var, texts.get(var.source, []))
    where = f"{path}:{script.command_line}"
    server.argv = script.command
    server.argv_source, server.argv_line = path, script.command_line
    server.argv_evidence = [*server.argv_evidence,
                            ctx.cite("file", where, script.command_raw, script.command_raw)]
    server.script = None if inline else path
    server.problems += script.problems
    return True


def _script_setting(ctx: RecipeContext, server: Server, var: ScriptVar, lines: list[str]
                    ) -> None:
    raw = lines[var.line - 1] if 0 < var.line <= len(lines) else var.raw
    ev = ctx.cite("file", f"{var.source}:{var.line}", raw.strip(), raw)
    server.env[var.name] = Setting(name=var.name, value=var.value, source=var.source,
                                   line=var.line, evidence=[ev], origin="start script")
    server.removed.pop(var.name, None)


