"""A systemd unit whose ExecStart= is ``docker run …`` / ``podman run …``: the unit is the
server, and its engine runs in a container.

What reaches the engine is the container's environment, built by the CLI's rules
(:mod:`._runline`): ``--env-file`` lines, then ``-e`` values, over the image's ``ENV``. The
unit's own ``Environment=``/``EnvironmentFile=`` set the *CLI's* environment: they reach the
engine only through ``-e NAME`` or an env-file line ``NAME`` that takes the caller's value.
Files on the host (``/etc/nccl.conf``, ``~/.nccl.conf``) are not the container's, except
what is mounted. When ``docker inspect`` of the container can be read (a live host, or its
capture), that is the authority: see :func:`adopt`.
"""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING

from .._model import NOT_TUNING, HostModel, Server, Setting
from ._entrypoint import image_config, with_entrypoint
from ._runline import (
    EnvEntry,
    RunLine,
    compose_files,
    env_flag,
    final_env,
    parse_env_file,
    run_line,
)

if TYPE_CHECKING:
    from ..._sandbox._context import RecipeContext


async def contain(ctx: RecipeContext, server: Server, model: HostModel, workdir: str = "/"
                  ) -> None:
    """Turn a unit whose command is a run line into the container it starts (in place); a
    unit that runs anything else is left as it is. A line this reading does not understand
    is said on the host model (the unit then is no server this reading can describe)."""
    workdir = workdir.lstrip("-") if workdir.lstrip("-").startswith("/") else "/"
    files = compose_files(server.argv, workdir)
    if files is not None:  # the unit runs a Compose project: its services are the servers
        for f in files:
            model.compose_units.setdefault(f, server.name)
        return
    line = run_line(server.argv)
    if line is None:
        return
    where = f"{server.argv_source}:{server.argv_line}" if server.argv_line else \
        server.argv_source
    if line.problem:
        model.problems.append(f"{server.name} ({where}): its `{line.cli} run` line is not "
                              f"understood ({line.problem}): the image, its command and the "
                              "container's environment are not established")
        server.argv = []
        return
    caller = {k: s.value for k, s in server.env.items()}
    unit_env = dict(server.env)
    entries: list[tuple[EnvEntry, str, str]] = []  # entry, file (or ""), its evidence
    if line.flag("env-host"):  # podman: the CLI's whole environment, below the files
        entries += [(EnvEntry(k, s.value, line=s.line, raw=f"{k}={s.value}"),
                     f"host:{s.source}", s.evidence[0] if s.evidence else "")
                    for k, s in unit_env.items()]
    for path in line.values("env-file"):
        full = posixpath.normpath(posixpath.join(workdir, path))
        lines = await ctx.read_lines(full, optional=True)
        if lines is None:
            server.problems.append(f"{where}: --env-file {full} could not be read: `{line.cli} "
                                   "run` fails without it, and the container's variables are "
                                   "not established")
            continue
        got, error = parse_env_file("\n".join(lines) + "\n", caller)
        if error:
            server.problems.append(f"{full}: {error}: `{line.cli} run` refuses this env file "
                                   "(the container does not start)")
        for e in got:  # its lines are numbered as `lines` is: each is there
            text = lines[e.line - 1]
            entries.append((e, full, ctx.cite("file", f"{full}:{e.line}", text.strip(), text)))
    for value in line.values("env"):
        entries += [(e, "", server.argv_evidence[0] if server.argv_evidence else "")
                    for e in _flag_entries(server, line.cli, value, caller, where)]
    _apply(server, line, entries, unit_env, where)
    if line.entrypoint is None:  # the command is the image's ENTRYPOINT's arguments
        known = with_entrypoint(line.image, line.command, where,
                                await image_config(ctx, line.image, line.cli))
        server.argv = known.argv
        server.notes += known.notes
        server.argv_problems += known.problems
        # established from the image's config: its engine refuses the line (as Compose's)
        server.refused = server.refused or known.refused


def _flag_entries(server: Server, cli: str, value: str, caller: dict[str, str], where: str
                  ) -> list[EnvEntry]:
    """One ``-e``: docker sends a name its own environment lacks bare (the daemon removes it
    from the image's ENV); podman sends nothing for it, and ``NAME*`` takes every variable of
    its environment that starts with NAME (podman-run(1) --env)."""
    e = env_flag(value, caller)
    if cli != "podman" or e.value is not None:
        return [e]
    if value.endswith("*"):
        return [EnvEntry(k, v, raw=value) for k, v in caller.items() if k.startswith(value[:-1])]
    (server.problems if e.name.startswith("NCCL_") else server.notes).append(
        f"-e {e.name} ({where}): {e.name} is not set in the unit's environment, so podman "
        "passes nothing for it (the image's value, if it has one, stays)")
    return []


def _apply(server: Server, line: RunLine, entries: list[tuple[EnvEntry, str, str]],
           unit_env: dict[str, Setting], where: str) -> None:
    final = final_env([e for e, _, _ in entries])
    evidence = {id(e): (f, ev) for e, f, ev in entries}
    server.env = {}
    for name, e in final.items():
        file, ev = evidence[id(e)]
        from_file = bool(file) and not file.startswith("host:")  # an env file's own line
        if e.value is None:
            said = server.problems if name.startswith("NCCL_") else server.notes
            said.append(f"-e {name} ({where}): {name} is not set in the unit's environment, "
                        f"so the container does not get it (an image's value is removed)")
            continue
        if file.startswith("host:"):
            origin, file = f"{line.cli} --env-host (the unit's environment)", file[5:]
        else:
            origin = (f"{line.cli} --env-file" if file else f"{line.cli} run -e") + (
                f", from the unit's {name}" if "=" not in e.raw else "")
        server.env[name] = Setting(name=name, value=e.value, source=file or server.argv_source,
                                   line=e.line if file else server.argv_line, evidence=[ev],
                                   origin=origin)
        quoted = len(e.value) >= 2 and e.value[0] == e.value[-1] and e.value[0] in "'\""
        if from_file and quoted and name.startswith("NCCL_"):
            server.problems.append(
                f"{name}={e.value} ({file}:{e.line}): `{line.cli} run --env-file` keeps quotes "
                f"(no shell parsing), so the process gets the quote characters too; write "
                f"{name}={e.value[1:-1]}")
    for name, s in sorted(unit_env.items()):
        if name.startswith("NCCL_") and name not in server.env:
            server.problems.append(
                f"{name}={s.value} ({s.where}) is in the environment of the `{line.cli}` CLI "
                f"only: `{line.cli} run` does not pass it into the container (no -e {name})")
    server.runtime = line.cli
    server.container_name = line.last("name") or ""
    server.notes.append(f"started by systemd ({server.name}): `{line.cli} run` of image "
                        f"{line.image}; the image's own ENV (below these) is not visible here")
    if line.flag("env-host"):
        server.notes.append(f"`{line.cli} run --env-host`: the image's own ENV is above the "
                            "unit's environment (podman-run(1) ENVIRONMENT), so a name it sets "
                            "may not have the unit's value")
    server.argv = [*(line.entrypoint or []), *line.command]  # see contain: no --entrypoint
    if line.flag("detach") and server.container_name:  # its output goes to docker logs
        server.log_argv = [line.cli, "logs", "--tail", "2000", "--timestamps",
                           server.container_name]
    _host_options(server, line)


def _host_options(server: Server, line: RunLine) -> None:
    for v in line.values("volume"):
        parts = v.split(":")
        if len(parts) >= 2 and parts[0].startswith("/"):
            server.mounts[parts[0]] = parts[1]
    for m in line.values("mount"):
        kv = dict(p.partition("=")[::2] for p in m.split(","))
        src = kv.get("source") or kv.get("src")
        dst = kv.get("target") or kv.get("destination") or kv.get("dst")
        if kv.get("type", "volume") == "bind" and src and dst:
            server.mounts[src] = dst
    gpus = line.last("gpus")
    devices = [d for d in line.values("device") if "nvidia" in d]
    server.gpus = f"--gpus {gpus}" if gpus else "; ".join(devices)
    ipc, shm = line.last("ipc"), line.last("shm-size")
    server.notes.append(f"IPC mode {ipc or 'private'}, /dev/shm {shm or '64m (Docker default)'}")


def adopt(unit: Server, inspected: Server) -> None:
    """The container a unit's run line started, as ``inspect`` shows it: its command and
    environment are what the engine runs with (the authority); where the unit's line says
    otherwise, the difference is named (the line's takes effect when systemd starts it
    again)."""
    for name in sorted(set(unit.env) | set(inspected.env)):
        if not name.startswith("NCCL_") or name in NOT_TUNING:
            continue
        said, now = unit.env.get(name), inspected.env.get(name)
        if said is None:  # the name is in one of the two: the container's
            unit.problems.append(
                f"{name}={inspected.env[name].value} is in the running container "
                f"{inspected.name} but not on {unit.name}'s `{unit.runtime} run` line (the image "
                "sets it, or the line changed since): it is in effect now")
            continue
        if now is not None and said.value == now.value:
            continue
        unit.problems.append(
            f"{name}: the running container {inspected.name} has "
            f"{'it unset' if now is None else repr(now.value)} ({inspected.path}), while "
            f"{unit.name}'s `{unit.runtime} run` line declares {said.value!r} ({said.where}); "
            "the line's value takes effect only when systemd starts the unit again")
    if inspected.argv != unit.argv:
        unit.problems.append(f"the running container {inspected.name} runs "
                             f"`{' '.join(inspected.argv)}`, not what {unit.name}'s line now "
                             "says: the line takes effect only at the next start")
    unit.env = inspected.env
    # what the line's ENTRYPOINT left unknown, or refuses, concerns its next start, not what
    # runs now
    unit.problems += unit.argv_problems + ([f"at its next start: {unit.refused}"]
                                           if unit.refused else [])
    unit.argv_problems, unit.refused = [], ""
    unit.argv, unit.flags, unit.engine = inspected.argv, inspected.flags, inspected.engine
    unit.argv_evidence = [*inspected.argv_evidence, *unit.argv_evidence]
    unit.container_id, unit.rootfs = inspected.container_id, inspected.rootfs
    unit.mounts = inspected.mounts or unit.mounts
    unit.gpus = inspected.gpus or unit.gpus
    unit.notes.append(f"the container's environment and command are read from "
                      f"{inspected.path} (the authority while it exists)")
    if unit.state.value == "unknown":
        unit.state = inspected.state
