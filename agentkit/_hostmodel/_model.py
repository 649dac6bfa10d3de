"""The host model's data: the model servers found, each with its evidence, and which one
serves the current deployment."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ._nccl_values import known
from ._state import State

# NCCL variables that change nothing about speed: logging, and the pointer to a config file.
# NCCL_VERSION is the version label NVIDIA's CUDA images set (ENV NCCL_VERSION); NCCL never
# reads it.
NOT_TUNING = frozenset({"NCCL_DEBUG", "NCCL_DEBUG_SUBSYS", "NCCL_DEBUG_FILE", "NCCL_CONF_FILE",
                        "NCCL_VERSION"})


@dataclass
class Setting:
    """One environment variable as the server gets it, and where it comes from."""

    name: str
    value: str
    source: str
    line: int
    evidence: list[str]
    origin: str = ""
    comment: str = ""

    @property
    def where(self) -> str:
        return f"{self.source}:{self.line}" if self.line else self.source

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "value": self.value, "source": self.source,
                "line": self.line, "where": self.where, "origin": self.origin,
                "comment": self.comment,
                "evidence_id": self.evidence[0] if self.evidence else ""}


@dataclass
class Server:
    """One model server: a systemd unit, a container, a Kubernetes workload or a process
    that starts an inference engine."""

    name: str
    path: str
    files: list[str]
    argv: list[str]
    argv_source: str
    argv_line: int
    argv_evidence: list[str]
    env: dict[str, Setting]
    user: str = "root"
    problems: list[str] = field(default_factory=list)
    # "file:line: why" for each construct the environment depends on that was not resolved
    # (a wildcard, a host-dependent specifier): the settings it would give are not established
    unresolved: list[str] = field(default_factory=list)
    removed: dict[str, Setting] = field(default_factory=dict)
    # assignments the runtime reads and drops (systemd: ``export NAME=…`` in an env file)
    ignored: list[Setting] = field(default_factory=list)
    # names whose value the reading cannot establish (a start script's condition, $(…), …),
    # each at its line with the reason as origin; env_open: where any other name may change
    # too (eval of computed text, an unreadable sourced file, a launch under a condition)
    unknown_env: dict[str, Setting] = field(default_factory=dict)
    env_open: Setting | None = None
    # NCCL variables a start script sets without exporting: they never reach the engine
    shell_only: dict[str, Setting] = field(default_factory=dict)
    script: str | None = None
    # where the running process's command line differs from the files' (the process's wins)
    argv_drift: list[str] = field(default_factory=list)
    # "file:line: why" the command line does not run as read: an image ENTRYPOINT it depends
    # on that nothing shows (not established), or one the engine refuses after it
    argv_problems: list[str] = field(default_factory=list)
    engine: str | None = None
    flags: dict[str, Any] = field(default_factory=dict)
    state: State = field(default_factory=State)
    journal_lines: int = 0
    failure: str | None = None  # evidence id of the last failure line in its journal
    cause: str = ""  # the last error its journal shows before failing
    # why it cannot run: systemd would refuse to load the unit, or (a container) its engine
    # refuses the command line the image's ENTRYPOINT makes of its command
    refused: str = ""
    nccl: dict[str, Setting] = field(default_factory=dict)
    nccl_checked: list[str] = field(default_factory=list)
    runtime: str = "systemd"  # systemd | docker | podman | compose | kubernetes | process
    log_argv: list[str] | None = None  # the command that shows its log, where there is one
    gpus: str = ""  # which GPUs the runtime gives it, as the runtime says it
    # host path → path inside the server (container mounts), to read its files from the host
    mounts: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # conditions the reading depends on
    pid: int | None = None  # the running process, when one was found
    container_id: str = ""
    container_name: str = ""  # a unit's `docker run --name`: the container it starts
    compose_project: str = ""  # a container Docker Compose started: its project and service
    compose_service: str = ""
    rootfs: str = ""  # where the host sees the container's own files (overlay MergedDir)
    # The authority (_authority.py): what the service manager loaded (systemctl show), where
    # that differs from the files, and where the running process differs from both.
    shown: Any = None
    shown_evidence: dict[str, str] = field(default_factory=dict)
    loaded_differs: list[str] = field(default_factory=list)
    drift: list[dict[str, Any]] = field(default_factory=list)

    @property
    def model_path(self) -> str | None:
        """The served model's directory as the host sees it (through a container's mounts)."""
        m = self.flags.get("model")
        return self.host_path(str(m).rstrip("/")) if m else None

    @property
    def noun(self) -> str:
        """What the server is to its runtime, for sentences: unit, container, workload, process."""
        return {"systemd": "unit", "docker": "container", "podman": "container",
                "compose": "container", "kubernetes": "workload"}.get(self.runtime, "process")

    @property
    def contained(self) -> bool:
        """Its files are in an image, not on the host, except what is mounted."""
        return self.runtime not in ("systemd", "process")

    def visible(self, path: str) -> bool:
        """Whether the host can read this path of the server's own filesystem."""
        return not self.contained or self.host_path(path) != path

    @property
    def tp(self) -> int:
        try:
            return int(self.flags.get("tensor_parallel_size", 1))
        except (TypeError, ValueError):
            return 1

    @property
    def tuning(self) -> dict[str, Setting]:
        """NCCL_* settings that can tune NCCL: not logging, and a name NCCL reads at all."""
        return {k: v for k, v in self.nccl.items() if k not in NOT_TUNING and known(k)}

    @property
    def evidence(self) -> list[str]:
        return sorted({*self.argv_evidence, *self.state.evidence, *self.state.enabled_evidence})

    def summary(self) -> dict[str, Any]:
        return {"name": self.name, "runtime": self.runtime, "path": self.path,
                "engine": self.engine,
                "model": self.model_path, "tp": self.tp, "state": self.state.value,
                "state_detail": self.state.detail, "enabled": self.state.enabled,
                "enabled_detail": self.state.enabled_detail, "script": self.script,
                "gpus": self.gpus,
                "nccl": {k: f"{v.value} ({v.where})" for k, v in sorted(self.tuning.items())}}

    def host_path(self, path: str) -> str:
        """A path as the server sees it, as the host sees it (through its mounts)."""
        best = ""
        for inside in self.mounts.values():
            if (path == inside or path.startswith(inside.rstrip("/") + "/")) and \
                    len(inside) > len(best):
                best = inside
        if not best:
            if self.rootfs and path.startswith("/"):
                return self.rootfs.rstrip("/") + path
            return path
        outside = next(h for h, i in self.mounts.items() if i == best)
        return outside.rstrip("/") + path[len(best.rstrip("/")):]


@dataclass
class HostModel:
    """Every server found and the decision of which one is current."""

    servers: list[Server] = field(default_factory=list)
    current: Server | None = None
    candidates: list[Server] = field(default_factory=list)  # when the host does not decide
    decision: str = ""
    looked_in: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    # Compose files a systemd unit runs (`docker compose up`): file -> the unit
    compose_units: dict[str, str] = field(default_factory=dict)

    @property
    def ambiguous(self) -> bool:
        return self.current is None and len(self.candidates) > 1

    @property
    def evidence(self) -> list[str]:
        return sorted({e for s in self.servers for e in s.evidence})
