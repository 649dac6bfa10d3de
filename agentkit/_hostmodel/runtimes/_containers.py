"""Docker and Podman: containers that start an inference engine, read through ``ps`` and
``inspect`` (live, or the outputs a snapshot captured).

``inspect`` is the ground truth of what the container runs: ``Path``/``Args`` (the image's
entrypoint joined with its command, as the daemon resolved them), ``Config.Env`` (the image's
environment overlaid by ``-e``/``--env-file``/compose, as the process gets it), the state and
restart policy, the GPUs it was given and the mounts that map its paths to the host's.
"""

from __future__ import annotations

import json
import re
import shlex
from typing import TYPE_CHECKING, Any

from ..._bounded import loads_json
from .._command import follow_command
from .._engines import engine_of
from .._model import HostModel, Server, Setting
from .._state import State
from ._rununit import adopt

if TYPE_CHECKING:
    from ..._sandbox._context import RecipeContext

CLIS = ("docker", "podman")
# A container is inspected when its command or image could start a server (a host may run
# hundreds of containers; inspecting all of them is the cost this avoids).
_MAYBE = re.compile(r"vllm|sglang|trtllm|tensorrt|triton|python|\.sh\b|\bbash\b|\bsh\b", re.I)
_DEFAULT_SHM = 64 << 20  # Docker's /dev/shm without --shm-size or --ipc=host


def ps_argv(cli: str) -> list[str]:
    return [cli, "ps", "--all", "--no-trunc", "--format", "{{json .}}"]


def inspect_argv(cli: str, names: list[str]) -> list[str]:
    return [cli, "inspect", "--type", "container", *names]


def logs_argv(cli: str, name: str) -> list[str]:
    return [cli, "logs", "--tail", "2000", "--timestamps", name]


async def discover(ctx: RecipeContext, model: HostModel) -> list[Server]:
    servers: list[Server] = []
    listings = await ctx.tools([("run_command", {"argv": ps_argv(cli)}) for cli in CLIS])
    for cli, out in zip(CLIS, listings, strict=True):
        if out is None:
            model.looked_in.append(f"`{cli} ps` (not available here)")
            continue
        model.looked_in.append(f"`{cli} ps`")
        if out["exit_code"] != 0:
            model.problems.append(f"`{cli} ps` failed (exit {out['exit_code']}): "
                                  f"{out['stderr'].strip()[:200]}")
            continue
        rows = [c for c in parse_ps(out["stdout"]) if _MAYBE.search(c["hint"])][:64]
        # One inspect per container: one that cannot be read (gone since `ps`, not captured
        # in a snapshot) must not hide the others.
        got = await ctx.tools([("run_command", {"argv": inspect_argv(cli, [c["name"]])})
                               for c in rows])
        for row, inspected in zip(rows, got, strict=True):
            found = []
            if inspected is not None and inspected["exit_code"] == 0:
                for item, span in _items(inspected["stdout"]):
                    server = await _server(ctx, cli, item, inspected, span)
                    if server is not None:
                        found.append(server)
            elif engine_of(shlex_split(row["command"])) is not None:
                model.problems.append(f"`{cli} inspect {row['name']}` could not be read: its "
                                      "environment, mounts and restart policy are unknown")
                server = await _from_ps(ctx, cli, row, out)
                if server is not None:
                    found.append(server)
            for server in found:
                unit = next((s for s in model.servers if s.container_name == server.name
                             and s.runtime == cli), None)
                if unit is not None:  # a unit's `docker run` started it: one server
                    adopt(unit, server)
                else:
                    servers.append(server)
    return servers


def parse_ps(text: str) -> list[dict[str, str]]:
    """Containers from ``ps --format '{{json .}}'``: Docker prints one object per line,
    Podman one array; name and a hint (command and image) for each."""
    text = text.strip()
    if not text:
        return []
    try:
        rows = loads_json(text) if text.startswith("[") else [
            loads_json(line) for line in text.splitlines() if line.strip()]
    except ValueError:  # not JSON, or past the limits (agentkit._bounded)
        return []
    out = []
    for n, row in enumerate(rows if isinstance(rows, list) else [], 1):
        if not isinstance(row, dict):
            continue
        names = row.get("Names") or row.get("Name") or ""
        name = names[0] if isinstance(names, list) and names else str(names)
        command = row.get("Command") or ""
        command = " ".join(command) if isinstance(command, list) else str(command)
        if name:
            out.append({"name": name.split(",")[0].lstrip("/"), "command": command.strip('"'),
                        "state": str(row.get("State") or ""), "line": str(n),
                        "hint": f"{command} {row.get('Image', '')}"})
    return out


def shlex_split(command: str) -> list[str]:
    try:
        return shlex.split(command)
    except ValueError:
        return command.split()


async def _from_ps(ctx: RecipeContext, cli: str, row: dict[str, str], out: dict[str, Any]
                   ) -> Server | None:
    """A container `ps` shows running an engine, when `inspect` cannot be read: its command
    and state only."""
    n = int(row["line"]) if out["stdout"].lstrip().startswith("{") else 0
    ev = ctx.cite_output_line(out, n) if n else str(out["evidence_id"])
    server = Server(name=row["name"], path=f"{cli} ps", files=[],
                    argv=shlex_split(row["command"]), argv_source=f"{cli} ps", argv_line=0,
                    argv_evidence=[ev], env={}, runtime=cli, log_argv=logs_argv(cli, row["name"]))
    value = {"running": "running", "restarting": "crash-looping", "exited": "stopped",
             "created": "stopped", "dead": "failed"}.get(row["state"].lower(), "unknown")
    server.state = State(value=value, detail=f"{cli} ps: {row['state']}", evidence=[ev])
    server.notes.append(f"read from `{cli} ps` only: its environment (NCCL settings), mounts "
                        "and restart policy are unknown")
    return server if await follow_command(ctx, server) else None


def _items(text: str) -> list[tuple[dict[str, Any], tuple[int, int]]]:
    """The inspected containers, each with the output lines its object spans (to cite the
    line of each setting)."""
    try:
        data = loads_json(text)
    except ValueError:  # not JSON, or past the limits (agentkit._bounded)
        return []
    if not isinstance(data, list):
        return []
    lines = text.splitlines()
    starts = [n for n, ln in enumerate(lines, 1) if re.match(r'^\s*"Id":', ln)]
    # compact JSON (one line, no "Id" at a line's start) has no spans: the whole output
    ends = [*starts[1:], len(lines) + 1] if starts else []
    spans = [(a, b - 1) for a, b in zip(starts, ends, strict=True)]
    items = [d for d in data if isinstance(d, dict)]
    if len(spans) != len(items):
        spans = [(1, len(lines))] * len(items)
    return list(zip(items, spans, strict=True))


def _line_of(out: dict[str, Any], span: tuple[int, int], needle: str) -> int:
    lines = out["stdout"].splitlines()
    for n in range(span[0], min(span[1], len(lines)) + 1):
        if needle in lines[n - 1]:
            return n
    return 0


async def _server(ctx: RecipeContext, cli: str, item: dict[str, Any], out: dict[str, Any],
                  span: tuple[int, int]) -> Server | None:
    config = item.get("Config") or {}
    name = str(item.get("Name") or config.get("Hostname") or "?").lstrip("/")
    argv = [str(item.get("Path") or ""), *[str(a) for a in item.get("Args") or []]]
    if not argv[0]:
        argv = [str(a) for a in (config.get("Entrypoint") or []) + (config.get("Cmd") or [])]
    if not argv or not argv[0]:
        return None
    where = f"{cli} inspect {name}"

    def cite(needle: str) -> str:
        n = _line_of(out, span, needle)
        return ctx.cite_output_line(out, n) if n else out["evidence_id"]

    labels = config.get("Labels") or {}
    compose = labels.get("com.docker.compose.project.config_files", "")
    env: dict[str, Setting] = {}
    for entry in config.get("Env") or []:
        key, _, value = str(entry).partition("=")
        env[key] = Setting(name=key, value=value, source=f"{where}, Config.Env", line=0,
                           evidence=[cite(json.dumps(str(entry)))],
                           origin="container environment")
    arg_ev = cite('"Args"') if item.get("Args") else cite('"Cmd"')
    runtime = "compose" if compose else cli
    server = Server(name=name, path=where, files=[compose] if compose else [], argv=argv,
                    argv_source=where, argv_line=0, argv_evidence=[arg_ev], env=env,
                    user=str(config.get("User") or "root").split(":")[0] or "root",
                    runtime=runtime, log_argv=logs_argv(cli, name),
                    container_id=str(item.get("Id") or "")[:12])
    if compose:
        server.compose_project = str(labels.get("com.docker.compose.project", ""))
        server.compose_service = str(labels.get("com.docker.compose.service", ""))
        server.notes.append(f"started by Docker Compose ({compose}, service "
                            f"{server.compose_service or '?'})")
    _state(server, item, cite)
    ipc, shm = _host_config(server, item, env)
    if not await follow_command(ctx, server):
        return None
    if server.tp * _int(server.flags.get("pipeline_parallel_size")) > 1 and ipc != "host" \
            and shm <= _DEFAULT_SHM:
        server.problems.append(
            f"/dev/shm is {shm >> 20} MiB and the IPC namespace is private: NCCL and the "
            "engine's workers share memory through /dev/shm, so this multi-GPU server can fail "
            "or slow down (run it with --ipc=host or a larger --shm-size)")
    return server


def _int(value: object) -> int:
    try:
        return max(1, int(str(value)))
    except ValueError:
        return 1


def _state(server: Server, item: dict[str, Any], cite: Any) -> None:
    st = item.get("State") or {}
    status = str(st.get("Status") or "")
    restarts = int(item.get("RestartCount") or 0)
    value = {"running": "running", "restarting": "crash-looping", "created": "stopped",
             "paused": "stopped", "dead": "failed"}.get(status)
    if status == "exited":
        value = "failed" if int(st.get("ExitCode") or 0) != 0 else "stopped"
    server.state = State(value=value or "unknown",
                         detail=f"{server.runtime} inspect: State.Status {status}"
                                + (f", exit code {st.get('ExitCode')}" if status == "exited"
                                   else "") + (f", restarted {restarts} times" if restarts
                                               else ""),
                         evidence=[cite('"Status"')], restarts=restarts)
    policy = str(((item.get("HostConfig") or {}).get("RestartPolicy") or {}).get("Name") or "no")
    # The daemon starts these again when it starts (at boot): the container's "enabled".
    # unless-stopped: not after it was stopped (an exited one was stopped, or it would restart)
    server.state.enabled = policy == "always" or (
        policy == "unless-stopped" and status not in ("exited", "created"))
    server.state.enabled_detail = f"restart policy {policy}" + (
        ", and it was stopped" if policy == "unless-stopped" and not server.state.enabled
        else "")
    server.state.enabled_evidence = [cite('"RestartPolicy"')]


def _host_config(server: Server, item: dict[str, Any], env: dict[str, Setting]
                 ) -> tuple[str, int]:
    hc = item.get("HostConfig") or {}
    gpus = []
    for req in hc.get("DeviceRequests") or []:
        caps = [c for group in req.get("Capabilities") or [] for c in group]
        if "gpu" in caps or req.get("Driver") == "nvidia":
            ids = req.get("DeviceIDs")
            gpus.append(f"GPUs {','.join(ids)}" if ids else
                        "all GPUs" if req.get("Count") == -1 else f"{req.get('Count')} GPUs")
    nvd = env.get("NVIDIA_VISIBLE_DEVICES")
    if not gpus and nvd is not None and hc.get("Runtime") == "nvidia":
        gpus.append(f"NVIDIA_VISIBLE_DEVICES={nvd.value}")
    for dev in hc.get("Devices") or []:  # CDI or --device /dev/nvidiaN
        path = str(dev.get("PathOnHost") or "")
        if re.fullmatch(r"/dev/nvidia\d+", path):
            gpus.append(path)
    server.gpus = "; ".join(gpus)
    merged = ((item.get("GraphDriver") or {}).get("Data") or {}).get("MergedDir")
    if merged and (item.get("State") or {}).get("Running"):  # mounted only while it runs
        server.rootfs = str(merged)
    for m in item.get("Mounts") or []:
        if m.get("Source") and m.get("Destination"):
            server.mounts[str(m["Source"])] = str(m["Destination"])
    ipc = str(hc.get("IpcMode") or "")
    shm = int(hc.get("ShmSize") or _DEFAULT_SHM)
    server.notes.append(f"IPC mode {ipc or 'private'}, /dev/shm {shm >> 20} MiB")
    return ipc, shm
