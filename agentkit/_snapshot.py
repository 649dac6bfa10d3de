"""``agentkit snapshot``: capture what the catalog investigations read on a host.

Every catalog task runs against the host with a recorder on: each file read is copied
(redacted) to the same path under OUT, each command's output and the NVML reading go to
``OUT/.agentkit/`` with a manifest. Investigating OUT elsewhere reads the same bytes, so it
gives the same answer as the live host.
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ._catalog._load import load_catalog
from ._catalog._planner import CatalogPlanner
from ._catalog._recipe import RecipeRunner
from ._catalog._synth import TemplateSynthesizer
from ._orchestrator import Orchestrator
from ._sandbox._captures import CAPTURE_DIR, CapturedCommand, Manifest
from ._sandbox._files import decode_text
from ._sandbox._host import Host
from ._sandbox._paths import PathRefused, Root, read_bytes
from ._sandbox._redact import redact, redact_file
from ._sandbox._sandbox import Sandbox
from ._sandbox._tool import Tool, ToolContext, ToolOutput
from ._types import Plan, TaskSpec


class SnapshotError(Exception):
    pass


BASIC_COMMANDS = [
    ["uname", "-r"],
    ["nvidia-smi", "-q"],
    ["nvidia-smi", "topo", "-m"],
    ["nvidia-smi", "--query-gpu=index,name,compute_cap,memory.total,driver_version,pci.bus_id",
     "--format=csv"],
]


@dataclass
class SnapshotReport:
    out: str
    files: list[str] = field(default_factory=list)
    commands: list[list[str]] = field(default_factory=list)
    nvml: bool = False
    task_status: dict[str, str] = field(default_factory=dict)
    unavailable: list[str] = field(default_factory=list)


async def take_snapshot(source: Host, out: str | os.PathLike[str],
                        task_dirs: list[str] | None = None, hostname: str = "") -> SnapshotReport:
    dest = Path(out)
    if dest.exists() and any(dest.iterdir()):
        raise SnapshotError(f"{dest} exists and is not empty; give a new directory")
    paths: set[str] = set()
    commands: dict[tuple[str, ...], dict[str, Any]] = {}
    nvml: dict[str, Any] = {}
    procs: dict[str, Any] = {}  # "list": the serving processes, once the tool has run

    async def record(tool: Tool, ctx: ToolContext, args: dict[str, Any], task: str, step: int,
                     index: int) -> ToolOutput:
        result = await tool.run(ctx, args)
        if tool.name == "run_command":
            commands.setdefault(tuple(args["argv"]), result.data)
        elif tool.name == "gpu_info" and result.data.get("available"):
            nvml.update(result.data)
        elif tool.name == "serving_processes" and "list" not in procs and result.data:
            procs["list"] = result.data.get("processes", [])
        return result

    root = Root(source.root.path, source.root.allow, recorder=paths.add)
    host = replace(source, root=root)
    catalog = load_catalog(task_dirs)
    orch = Orchestrator(CatalogPlanner(catalog), RecipeRunner(catalog), TemplateSynthesizer(),
                        host, executor=record)
    plan = Plan(question="snapshot", mode="catalog", tasks=[
        TaskSpec(id=t.name, title=t.title, objective=t.description, tools=t.tools,
                 template=t.name) for t in catalog.values()])
    results = await orch.run_tasks(plan)
    report = SnapshotReport(out=str(dest), task_status={r.task_id: r.status for r in results})
    # The basics are captured even when no recipe got far enough to ask for them (no serving
    # unit found, say): a snapshot should show the machine, and say what was not available.
    await _basics(Sandbox(host, task_id="snapshot", executor=record), commands, nvml, report)
    dest.mkdir(parents=True, exist_ok=True)
    for p in sorted(paths):
        if _copy(source.root, p, dest, source.read_limit):
            report.files.append(p)
    _write_captures(dest, commands, nvml, hostname or os.uname().nodename, report)
    extra: dict[str, Any] = {}
    if source.manifest_dirs:  # so that the snapshot reads them again, offline
        extra["manifest_dirs"] = list(source.manifest_dirs)
    if "list" in procs:  # an empty list is a fact too: no engine process was running
        # what the tool returned: engine processes only, their environment already filtered
        (dest / CAPTURE_DIR / "processes.json").write_text(json.dumps(procs["list"], indent=1))
        extra["processes"] = "processes.json"
    if extra:
        manifest_path = dest / CAPTURE_DIR / "snapshot.json"
        data = json.loads(manifest_path.read_text())
        manifest_path.write_text(json.dumps({**data, **extra}, indent=2))
    return report


async def _basics(box: Sandbox, commands: dict[tuple[str, ...], dict[str, Any]],
                  nvml: dict[str, Any], report: SnapshotReport) -> None:
    """The basic captures and NVML, asked for where no recipe did; what cannot be had is
    said in the report."""
    for argv in BASIC_COMMANDS:
        if tuple(argv) not in commands:
            got = await box.call("run_command", {"argv": argv})
            if not got.ok:
                report.unavailable.append(f"{' '.join(argv)}: {got.error}")
    if not nvml:
        got = await box.call("gpu_info", {})
        if not got.data.get("available"):
            report.unavailable.append(f"NVML: {got.data.get('reason', got.error)}")


def _copy(root: Root, host_path: str, dest: Path, limit: int) -> bool:
    if host_path.startswith(f"/{CAPTURE_DIR}/") or host_path == f"/{CAPTURE_DIR}":
        return False
    try:
        data, _, canonical = read_bytes(root, host_path, limit)
        mode = os.stat(os.path.join(root.path, canonical.lstrip("/"))).st_mode & 0o777
    except (PathRefused, OSError):
        return False
    text, binary = decode_text(data)
    if binary:
        return False
    target = dest / host_path.lstrip("/")
    target.parent.mkdir(parents=True, exist_ok=True)
    # redacted as the file tools redact it (.env by the stricter rule), and no more readable
    # than the original (a 0600 file stays 0600)
    target.write_text(redact_file(canonical, text), encoding="utf-8")
    os.chmod(target, mode | 0o200)  # the owner keeps write access to tidy the snapshot
    return True


def _write_captures(dest: Path, commands: dict[tuple[str, ...], dict[str, Any]],
                    nvml: dict[str, Any], hostname: str, report: SnapshotReport) -> None:
    cap = dest / CAPTURE_DIR
    (cap / "commands").mkdir(parents=True, exist_ok=True)
    captured: list[CapturedCommand] = []
    for n, (argv, data) in enumerate(sorted(commands.items()), 1):
        slug = re.sub(r"[^A-Za-z0-9._-]+", "-", " ".join(argv)).strip("-")[:60]
        name = f"commands/{n:02d}-{slug}.txt"
        (cap / name).write_text(redact(data.get("stdout", "")), encoding="utf-8")
        captured.append(CapturedCommand(argv=list(argv), stdout=name,
                                        exit_code=int(data.get("exit_code", 0))))
        report.commands.append(list(argv))
    manifest = Manifest(host=hostname, commands=captured,
                        captured_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    if nvml:
        clean = {k: v for k, v in nvml.items()
                 if k not in ("available", "source", "system_evidence_id")}
        for dev in clean.get("devices", []):
            dev.pop("evidence_id", None)
        if clean.get("topology"):
            clean["topology"] = {k: v for k, v in clean["topology"].items()
                                 if k != "evidence_id"}
        (cap / "nvml.json").write_text(json.dumps(clean, indent=2), encoding="utf-8")
        manifest.nvml = "nvml.json"
        report.nvml = True
    (cap / "snapshot.json").write_text(manifest.model_dump_json(indent=2), encoding="utf-8")
