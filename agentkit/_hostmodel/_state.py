"""Whether a unit is running, enabled, failing: from what the host or snapshot shows.

Sources, strongest first: ``systemctl list-units`` (ACTIVE/SUB), ``systemctl
list-unit-files`` (enablement), ``*.wants/`` links under /etc/systemd/system, and the unit's
journal (systemd's own lifecycle lines: "Started", "Scheduled restart job, restart counter is
at N.", "Failed with result", "Stopped"/"Deactivated successfully"). A state no source shows
is ``unknown``, never guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

LIST_UNITS = ["systemctl", "list-units", "--type=service", "--all", "--no-legend", "--plain"]
LIST_UNIT_FILES = ["systemctl", "list-unit-files", "--type=service", "--no-legend"]

_RESTART = re.compile(r"Scheduled restart job, restart counter is at (\d+)")
_FAILED = re.compile(r"Failed with result '([\w-]+)'|Main process exited, code=(\w+), "
                     r"status=(\S+)|Start request repeated too quickly")
_STARTED = re.compile(r"systemd\[\d+\]: Started ")
_HEALTHY = re.compile(r"Application startup complete|Starting vLLM API server|server is fired "
                      r"up|Uvicorn running on")
_STOPPED = re.compile(r"systemd\[\d+\]: (Stopped |Deactivated successfully)|: Deactivated "
                      r"successfully")


@dataclass
class State:
    """``value``: running | crash-looping | failed | stopped | unknown."""

    value: str = "unknown"
    detail: str = ""
    evidence: list[str] = field(default_factory=list)
    enabled: bool | None = None
    enabled_detail: str = ""
    enabled_evidence: list[str] = field(default_factory=list)
    restarts: int = 0

    @property
    def enabled_word(self) -> str:
        return {True: "enabled", False: "disabled", None: "enablement unknown"}[self.enabled]

    @property
    def up_or_meant_to_be(self) -> bool:
        """Running, or trying to (a crash loop is a deployment that is meant to be up)."""
        return self.value in ("running", "crash-looping")


def parse_list_units(text: str) -> dict[str, tuple[str, str, str, int]]:
    """unit → (LOAD, ACTIVE, SUB, line number)."""
    out: dict[str, tuple[str, str, str, int]] = {}
    for n, line in enumerate(text.splitlines(), 1):
        parts = line.replace("●", " ").split()
        if len(parts) >= 4 and parts[0].endswith(".service"):
            out[parts[0]] = (parts[1], parts[2], parts[3], n)
    return out


def parse_list_unit_files(text: str) -> dict[str, tuple[str, int]]:
    """unit file → (STATE, line number)."""
    out: dict[str, tuple[str, int]] = {}
    for n, line in enumerate(text.splitlines(), 1):
        parts = line.split()
        if len(parts) >= 2 and parts[0].endswith(".service"):
            out[parts[0]] = (parts[1], n)
    return out


def from_list_units(active: str, sub: str) -> str:
    if active == "active":
        return "running" if sub in ("running", "exited", "reload") else active
    if active in ("activating", "deactivating") and "auto-restart" in sub:
        return "crash-looping"
    if active == "activating":
        return "starting"
    if active == "failed":
        return "failed"
    if active == "inactive":
        return "stopped"
    return "unknown"


@dataclass
class JournalLife:
    """What systemd's lifecycle lines in a unit's journal say, with their line numbers."""

    last_event: str = ""  # started | restarting | failed | stopped
    last_line: int = 0
    restarts: int = 0
    restart_line: int = 0
    failure_line: int = 0
    healthy_line: int = 0
    gave_up_line: int = 0  # "Start request repeated too quickly": the start limit was hit


def journal_life(lines: list[str]) -> JournalLife:
    life = JournalLife()
    for n, line in enumerate(lines, 1):
        if m := _RESTART.search(line):
            life.restarts, life.restart_line = int(m.group(1)), n
            life.last_event, life.last_line = "restarting", n
        elif _FAILED.search(line):
            life.failure_line = n
            if "Start request repeated too quickly" in line:
                life.gave_up_line = n
            life.last_event, life.last_line = "failed", n
        elif _STARTED.search(line):
            life.last_event, life.last_line = "started", n
        elif _STOPPED.search(line):
            life.last_event, life.last_line = "stopped", n
        elif _HEALTHY.search(line):
            life.healthy_line = n
    return life


def from_journal(life: JournalLife) -> tuple[str, str]:
    """(state, why) from the journal alone."""
    if life.last_event == "stopped":
        return "stopped", "the journal's last lifecycle line is a stop"
    if life.last_event == "failed" and 0 < life.restart_line < life.gave_up_line:
        # the start limit was hit after the last restart: systemd schedules no more (the unit
        # stays failed until someone starts it or resets it)
        return "failed", (f"systemd gave up restarting it after restart counter "
                          f"{life.restarts} (\"Start request repeated too quickly\": its "
                          "start limit was hit)")
    if life.restarts >= 2 and life.healthy_line < life.restart_line:
        return "crash-looping", (f"the journal shows restart counter {life.restarts} and no "
                                 "successful start after it")
    if life.last_event == "failed":
        return "failed", "the journal's last lifecycle line is a failure"
    if life.last_event in ("started", "restarting") and life.healthy_line > life.last_line:
        return "running", ("the journal shows it started and came up, with no stop or failure "
                           "after that (as of the capture)")
    if life.last_event == "started":
        return "running", ("the journal shows it started, with no stop or failure after that "
                           "(as of the capture)")
    return "unknown", ""
