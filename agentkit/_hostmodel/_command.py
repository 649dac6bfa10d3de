"""From a runtime's command line to the engine it starts: ``env K=V`` prefixes, start
scripts and inline ``bash -c`` scripts (read as bash runs them, :mod:`._wrapper`), and
``--config FILE``. Shared by every runtime: a unit, a container and a Pod all start engines
the same ways."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._engines import config_flags, engine_of, parse_serve_args
from ._model import Server, Setting
from ._shell import Var, Where
from ._shexec import Launch, Reading
from ._wrapper import read_command

if TYPE_CHECKING:
    from .._sandbox._context import RecipeContext

MAX_FILES = 16  # scripts and sourced files read for one server
NCCL_PREFIXES = ("NCCL_",)


async def follow_command(ctx: RecipeContext, server: Server) -> bool:
    """Resolve ``server.argv`` to an engine command (through ``env``, start scripts and
    ``bash -c``), set the environment the engine gets, and read its serving flags; False when
    it starts no engine this reading understands."""
    if not server.argv:  # e.g. `docker run redis:7`: the image's own command, not read here
        return False
    raw = server.argv_evidence[0] if server.argv_evidence else ""
    where = Where(server.argv_source, server.argv_line, raw)
    files: dict[str, str | None] = {}
    env = {k: v.value for k, v in server.env.items()}
    is_engine = lambda argv: engine_of(argv) is not None  # noqa: E731
    reading = read_command(server.argv, env, files, is_engine, where)
    while reading.wanted and len(files) < MAX_FILES:
        for path in reading.wanted:
            lines = (await ctx.read_lines(server.host_path(path), optional=True)
                     if server.visible(path) else None)
            files[path] = None if lines is None else "\n".join(lines)
        reading = read_command(server.argv, env, files, is_engine, where)
    launch = reading.launch
    unread = [p for p, t in files.items() if t is None]
    server.problems += [f"{p} could not be read" for p in unread]
    if launch is None:
        what = f"{', '.join(reading.read)} runs" if reading.read else "the command starts"
        server.problems.append(f"{what} no engine command this reading understands"
                               + (f" ({'; '.join(reading.problems)})" if reading.problems
                                  else ""))
        return False
    _apply(ctx, server, reading, launch, files)
    server.engine = engine_of(server.argv)
    server.flags = parse_serve_args(server.argv)
    if "config" in server.flags:
        await _config_file(ctx, server)
    return True


def _apply(ctx: RecipeContext, server: Server, reading: Reading, launch: Launch,
           files: dict[str, str | None]) -> None:
    """The launch's environment and command line become the server's, each setting cited
    where it was made; what is not established is said, with its file and line."""
    server.problems += reading.problems
    unit_line = (launch.at.path, launch.at.line) == (server.argv_source, server.argv_line)
    if launch.argv is None:
        server.problems.append(f"the engine command at {launch.at} is not established: "
                               f"{launch.why}")
    if not launch.env_known:
        server.env_open = _setting(ctx, "*", Var(None, at=launch.at), files, launch.why)
    elif launch.wild is not None:
        server.env_open = _setting(ctx, "*", Var(None, at=launch.wild), files, launch.wild_why)
    env: dict[str, Setting] = {}
    for name, var in launch.env.items():
        old = server.env.get(name)
        if not var.settled:
            server.unknown_env[name] = _setting(ctx, name, var, files, var.why or
                                                "its export is not established")
        elif var.at is None and old is not None and old.value == var.value:
            env[name] = old
        else:
            env[name] = _setting(ctx, name, var, files, "env(1) in ExecStart" if unit_line
                                 and var.at == launch.at else "start script")
    for name, var in launch.shell_vars.items():
        if name.startswith(NCCL_PREFIXES) and name not in env:
            server.shell_only[name] = _setting(ctx, name, var, files, "shell variable")
    for name, setting in env.items():  # a script that sets it again undoes UnsetEnvironment=
        if setting.origin != server.env.get(name, setting).origin or name not in server.env:
            server.removed.pop(name, None)
    if launch.env_known:
        _removed(ctx, server, launch, env, files)
    server.env = env
    if launch.argv is not None or launch.probe:
        server.argv = launch.argv if launch.argv is not None else launch.probe
    if not unit_line:
        server.argv_source, server.argv_line = launch.at.path, launch.at.line
        text = _line(files, launch.at) or launch.at.text
        server.argv_evidence = [*server.argv_evidence,
                                ctx.cite("file", str(launch.at), text.strip(), text)]
    scripts = [p for p in reading.read if files.get(p) is not None]
    server.script = scripts[0] if scripts else None


def _removed(ctx: RecipeContext, server: Server, launch: Launch, env: dict[str, Setting],
             files: dict[str, str | None]) -> None:
    """A setting the runtime gives that the engine does not get was taken out on the way
    (``unset`` in a script, ``env -u`` in the command): cited where it was removed."""
    for name, old in server.env.items():
        if name in env or name in server.unknown_env:
            continue
        at, how = launch.removed.get(name, (launch.at, "the start script"))
        if (at.path, at.line) == (server.argv_source, server.argv_line):
            evidence = server.argv_evidence[:1]  # the runtime's own command line
        else:
            text = (_line(files, at) or at.text).strip()
            evidence = [ctx.cite("file", str(at), text, text)] if at.path else []
        server.removed[name] = Setting(name=name, value=old.value, source=at.path,
                                       line=at.line, evidence=evidence, origin=how,
                                       comment=old.where)


def _line(files: dict[str, str | None], at: Where) -> str:
    text = files.get(at.path)
    lines = text.splitlines() if text else []
    return lines[at.line - 1] if 0 < at.line <= len(lines) else ""


def _setting(ctx: RecipeContext, name: str, var: Var, files: dict[str, str | None],
             origin: str) -> Setting:
    """A setting the script makes, cited at its line. For one not established, ``origin``
    says why."""
    at = var.at or Where("", 0)
    raw = _line(files, at) or at.text
    ev = ctx.cite("file", str(at), raw.strip(), raw) if at.path else ""
    return Setting(name=name, value=var.value or "", source=at.path, line=at.line,
                   evidence=[ev] if ev else [], origin=origin)


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


