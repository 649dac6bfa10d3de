"""The host model's data: the model servers found, each with its evidence, and which one
serves the current deployment."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ._state import State

# NCCL variables that change nothing about speed: logging, and the pointer to a config file.
NOT_TUNING = frozenset({"NCCL_DEBUG", "NCCL_DEBUG_SUBSYS", "NCCL_DEBUG_FILE", "NCCL_CONF_FILE"})


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
                "line": self.line, "origin": self.origin, "comment": self.comment,
                "evidence_id": self.evidence[0] if self.evidence else ""}


@dataclass
class Server:
    """A systemd unit that starts an inference engine."""

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
    removed: dict[str, Setting] = field(default_factory=dict)
    script: str | None = None
    engine: str | None = None
    flags: dict[str, Any] = field(default_factory=dict)
    state: State = field(default_factory=State)
    journal_lines: int = 0
    failure: str | None = None  # evidence id of the last failure line in its journal
    cause: str = ""  # the last error its journal shows before failing
    refused: str = ""  # why systemd would refuse to load the unit
    nccl: dict[str, Setting] = field(default_factory=dict)
    nccl_checked: list[str] = field(default_factory=list)

    @property
    def model_path(self) -> str | None:
        m = self.flags.get("model")
        return str(m).rstrip("/") if m else None

    @property
    def tp(self) -> int:
        try:
            return int(self.flags.get("tensor_parallel_size", 1))
        except (TypeError, ValueError):
            return 1

    @property
    def tuning(self) -> dict[str, Setting]:
        return {k: v for k, v in self.nccl.items() if k not in NOT_TUNING}

    @property
    def evidence(self) -> list[str]:
        return sorted({*self.argv_evidence, *self.state.evidence, *self.state.enabled_evidence})

    def summary(self) -> dict[str, Any]:
        return {"name": self.name, "path": self.path, "engine": self.engine,
                "model": self.model_path, "tp": self.tp, "state": self.state.value,
                "state_detail": self.state.detail, "enabled": self.state.enabled,
                "enabled_detail": self.state.enabled_detail, "script": self.script,
                "nccl": {k: f"{v.value} ({v.where})" for k, v in sorted(self.tuning.items())}}


@dataclass
class HostModel:
    """Every server found and the decision of which one is current."""

    servers: list[Server] = field(default_factory=list)
    current: Server | None = None
    candidates: list[Server] = field(default_factory=list)  # when the host does not decide
    decision: str = ""
    looked_in: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def ambiguous(self) -> bool:
        return self.current is None and len(self.candidates) > 1

    @property
    def evidence(self) -> list[str]:
        return sorted({e for s in self.servers for e in s.evidence})
