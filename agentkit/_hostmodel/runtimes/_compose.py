"""Docker Compose files on the host: services that would start an inference engine, read
offline (a snapshot without the container CLI's captures, or a daemon agentkit may not ask).

A service a running or stopped container already shows (found by ``docker``/``podman``
inspect, whose compose labels name the project and service) is that container: the compose
file adds nothing. Otherwise the service is declared, not shown running. Compose's own rules:
``environment`` wins over ``env_file`` (later files win over earlier ones); a list-form
``environment`` entry without ``=`` takes its value from the shell that ran compose (unknown
here); a string ``command`` is split like a shell would; an override file in the same
directory (``compose.override.yaml``) is merged over the main file, ``environment`` by key.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from typing import TYPE_CHECKING, Any

from .._command import follow_command
from .._model import NOT_TUNING, HostModel, Server, Setting
from .._state import State
from ._dotenv import DotenvError, parse_dotenv
from ._entrypoint import image_config, with_entrypoint
from ._given import manifest_dirs
from ._interp import InvalidTemplate, MissingRequired, substitute
from ._yaml import load_yaml

if TYPE_CHECKING:
    from ..._sandbox._context import RecipeContext

_DIRS = ("/opt/*", "/srv/*", "/root/*", "/home/*/*", "/etc/docker/compose/*")
_NAMES = ("compose.y*ml", "docker-compose.y*ml")
_OVERRIDES = ("compose.override.yaml", "compose.override.yml", "docker-compose.override.yaml",
              "docker-compose.override.yml")
_ENGINE_WORDS = re.compile(r"vllm|sglang|trtllm|tensorrt", re.I)
# an override file: its path, its lines, its services
_Over = tuple[str, list[str], dict[str, Any]]


async def discover(ctx: RecipeContext, model: HostModel) -> list[Server]:
    model.looked_in.append("Docker Compose files (" + ", ".join(
        f"{d}/{{compose,docker-compose}}.y*ml" for d in _DIRS[:3]) + ", …)")
    dirs = (*_DIRS, *(d.rstrip("/") for d in manifest_dirs(ctx)))
    listings = await ctx.tools([("glob", {"pattern": f"{d}/{n}"}) for d in dirs
                                for n in _NAMES])
    # and the files a systemd unit's `docker compose up` names, wherever they are
    hinted = await ctx.tools([("glob", {"pattern": f}) for f in model.compose_units])
    files = sorted({p for got in [*listings, *hinted] for p in (got or {}).get("paths", [])
                    if not any(p.endswith(o) for o in _OVERRIDES)})
    shown = {(s.compose_project, s.compose_service): s for s in model.servers
             if s.compose_project}
    names = {s.name: s for s in model.servers}
    out: list[Server] = []
    for path in files:
        lines = await ctx.read_lines(path, optional=True)
        if lines is None or not _ENGINE_WORDS.search("\n".join(lines)):
            continue
        docs = load_yaml("\n".join(lines))
        spec = docs[0] if docs and isinstance(docs[0], dict) else {}
        project = str(spec.get("name") or posixpath.basename(posixpath.dirname(path)))
        project = re.sub(r"[^a-z0-9_-]", "", project.lower())
        services = spec.get("services") or {}
        override = await _override(ctx, path)
        for svc, body in sorted((k, v) for k, v in services.items()
                                if not k.startswith("__") and isinstance(v, dict)):
            merged = _merge(body, override, svc)
            name = str(merged.get("container_name") or f"{project}-{svc}-1")
            running = shown.get((project, svc)) or names.get(name)
            if running is not None:  # the container itself was inspected: the authority
                await drift(ctx, path, lines, merged, running)
                continue
            server = await _server(ctx, path, lines, project, svc, name, merged)
            if server is not None and path in model.compose_units:
                unit = model.compose_units[path]
                server.notes.append(f"started by systemd unit {unit} (`docker compose up`)")
                server.state.enabled = None
                server.state.enabled_detail = (f"started at boot by {unit} if that unit is "
                                               "enabled")
            if server is not None:
                out.append(server)
    return out


async def _override(ctx: RecipeContext, path: str) -> _Over | None:
    base = posixpath.dirname(path)
    got = await ctx.tools([("glob", {"pattern": f"{base}/{o}"}) for o in _OVERRIDES])
    found = [p for g in got for p in (g or {}).get("paths", [])]
    if not found:
        return None
    lines = await ctx.read_lines(found[0], optional=True)
    docs = load_yaml("\n".join(lines or []))
    spec = docs[0] if docs and isinstance(docs[0], dict) else {}
    services = spec.get("services") or {}
    return (found[0], lines or [], services) if isinstance(services, dict) else None


def _over(body: dict[str, Any]) -> _Over:
    got: _Over = body.get("__over__") or ("", [], {})
    return got


def _merge(body: dict[str, Any], override: _Over | None, svc: str) -> dict[str, Any]:
    over = override[2].get(svc) if override else None
    if override is None or not isinstance(over, dict):
        return body
    merged = {**body, **{k: v for k, v in over.items() if not k.startswith("__")}}
    if "environment" in body and "environment" in over:
        merged["environment"] = {**_env_map(body["environment"]),
                                 **_env_map(over["environment"])}
    # what the override set is cited in the override, at its own lines
    merged["__over__"] = (override[0], override[1], over)
    return merged


def _env_map(env: Any) -> dict[str, Any]:
    if isinstance(env, dict):
        return {k: v for k, v in env.items() if not k.startswith("__")}
    out: dict[str, Any] = {}
    for item in env if isinstance(env, list) else []:
        key, eq, value = str(item).partition("=")
        out[key] = value if eq else None
    return out


def _words(value: Any) -> list[str]:
    if isinstance(value, list):
        return [str(v) for v in value]
    if isinstance(value, str):
        try:
            return shlex.split(value)
        except ValueError:
            return value.split()
    return []


async def _server(ctx: RecipeContext, path: str, lines: list[str], project: str, svc: str,
                  name: str, body: dict[str, Any]) -> Server | None:
    keys = body.get("__keys__", {})
    over_path, over_lines, over = _over(body)

    def cite(key: str) -> tuple[str, int, str]:
        if key in over.get("__keys__", {}):
            n = int(over["__keys__"][key])
            return over_path, n, ctx.cite_file_node(over_path, over_lines, n)
        n = int(keys.get(key) or body.get("__line__") or 0)
        return path, n, ctx.cite_file_node(path, lines, n)

    dotenv = await _dotenv(ctx, posixpath.dirname(path))
    env, notes = await _environment(ctx, path, lines, body, dotenv)
    image = str(body.get("image") or "")
    entry = _words(body.get("entrypoint"))
    command = [_interpolate(w, dotenv) for w in _words(body.get("command"))]
    server_problems = [n for n in notes if n.startswith("NCCL_")]
    at, line, ev = cite("command" if "command" in {**keys, **over.get("__keys__", {})}
                        else "entrypoint")
    argv, doubts, refused = [*entry, *command], [], ""
    if not entry:  # `command` is the image's ENTRYPOINT's arguments (Docker's rule)
        got = with_entrypoint(image, command, f"{at}:{line}", await image_config(ctx, image))
        argv = got.argv
        notes += got.notes
        doubts, refused = got.problems, got.refused
    server = Server(name=name, path=path, files=[path], argv=argv,
                    argv_source=at, argv_line=line, argv_evidence=[ev], env=env,
                    runtime="compose", notes=notes, problems=server_problems)
    server.argv_problems = doubts
    server.refused = refused
    server.notes.append(f"declared in {path} (project {project}, service {svc}); no container "
                        "was inspected, so whether it runs is not shown")
    restart = str(body.get("restart") or "no")
    server.state = State(detail="declared in a compose file; whether it runs is not shown",
                         enabled=restart in ("always", "unless-stopped"),
                         enabled_detail=f"restart: {restart}",
                         enabled_evidence=[cite("restart")[2]] if "restart" in keys else [])
    profiles = [str(p) for p in body.get("profiles") or []]
    if profiles:  # `compose up` without --profile does not start it
        server.state.enabled = False
        server.state.enabled_detail = (f"in profile {', '.join(profiles)}: started only when "
                                       "that profile is asked for")
    _resources(server, body, posixpath.dirname(path))
    _binds(server, body, dotenv, path, lines)
    return server if await follow_command(ctx, server) else None


async def _dotenv(ctx: RecipeContext, base: str) -> dict[str, str]:
    """The project's ``.env``: compose interpolates ``${VAR}`` in the file from it."""
    lines = await ctx.read_lines(f"{base}/.env", optional=True)
    return {k: v for k, v, _ in parse_env_file(lines or [])}


def _interpolate(text: str, values: dict[str, str], unknown: list[str] | None = None) -> str:
    """Compose's interpolation (:mod:`._interp`) from the project's ``.env``. A name the
    ``.env`` does not set may come from the shell that ran compose, which is not known here:
    it is taken as unset (what compose does when that shell does not set it) and named in
    ``unknown``. A template compose would refuse is kept as written, with the reason."""
    def lookup(name: str) -> str | None:
        if name not in values and unknown is not None and name not in unknown:
            unknown.append(name)
        return values.get(name)

    try:
        return substitute(text, lookup)
    except (InvalidTemplate, MissingRequired) as exc:
        if unknown is not None:
            unknown.append(f"{text!r} ({exc})")
        return text


def parse_env_file(lines: list[str], values: dict[str, str] | None = None,
                   unknown: list[str] | None = None) -> list[tuple[str, str, int]]:
    """(name, value, line) of a Compose ``.env`` / ``env_file`` (:mod:`._dotenv`), its
    ``$VAR`` taken from ``values`` (the project's ``.env``) else from the names above it; a
    name neither holds may be set by the shell that ran compose: named in ``unknown``. A file
    compose refuses to read gives nothing, and the reason is in ``unknown``."""
    known = values or {}

    def lookup(name: str) -> str | None:
        if name not in known and unknown is not None and name not in unknown:
            unknown.append(name)
        return known.get(name)

    try:
        return [(e.name, e.value, e.line) for e in parse_dotenv("\n".join(lines), lookup)]
    except (DotenvError, InvalidTemplate, MissingRequired) as exc:
        if unknown is not None:
            unknown.append(f"nothing: compose refuses the file ({exc})")
        return []


async def _environment(ctx: RecipeContext, path: str, lines: list[str], body: dict[str, Any],
                       dotenv: dict[str, str]) -> tuple[dict[str, Setting], list[str]]:
    env: dict[str, Setting] = {}
    notes: list[str] = []
    base = posixpath.dirname(path)
    files = body.get("env_file")
    for item in files if isinstance(files, list) else ([files] if files else []):
        rel = str(item.get("path") if isinstance(item, dict) else item)
        if rel.startswith("~"):  # compose-go: the home ($HOME) of the user who ran compose
            notes.append(f"env_file {rel} ({path}): ~ is the home directory of the user who "
                         "ran compose, which the host's files do not show: its variables are "
                         "not established")
            continue
        full = posixpath.normpath(posixpath.join(base, rel))
        found = await ctx.read_lines(full, optional=True)
        if found is None:
            required = not (isinstance(item, dict) and item.get("required") is False)
            if required:
                notes.append(f"env_file {full} could not be read: its variables are unknown")
            continue
        outside: list[str] = []
        entries = parse_env_file(found, dotenv, outside)
        for i, (key, value, n) in enumerate(entries):
            ev = ctx.cite("file", f"{full}:{n}", found[n - 1].strip(), found[n - 1])
            env[key] = Setting(name=key, value=value, source=full, line=n, evidence=[ev],
                               origin="compose env_file")
            # only the names this entry refers to (its value may span lines up to the next)
            end = entries[i + 1][2] - 1 if i + 1 < len(entries) else len(found)
            own = "\n".join(found[n - 1:end])
            lacks = [m for m in outside if re.search(rf"\${{?{re.escape(m)}\b", own)]
            if lacks:
                notes.append(f"{key} ({full}:{n}) may depend on {', '.join(lacks)}, which "
                             "the project's .env does not set: taken as unset in the shell "
                             "that ran compose, which is not established")
        if outside and outside[-1].startswith("nothing:"):
            notes.append(f"env_file {full}: {outside[-1]}")
    raw = body.get("environment")
    over_path, over_lines, over = _over(body)
    over_env = over.get("environment")
    for key, value in _env_map(raw).items():
        at, at_lines, at_raw = path, lines, raw
        if over_env is not None and key in _env_map(over_env):  # set by the override file
            at, at_lines, at_raw = over_path, over_lines, over_env
        n = _env_line(at_raw, key, at_lines)
        ev = ctx.cite_file_node(at, at_lines, n)
        if value is None:
            notes.append(f"{key} takes its value from the shell that ran compose: unknown")
            env.pop(key, None)
            continue
        unknown: list[str] = []
        env[key] = Setting(name=key, value=_interpolate(str(value), dotenv, unknown),
                           source=at, line=n, evidence=[ev], origin="compose environment")
        if unknown:
            notes.append(f"{key} ({at}:{n}) depends on {', '.join(unknown)}, which the "
                         "project's .env does not set: taken as unset in the shell that ran "
                         "compose, which is not established")
    return env, notes


def _env_line(raw: Any, key: str, lines: list[str]) -> int:
    if isinstance(raw, dict) and key in raw.get("__keys__", {}):
        return int(raw["__keys__"][key])
    start = int(raw.get("__line__", 1)) if isinstance(raw, dict) else 1
    for n in range(max(start, 1), len(lines) + 1):
        if re.search(rf"(^|[\s\-\"']){re.escape(key)}\s*[=:]", lines[n - 1]):
            return n
    return 0


def _resources(server: Server, body: dict[str, Any], base: str) -> None:
    devices = (((body.get("deploy") or {}).get("resources") or {}).get("reservations")
               or {}).get("devices") or []
    for d in devices if isinstance(devices, list) else []:
        if isinstance(d, dict) and ("gpu" in (d.get("capabilities") or [])
                                    or d.get("driver") == "nvidia"):
            ids = d.get("device_ids")
            server.gpus = (f"GPUs {','.join(map(str, ids))}" if ids else
                           "all GPUs" if str(d.get("count")) == "all" else
                           f"{d.get('count')} GPUs")
    if not server.gpus and body.get("gpus"):
        server.gpus = f"gpus: {body['gpus']}"


def _binds(server: Server, body: dict[str, Any], dotenv: dict[str, str], path: str,
           lines: list[str]) -> None:
    """Bind mounts as compose-go resolves their sources: the file interpolated first, a short
    ``SRC:DST`` is a bind when SRC starts with ``.``, ``/`` or ``~``; ``~`` is the home of the
    user who ran compose (not shown by the host's files: not established, and the mount keeps
    the literal source, so no host path is guessed); a relative source is joined to the
    project directory."""
    start = int((body.get("__keys__") or {}).get("volumes") or 0)
    for v in body.get("volumes") or []:
        unknown: list[str] = []
        if isinstance(v, str):
            n = next((i for i in range(max(start, 1), len(lines) + 1) if v in lines[i - 1]), 0)
            src, colon, dst = _interpolate(v, dotenv, unknown).partition(":")
            dst = dst.split(":")[0]
            if not colon or (not src.startswith((".", "/", "~")) and (src or not unknown)):
                continue  # an anonymous or named volume: no host path
        elif isinstance(v, dict) and v.get("type") == "bind":
            n = int(v.get("__line__") or 0)
            src = _interpolate(str(v.get("source") or ""), dotenv, unknown)
            dst = str(v.get("target") or "")
        else:
            continue
        where = f"{path}:{n}"
        if not src:
            server.problems.append(f"{where}: the bind source is empty unless the shell that "
                                   f"ran compose sets {', '.join(unknown)}: the host path "
                                   f"mounted at {dst} is not established")
        elif src.startswith("~"):
            server.mounts[src] = dst
            server.problems.append(f"{where}: the bind source {src} starts with ~, the home "
                                   "directory of the user who ran compose ($HOME), which the "
                                   f"host's files do not show: the host path mounted at {dst} "
                                   "is not established")
        else:
            server.mounts[posixpath.normpath(posixpath.join(posixpath.dirname(path), src))] \
                = dst
            if unknown:
                server.notes.append(f"{where}: the bind source depends on "
                                    f"{', '.join(unknown)}, which the project's .env does not "
                                    "set: taken as unset in the shell that ran compose")


async def drift(ctx: RecipeContext, path: str, lines: list[str], body: dict[str, Any],
                running: Server) -> None:
    """A container Compose created before its file was edited keeps the environment it was
    created with: ``docker compose up -d`` recreates it when the service's configuration
    changed, nothing else does. NCCL tuning the file now declares and the container lacks
    (or has otherwise), and tuning the container has that the file no longer declares, is
    named on the running server."""
    dotenv = await _dotenv(ctx, posixpath.dirname(path))
    declared, _notes = await _environment(ctx, path, lines, body, dotenv)
    for name in sorted(set(declared) | set(running.env)):
        if not name.startswith("NCCL_") or name in NOT_TUNING:
            continue
        said, has = declared.get(name), running.env.get(name)
        if said is not None and has is not None and said.value == has.value:
            continue
        if said is not None:
            now = f"it has {has.value!r}" if has is not None else "it does not have it"
            running.problems.append(
                f"{name}={said.value} is declared in {said.where} but not in the running "
                f"container {running.name} ({now}): the file was changed after the container "
                "was created, and needs `docker compose up -d` (which recreates it) to apply")
        elif has is not None:
            running.problems.append(
                f"{name}={has.value} is in the running container {running.name} but {path} no "
                "longer declares it (unless the image sets it): the next `docker compose up "
                "-d` recreates the container without it")
