"""What a replay found: its answer beside the recorded one, and with live tools, the drift.
Its own module: the one-host replay (``__init__``) and the fleet replay (``_fleet``) both
return it, and the first calls the second."""

from __future__ import annotations

from dataclasses import dataclass, field

from .._types import Answer, Evidence


@dataclass
class Drift:
    changed: list[tuple[Evidence, Evidence]] = field(default_factory=list)
    gone: list[Evidence] = field(default_factory=list)
    new: list[Evidence] = field(default_factory=list)
    findings: list[str] = field(default_factory=list)
    stale_steps: list[str] = field(default_factory=list)

    @property
    def any(self) -> bool:
        return bool(self.changed or self.gone)


@dataclass
class ReplayResult:
    answer: Answer | None
    recorded: Answer | None
    identical: bool
    notes: list[str]
    tasks: dict[str, str]
    incomplete: list[str]
    drift: Drift | None = None
