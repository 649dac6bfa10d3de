"""Podman Quadlet: ``NAME.container`` files that systemd's quadlet generator turns into
``NAME.service`` running ``podman run`` (podman-systemd.unit(5)).

The generated unit lives only in ``/run/systemd/generator`` on the running host, so the
``.container`` file is read instead and turned into the ``podman run`` line quadlet writes:
``--name`` (``ContainerName=``, default ``systemd-NAME``), ``--env`` for each ``Environment=``
assignment, ``--env-file`` for each ``EnvironmentFile=``, ``--env-host`` for
``EnvironmentHost=yes``, ``-v`` for ``Volume=``, ``--device`` for ``AddDevice=``, the words
of ``PodmanArgs=``, then ``Image=`` and the words of ``Exec=``. That line is then read as any
``podman run`` (:mod:`._rununit`): ``[Service] Environment=`` sets the podman CLI's
environment, which reaches the container only through a bare ``--env NAME``.
"""

from __future__ import annotations

import posixpath
import shlex
from typing import TYPE_CHECKING

from ..._sandbox._systemd import (
    Assignment,
    UnitSyntaxError,
    parse_unit_text,
    split_env_assignments,
)
from .._command import follow_command
from .._model import HostModel, Server, Setting
from ._rununit import contain
from ._systemd import _states, journal_argv

if TYPE_CHECKING:
    from ..._sandbox._context import RecipeContext

DIRS = ("/etc/containers/systemd", "/usr/share/containers/systemd")
_YES = ("1", "yes", "true", "on")


async def discover(ctx: RecipeContext, model: HostModel) -> list[Server]:
    listings = await ctx.tools([("glob", {"pattern": f"{d}/*.container"}) for d in DIRS])
    model.looked_in.append(f"Podman Quadlet files ({', '.join(DIRS)}/*.container)")
    seen: dict[str, str] = {}
    for got in listings:  # the first directory holding a name wins
        for p in (got or {}).get("paths", []):
            seen.setdefault(p.rsplit("/", 1)[-1], p)
    known = {s.name for s in model.servers}
    servers = []
    for name, path in sorted(seen.items()):
        unit = name.removesuffix(".container") + ".service"
        if unit in known:  # a unit file of that name: systemd loads it, not the generated one
            continue
        server = await _server(ctx, model, path, unit)
        if server is not None:
            servers.append(server)
    if servers:
        from .._state import LIST_UNITS, parse_list_units

        units_out = await ctx.tool("run_command", optional=True, argv=LIST_UNITS)
        listed = parse_list_units(units_out["stdout"]) if units_out and \
            units_out["exit_code"] == 0 else {}
        await _states(ctx, servers, units_out, listed)
    return servers


async def _server(ctx: RecipeContext, model: HostModel, path: str, unit: str
                  ) -> Server | None:
    lines = await ctx.read_lines(path, optional=True)
    if lines is None:
        model.problems.append(f"{path} could not be read")
        return None
    try:
        items = parse_unit_text("\n".join(lines), path)
    except UnitSyntaxError as exc:
        model.problems.append(f"{exc}: the Quadlet unit {unit} is not established")
        return None
    argv, image_at = _podman_argv(items, unit, path)
    if argv is None:
        return None
    caller: dict[str, Setting] = {}
    for a in items:
        if a.section == "Service" and a.key == "Environment":
            for k, v in split_env_assignments(a.value):
                text = lines[a.line - 1] if 0 < a.line <= len(lines) else a.raw
                caller[k] = Setting(name=k, value=v, source=path, line=a.line,
                                    evidence=[ctx.cite("file", f"{path}:{a.line}",
                                                       text.strip(), text)],
                                    origin="unit")
    text = lines[image_at - 1] if 0 < image_at <= len(lines) else ""
    server = Server(name=unit, path=path, files=[path], argv=argv, argv_source=path,
                    argv_line=image_at,
                    argv_evidence=[ctx.cite("file", f"{path}:{image_at}", text.strip(), text)],
                    env=caller, log_argv=journal_argv(unit))
    server.notes.append(f"a Podman Quadlet unit: systemd's generator makes {unit} from {path}")
    await contain(ctx, server, model, posixpath.dirname(path))
    return server if await follow_command(ctx, server) else None


def _podman_argv(items: list[Assignment], unit: str, path: str
                 ) -> tuple[list[str] | None, int]:
    """The ``podman run`` line quadlet writes for this file, and the line of ``Image=``."""
    c = [a for a in items if a.section == "Container"]
    image = [a for a in c if a.key == "Image"]
    if not image:
        return None, 0
    name = next((a.value for a in reversed(c) if a.key == "ContainerName"),
                "systemd-" + unit.removesuffix(".service"))
    argv = ["podman", "run", "--name", name]
    for a in c:
        if a.key == "Environment":
            argv += [w for k, v in split_env_assignments(a.value) for w in ("--env", f"{k}={v}")]
        elif a.key == "EnvironmentFile":
            argv += ["--env-file", posixpath.join(posixpath.dirname(path), a.value)]
        elif a.key == "EnvironmentHost" and a.value.lower() in _YES:
            argv.append("--env-host")
        elif a.key == "Volume":
            argv += ["-v", a.value]
        elif a.key == "AddDevice":
            argv += ["--device", a.value]
        elif a.key == "ShmSize":
            argv += ["--shm-size", a.value]
        elif a.key == "PodmanArgs":
            argv += shlex.split(a.value)
    argv.append(image[-1].value)
    for a in c:
        if a.key == "Exec":
            argv += shlex.split(a.value)
    return argv, image[-1].line
