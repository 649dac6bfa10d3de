"""Podman Quadlet: ``NAME.container`` files that systemd's quadlet generator turns into
``NAME.service`` running ``podman run`` (podman-systemd.unit(5)).

The generated unit lives only in ``/run/systemd/generator`` on the running host, so the
``.container`` file is read instead and turned into the ``podman run`` line quadlet writes:
``--name`` (``ContainerName=``, default ``systemd-NAME``), ``--env`` for each ``Environment=``
assignment, ``--env-file`` for each ``EnvironmentFile=``, ``--env-host`` for
``EnvironmentHost=yes``, ``--entrypoint`` for ``Entrypoint=``, ``-v`` for ``Volume=``,
``--device`` for ``AddDevice=``, the words of ``PodmanArgs=``, then ``Image=`` and the words
of the last ``Exec=``. That line is then read as any ``podman run`` (:mod:`._rununit`):
``[Service] Environment=`` sets the podman CLI's environment, which reaches the container
only through a bare ``--env NAME``.

Which unit systemd loads: the generator's directory comes after ``/etc/systemd/system`` and
``/run/systemd/system`` (a unit file there wins) and before the vendor directories (the
generated unit hides one there). Whether it starts at boot is its ``[Install]``, which the
generator applies itself.
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

# podman-systemd.unit(5), rootful search path, in precedence order: /run's "temporary
# quadlets", the administrator's, the distribution's
DIRS = ("/run/containers/systemd", "/etc/containers/systemd", "/usr/share/containers/systemd")
_YES = ("1", "yes", "true", "on")
# unit directories systemd reads before the generator's /run/systemd/generator
# (systemd.unit(5), "Unit File Load Path"): a unit file there hides the generated one
_BEFORE_GENERATOR = ("/etc/systemd/system/", "/run/systemd/system/")
_STARTS = ("WantedBy", "RequiredBy", "UpheldBy")  # [Install] keys quadlet applies that start it


async def discover(ctx: RecipeContext, model: HostModel) -> list[Server]:
    listings = await ctx.tools([("glob", {"pattern": f"{d}/*.container"}) for d in DIRS])
    model.looked_in.append(f"Podman Quadlet files ({', '.join(DIRS)}/*.container)")
    seen: dict[str, str] = {}
    for got in listings:  # the first directory holding a name wins
        for p in (got or {}).get("paths", []):
            seen.setdefault(p.rsplit("/", 1)[-1], p)
    known = {s.name: s for s in model.servers}
    servers, installs = [], []
    for name, path in sorted(seen.items()):
        unit = name.removesuffix(".container") + ".service"
        if unit in known and known[unit].path.startswith(_BEFORE_GENERATOR):
            continue  # systemd loads that unit file, not the generated one
        read = await _server(ctx, model, path, unit)
        if read is None:
            continue
        if unit in known:  # a vendor unit: the generator's directory comes before its own
            model.servers.remove(known[unit])
            read[0].notes.append(f"{known[unit].path} is hidden by the generated {unit} "
                                 "(systemd.unit(5): /run/systemd/generator comes first)")
        servers.append(read[0])
        installs.append(read[1])
    if servers:
        from .._state import LIST_UNITS, parse_list_units

        units_out = await ctx.tool("run_command", optional=True, argv=LIST_UNITS)
        listed = parse_list_units(units_out["stdout"]) if units_out and \
            units_out["exit_code"] == 0 else {}
        await _states(ctx, servers, units_out, listed)
        for server, install in zip(servers, installs, strict=True):
            _enabled(ctx, server, install)
    return servers


def _enabled(ctx: RecipeContext, server: Server, install: list[Assignment]) -> None:
    """podman-systemd.unit(5), "Enabling unit files": a generated unit cannot be enabled with
    systemctl; the generator applies the file's [Install] itself at each daemon-reload
    (list-unit-files shows it as ``generated``, whatever that does)."""
    wants = [a for a in install if a.key in _STARTS and a.value]
    st = server.state
    st.enabled = bool(wants)
    st.enabled_detail = (", ".join(f"[Install] {a.key}={a.value}" for a in wants)
                         + ": quadlet's generator links it" if wants else
                         "no [Install] WantedBy=, RequiredBy= or UpheldBy=: quadlet's "
                         "generator starts it with nothing")
    st.enabled_evidence = [_cite(ctx, a) for a in wants]


def _cite(ctx: RecipeContext, a: Assignment) -> str:
    """The assignment's whole text (its continuation lines too), at its first line."""
    return ctx.cite("file", f"{a.source}:{a.line}",
                    "\n".join(ln.strip() for ln in a.raw.split("\n")), a.raw)


async def _server(ctx: RecipeContext, model: HostModel, path: str, unit: str
                  ) -> tuple[Server, list[Assignment]] | None:
    lines = await ctx.read_lines(path, optional=True)
    if lines is None:
        model.problems.append(f"{path} could not be read")
        return None
    try:
        items = parse_unit_text("\n".join(lines), path)
        got = _podman_argv(items, unit, path)
    except UnitSyntaxError as exc:
        model.problems.append(f"{exc}: the Quadlet unit {unit} is not established")
        return None
    except ValueError as exc:  # shlex: an unclosed quote
        model.problems.append(f"{path}: {exc} in a [Container] value: the Quadlet unit "
                              f"{unit} is not established")
        return None
    if got is None:
        rootfs = _last([a for a in items if a.section == "Container"], "Rootfs")
        model.problems.append(f"{path}: " + (
            f"runs the root filesystem {rootfs.value} (Rootfs=), not an image: the command of "
            f"{unit} is not established" if rootfs and rootfs.value else
            f"no Image=: quadlet generates no {unit} from it"))
        return None
    argv, image = got
    caller = {k: Setting(name=k, value=v, source=path, line=a.line, origin="unit",
                         evidence=[_cite(ctx, a)])
              for a in items if a.section == "Service" and a.key == "Environment"
              for k, v in split_env_assignments(a.value)}
    server = Server(name=unit, path=path, files=[path], argv=argv, argv_source=path,
                    argv_line=image.line, argv_evidence=[_cite(ctx, image)], env=caller,
                    log_argv=journal_argv(unit))
    server.notes.append(f"a Podman Quadlet unit: systemd's generator makes {unit} from {path}")
    # podman runs in the unit's WorkingDirectory= (systemd.exec(5): / for a system unit)
    workdir = _last([a for a in items if a.section == "Service"], "WorkingDirectory")
    await contain(ctx, server, model, workdir.value if workdir else "/")
    if not await follow_command(ctx, server):
        return None
    return server, [a for a in items if a.section == "Install"]


def _podman_argv(items: list[Assignment], unit: str, path: str
                 ) -> tuple[list[str], Assignment] | None:
    """The ``podman run`` line quadlet writes for this file, and its ``Image=``.
    Each key is read as quadlet reads it (quadlet.go): a single-valued key by its last line
    (``Image``, ``ContainerName``, ``Entrypoint``, ``EnvironmentHost``, ``Exec``), a list key
    by every line, split into words (``EnvironmentFile``, ``AddDevice``, ``PodmanArgs``)."""
    c = [a for a in items if a.section == "Container"]
    image = _last(c, "Image")
    if image is None or not image.value:
        return None
    name = _last(c, "ContainerName")
    argv = ["podman", "run", "--name",
            name.value if name and name.value else "systemd-" + unit.removesuffix(".service")]
    host = _last(c, "EnvironmentHost")
    if host is not None and host.value.lower() in _YES:
        argv.append("--env-host")
    entrypoint = _last(c, "Entrypoint")
    if entrypoint is not None:
        argv.append(f"--entrypoint={entrypoint.value}")
    for a in c:
        if a.key == "Environment":
            argv += [w for k, v in split_env_assignments(a.value) for w in ("--env", f"{k}={v}")]
        elif a.key == "EnvironmentFile":
            argv += [w for f in shlex.split(a.value)
                     for w in ("--env-file", posixpath.join(posixpath.dirname(path), f))]
        elif a.key == "Volume":  # a source starting with "." is relative to the file
            source, colon, rest = a.value.partition(":")
            argv += ["-v", posixpath.normpath(posixpath.join(posixpath.dirname(path), source))
                     + colon + rest if colon and source.startswith(".") else a.value]
        elif a.key == "AddDevice":
            argv += [w for d in shlex.split(a.value) for w in ("--device", d)]
        elif a.key == "ShmSize":
            argv += ["--shm-size", a.value]
        elif a.key == "PodmanArgs":
            argv += shlex.split(a.value)
    argv.append(image.value)
    exec_ = _last(c, "Exec")
    return argv + (shlex.split(exec_.value) if exec_ else []), image


def _last(items: list[Assignment], key: str) -> Assignment | None:
    return next((a for a in reversed(items) if a.key == key), None)
