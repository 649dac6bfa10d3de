"""``systemctl show UNIT -p …`` and ``systemctl show-environment`` as systemd prints them.

The manager knows what it loaded: which drop-ins (``DropInPaths=``), which ``Environment=``
assignments, which ``EnvironmentFiles=``, the start time of the main process and its PID. The
formats, from systemd's source (src/shared/bus-print-properties.c, src/systemctl/
systemctl-show.c, src/systemctl/systemctl-set-environment.c, src/basic/escape.c):

* one ``Name=value`` line per property (``-p`` given: printed even when empty, ``Name=``);
* string arrays (``Environment=``, ``UnsetEnvironment=``, ``DropInPaths=``): the elements
  joined by one space, each through ``shell_maybe_quote(s, 0)``: left bare unless it holds
  whitespace, a control character, invalid UTF-8 or one of ``"\\`$*?['()<>|&;!``; then
  wrapped in double quotes, with ``"\\`$`` backslash-escaped and control bytes C-escaped
  (``\\n``, ``\\t``, ``\\001``). systemd before v247 printed such an element as
  ``[unprintable]`` instead: that element cannot be read back;
* ``EnvironmentFiles=PATH (ignore_errors=yes|no)``, one line per file;
* ``ExecStart={ path=P ; argv[]=A B C ; ignore_errors=no ; start_time=[T] ; stop_time=[T] ;
  pid=N ; code=C ; status=S }``, one line per command; argv is joined by spaces without any
  quoting, so it is kept as that one string (an element holding a space cannot be told apart);
* ``systemctl show-environment``: ``NAME=value``, the value through ``shell_maybe_quote`` in
  its POSIX form (``$'…'``, escaping only ``\\`` and ``'``, control bytes C-escaped).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..._sandbox._systemd_quote import Unreadable, split_strv, unquote_posix

__all__ = ["PROPERTIES", "SHOW_ENVIRONMENT", "ExecCommand", "UnitShow", "Unreadable",
           "parse_show", "parse_show_environment", "show_argv", "split_strv", "unquote_posix"]

# The properties asked for, in one fixed argv (a snapshot serves a capture by exact argv).
PROPERTIES = ("Environment", "EnvironmentFiles", "UnsetEnvironment", "ExecStart",
              "DropInPaths", "FragmentPath", "MainPID", "ActiveState", "SubState", "User",
              "ExecMainStartTimestamp")
SHOW_ENVIRONMENT = ["systemctl", "show-environment"]


def show_argv(unit: str) -> list[str]:
    return ["systemctl", "show", unit, *(a for p in PROPERTIES for a in ("-p", p))]


@dataclass
class ExecCommand:
    path: str
    argv_text: str  # argv joined by single spaces, as systemd prints it (not splittable)
    start_time: str
    pid: int


@dataclass
class UnitShow:
    """What the service manager has loaded for one unit, and its main process."""

    unit: str
    environment: list[tuple[str, str]] = field(default_factory=list)  # in order
    environment_files: list[tuple[str, bool]] = field(default_factory=list)  # path, optional
    unset: list[str] = field(default_factory=list)
    exec_start: list[ExecCommand] = field(default_factory=list)
    dropins: list[str] = field(default_factory=list)
    fragment: str = ""
    main_pid: int = 0
    active: str = ""
    sub: str = ""
    user: str = ""
    started: str = ""  # ExecMainStartTimestamp, as printed ("" when never started)
    lines: dict[str, int] = field(default_factory=dict)  # property → line (first)
    problems: list[str] = field(default_factory=list)  # what could not be read back

    @property
    def env_map(self) -> dict[str, str]:
        """Environment= as the manager applies it: a later assignment of a name wins."""
        return dict(self.environment)


_EXEC = re.compile(r"\{ path=(?P<path>.*?) ; argv\[\]=(?P<argv>.*) ; "
                   r"(?:ignore_errors|flags)=.*? ; start_time=\[(?P<start>[^\]]*)\] ; "
                   r"stop_time=\[[^\]]*\] ; pid=(?P<pid>\d+) ; .*\}")
_ENVFILE = re.compile(r"(?P<path>.+) \(ignore_errors=(?P<ignore>yes|no)\)")


def parse_show(unit: str, text: str) -> UnitShow:
    """``systemctl show`` output for one unit; a line it cannot read back is named in
    ``problems`` with its line number, never dropped silently."""
    shown = UnitShow(unit=unit)
    for n, line in enumerate(text.split("\n"), 1):  # systemd ends lines with \n only
        name, eq, value = line.partition("=")
        if not eq:
            if line.strip():
                shown.problems.append(f"line {n}: not a Name=value line")
            continue
        shown.lines.setdefault(name, n)
        try:
            _apply(shown, name, value)
        except (Unreadable, ValueError) as exc:
            shown.problems.append(f"{name}= (line {n}): {exc}")
    return shown


def _apply(shown: UnitShow, name: str, value: str) -> None:
    if name == "Environment":
        for item in split_strv(value):
            key, eq, val = item.partition("=")
            if not eq:
                raise Unreadable(f"element {item!r} is not NAME=VALUE")
            shown.environment.append((key, val))
    elif name == "UnsetEnvironment":
        shown.unset += split_strv(value)
    elif name == "DropInPaths":
        shown.dropins += split_strv(value)
    elif name == "EnvironmentFiles" and value:
        m = _ENVFILE.fullmatch(value)
        if m is None:
            raise Unreadable(f"{value[:60]!r} is not 'PATH (ignore_errors=yes|no)'")
        shown.environment_files.append((m["path"], m["ignore"] == "yes"))
    elif name == "ExecStart" and value:
        m = _EXEC.fullmatch(value)
        if m is None:
            raise Unreadable(f"{value[:60]!r} is not systemd's exec-command form")
        shown.exec_start.append(ExecCommand(m["path"], m["argv"], m["start"], int(m["pid"])))
    elif name == "FragmentPath":
        shown.fragment = value
    elif name == "MainPID":
        shown.main_pid = int(value or 0)
    elif name == "ActiveState":
        shown.active = value
    elif name == "SubState":
        shown.sub = value
    elif name == "User":
        shown.user = value
    elif name == "ExecMainStartTimestamp":
        shown.started = "" if value in ("", "n/a") else value


def parse_show_environment(text: str) -> tuple[dict[str, str], list[str]]:
    """The manager's environment block (``DefaultEnvironment=``, ``systemctl
    set-environment``), and the lines that could not be read back."""
    env: dict[str, str] = {}
    problems: list[str] = []
    for n, line in enumerate(text.split("\n"), 1):  # systemd ends lines with \n only
        name, eq, value = line.partition("=")
        if not eq or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            if line.strip():
                problems.append(f"line {n}: not NAME=value")
            continue
        try:
            env[name] = unquote_posix(value)
        except Unreadable as exc:
            problems.append(f"line {n} ({name}): {exc}")
    return env, problems
