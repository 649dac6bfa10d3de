"""Plain processes: the engines running now, as the kernel shows them.

A process started by a unit or a container found by another runtime is that server running:
its environment is what is in effect, so an NCCL setting that differs from what the unit or
container now declares is named (the declared one takes effect only at the next restart). A
process no runtime accounts for (started by hand, from a shell, tmux or a script) is a server
of its own: running, and not coming back after a reboot. One whose cgroup names a systemd unit
that no unit file read declares was started by that unit: whether it comes back is unknown.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._authority import compare_running
from .._command import follow_command
from .._engines import engine_of, parse_serve_args
from .._model import HostModel, Server, Setting
from .._state import State

if TYPE_CHECKING:
    from ..._sandbox._context import RecipeContext


async def discover(ctx: RecipeContext, model: HostModel) -> list[Server]:
    got = await ctx.tool("serving_processes", optional=True)
    if got is None:
        model.looked_in.append("serving processes (not available: no capture in this "
                               "snapshot)")
        return []
    model.looked_in.append(f"serving processes ({got['source']})")
    out: list[Server] = []
    for proc in got["processes"]:
        if not isinstance(proc, dict) or not proc.get("argv"):
            continue
        owner = _owner(model.servers, proc.get("started_by") or {}) or next(
            (s for s in model.servers if s.runtime == "systemd" and s.pid == proc.get("pid")),
            None)  # systemctl show MainPID= names it when the cgroup did not
        if owner is not None:
            _attach(owner, proc, got["evidence_id"])
            continue
        if _child_of_known(proc, got["processes"], model.servers):
            continue
        if (proc.get("started_by") or {}).get("kind") == "pod" and any(
                s.runtime == "kubernetes" for s in model.servers):
            continue  # a pod's process: the workload found in the manifests stands for it
        server = await _server(ctx, proc, got["evidence_id"])
        if server is not None:
            out.append(server)
    return out


def _owner(servers: list[Server], started_by: dict[str, Any]) -> Server | None:
    kind, ident = started_by.get("kind"), str(started_by.get("id") or "")
    if not ident:
        return None
    for s in servers:
        if kind == "unit" and s.runtime == "systemd" and s.name == ident and not started_by.get(
                "manager"):  # a user unit is not the system unit of the same name
            return s
        if kind == "container" and s.container_id and (
                s.container_id.startswith(ident) or ident.startswith(s.container_id)):
            return s
    return None


def _child_of_known(proc: dict[str, Any], procs: list[Any], servers: list[Server]) -> bool:
    """An engine process whose parent is another engine process (a launcher and its server):
    the parent stands for both."""
    ppid = proc.get("ppid")
    return any(isinstance(p, dict) and p.get("pid") == ppid for p in procs) or any(
        s.pid is not None and s.pid == ppid for s in servers)


def _attach(server: Server, proc: dict[str, Any], evidence: str) -> None:
    server.pid = int(proc["pid"])
    server.notes.append(f"running as pid {server.pid}")
    if server.state.value == "unknown":
        server.state.value = "running"
        server.state.detail = f"a process (pid {server.pid}) runs it now"
        server.state.evidence = [evidence]
    _running_argv(server, proc, evidence)
    if not proc.get("env_readable"):
        server.notes.append(f"the environment of pid {server.pid} could not be read "
                            f"({proc.get('env_error', 'not permitted')}): the declared one is "
                            "used")
        return
    running = {k: str(v) for k, v in (proc.get("env") or {}).items() if k.startswith("NCCL_")}
    compare_running(server, running, evidence)


def _running_argv(server: Server, proc: dict[str, Any], evidence: str) -> None:
    """The process's command line is the one in effect: a unit edited (and reloaded) since
    the process started declares a command the process does not run until the next restart
    (systemd.service(5): ExecStart= is used when the unit starts). Where its serving flags
    differ, the process's are taken, and the difference is said."""
    argv = [str(a) for a in proc.get("argv") or []]
    if engine_of(argv) is None or "config" in server.flags:  # --config: the file adds flags
        return
    flags = parse_serve_args(argv)
    changed = sorted(k for k in set(flags) | set(server.flags)
                     if flags.get(k) != server.flags.get(k))
    if not changed:
        return
    said = ", ".join(f"{k}={server.flags.get(k)}" for k in changed)
    now = ", ".join(f"{k}={flags.get(k)}" for k in changed)
    text = (f"In effect now: process {server.pid} runs with {now}; the files say {said} "
            f"({server.argv_source}:{server.argv_line}): changed since the process started, "
            "a restart would apply it")
    server.problems.append(text)
    server.argv_drift.append(text)
    server.argv, server.flags = argv, flags
    server.argv_source, server.argv_line = f"/proc/{server.pid}/cmdline", 0
    server.argv_evidence = [evidence, *server.argv_evidence]


async def _server(ctx: RecipeContext, proc: dict[str, Any], evidence: str) -> Server | None:
    pid = int(proc["pid"])
    env = {k: Setting(name=k, value=str(v), source=f"process {pid} environment", line=0,
                      evidence=[evidence], origin="running process")
           for k, v in (proc.get("env") or {}).items()}
    who = proc.get("started_by") or {}
    # A process in a container no container CLI showed: its files are the image's, not the
    # host's (runtime "container" keeps them apart).
    runtime = "container" if who.get("kind") in ("container", "pod") else "process"
    server = Server(name=f"pid {pid}", path=f"/proc/{pid}", files=[],
                    argv=[str(a) for a in proc["argv"]], argv_source=f"/proc/{pid}/cmdline",
                    argv_line=0, argv_evidence=[evidence], env=env, runtime=runtime, pid=pid,
                    container_id=str(who.get("id") or "") if runtime == "container" else "")
    server.state = State(value="running", detail=f"pid {pid} is running", evidence=[evidence],
                         enabled=False,
                         enabled_detail="started by hand or by a script: nothing restarts it "
                                        "at boot")
    if runtime == "container":
        server.notes.append(f"runs in {who.get('kind')} {who.get('id')}, which no container "
                            "CLI or manifest here describes: its image's files are not read")
        server.state.enabled, server.state.enabled_detail = None, "its restart policy is unknown"
    elif who:  # a systemd unit (its cgroup says so) whose unit file no directory read holds
        unit = (f"the user unit {who.get('id')} of {who['manager']} (systemctl --user)"
                if who.get("manager") else f"the systemd unit {who.get('id')}")
        server.notes.append(f"started from {unit}" if who.get("manager")
                            else f"started from {who.get('kind')} {who.get('id')}")
        server.state.enabled, server.state.enabled_detail = None, (
            f"started by {unit}, which no unit file read here declares: whether it starts "
            "at boot is unknown")
    if proc.get("cwd"):
        server.notes.append(f"working directory {proc['cwd']}")
    if not proc.get("env_readable"):
        server.notes.append(f"its environment could not be read "
                            f"({proc.get('env_error', 'not permitted')}): NCCL settings are "
                            "unknown")
    return server if await follow_command(ctx, server) else None
