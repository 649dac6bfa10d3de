"""Progress lines on stderr, fed by trace events: ``HH:MM:SS [level    ] event   key=value``,
or with ``--log-format json`` one JSON object per line (``{"event", "level", "timestamp",
…}``) for CI logs and embedders.

The console layout is structlog's console renderer without colours, written here (three
lines of formatting). JSON lines go through structlog itself, imported when the first line is
written and not before: importing it (and the rich console it may load) was 60 ms of a 0.7 s
``agentkit ask``, and a quiet run writes no line at all.
"""

from __future__ import annotations

import logging
import re
import sys
import time
from collections import Counter
from collections.abc import Callable
from typing import Any, TextIO

_LEVELS = {"info": 20, "warning": 30}


class _Lines:
    """One line per call; ``minimum`` drops the levels below it (warnings only: 30)."""

    def __init__(self, out: TextIO, minimum: int, stamp: bool, fmt: str = "console") -> None:
        self.out, self.minimum, self.stamp, self.fmt = out, minimum, stamp, fmt
        self._structured: Any = None

    def _line(self, level: str, event: str, fields: dict[str, Any]) -> None:
        if _LEVELS[level] < self.minimum:
            return
        if self.fmt == "json":
            if self._structured is None:
                self._structured = _json_logger(self.out)
            getattr(self._structured, level)(event, **fields)
            return
        # values as repr: a path or an error from a host file cannot start a terminal
        # escape sequence or a new line
        pairs = " ".join(f"{k}={_value(v)}" for k, v in sorted(fields.items()))
        head = f"{time.strftime('%H:%M:%S')} " if self.stamp else ""
        self.out.write(f"{head}[{level:<9}] {event:<30} {pairs}".rstrip() + "\n")
        self.out.flush()

    def info(self, event: str, **fields: Any) -> None:
        self._line("info", event, fields)

    def warning(self, event: str, **fields: Any) -> None:
        self._line("warning", event, fields)


def _json_logger(out: TextIO) -> Any:
    """A structlog logger of its own (structlog's global configuration is left alone: an
    embedding program may have its own) writing JSON lines to ``out``."""
    import structlog

    return structlog.wrap_logger(
        structlog.PrintLogger(out), wrapper_class=structlog.make_filtering_bound_logger(0),
        processors=[structlog.processors.add_log_level,
                    structlog.processors.TimeStamper(fmt="iso", utc=True),
                    structlog.processors.JSONRenderer(sort_keys=True, default=repr)])


class StdlibToLines(logging.Handler):
    """The library's own log records (logger ``agentkit``: the sandbox's warning, the model
    client's retries) as lines of the same log, so ``--log-format json`` is JSON throughout.
    Installed by the CLI, which owns its process; the library installs no handler."""

    def __init__(self, lines: _Lines) -> None:
        super().__init__(logging.INFO)
        self.lines = lines

    def emit(self, record: logging.LogRecord) -> None:
        level = "warning" if record.levelno >= logging.WARNING else "info"
        self.lines._line(level, record.getMessage(), {"logger": record.name})


_BARE = re.compile(r"[\w.:/@+-]*")


def _value(v: Any) -> str:
    return v if isinstance(v, str) and _BARE.fullmatch(v) else repr(v)


def lines(warnings_only: bool = False, fmt: str = "console") -> _Lines:
    return _Lines(sys.stderr, 30 if warnings_only else 0, stamp=not warnings_only, fmt=fmt)


def progress_logger(warnings_only: bool = False, fmt: str = "console", *,
                    log: _Lines | None = None) -> Callable[[dict[str, Any]], None]:
    log = log or lines(warnings_only, fmt)
    starts: dict[str, float] = {}
    kinds: Counter[tuple[str, str]] = Counter()
    first: dict[tuple[str, str], str] = {}
    mode = {"catalog": True}

    def on_event(ev: dict[str, Any]) -> None:
        kind, phase, data = ev["kind"], ev["phase"], ev["data"]
        if kind == "plan":
            mode["catalog"] = data["mode"] == "catalog"
            log.info("plan", mode=data["mode"], tasks=[t["id"] for t in data["tasks"]])
        elif kind == "task" and phase == "start":
            starts[ev["span"]] = ev["ts"]
            log.info("task started", task=ev["task"])
        elif kind == "task" and phase == "end" and "result" in data:
            r = data["result"]
            level = log.info if r["status"] in ("ok", "partial") else log.warning
            level("task finished", task=ev["task"], status=r["status"],
                  s=round(ev["ts"] - starts.get(ev["span"], ev["ts"]), 3),
                  tool_calls=r["usage"]["tool_calls"], llm_calls=r["usage"]["llm_calls"])
        elif kind == "tool" and phase == "end" and not data.get("ok"):
            # One line per kind of refusal ("X is under /dev, which …" for any X), with a
            # count at the end: a live host can refuse dozens of paths for the same reason.
            # A recipe expects some (a capture a snapshot lacks): those are not warnings.
            error = str(data.get("error", ""))
            key = (str(data["tool"]), refusal_kind(error))
            kinds[key] += 1
            if kinds[key] == 1:
                first[key] = error
                level = log.info if mode["catalog"] or absent(error) else log.warning
                level("tool refused", task=ev["task"], tool=data["tool"], error=error[:200])
        elif kind == "llm" and phase == "end":
            if "error" in data:
                log.warning("model call failed", task=ev["task"], step=ev["step"],
                            error=data["error"][:200])
            elif "response" in data:  # not a call cancelled before it was answered
                calls = [c["name"] for c in data["response"]["tool_calls"]]
                log.info("model answered", task=ev["task"], step=ev["step"], calls=calls)
        elif kind == "run" and phase == "end":
            for (tool, _), n in sorted(kinds.items()):
                if n > 1:
                    like = first[(tool, _)]
                    level = log.info if mode["catalog"] or absent(like) else log.warning
                    level("refused more like it", tool=tool, count=n, like=like[:120])
            log.info("run finished", status=data.get("status"))

    return on_event


# What is not there is an answer, not a fault: optional paths (/etc/rancher/k3s,
# ~/.nccl.conf) a host does not have, commands a snapshot did not capture.
_ABSENT = re.compile(r"no such file or directory|was not captured|without a capture of|"
                     r"is not installed", re.IGNORECASE)


def absent(error: str) -> bool:
    """Whether a refusal only says something is absent (nothing for the user to act on).

    >>> absent("/home/vllm/.nccl.conf: no such file or directory")
    True
    >>> absent("/etc/shadow is a credential file; refused")
    False
    """
    return _ABSENT.search(error) is not None


_PATHISH = re.compile(r"(?<![\w])/[^\s,;:'\"()]*|`[^`]*`|'[^']*'|\"[^\"]*\"|\d+")


def refusal_kind(error: str) -> str:
    """An error without its particulars (paths, quoted arguments, numbers): refusals of the
    same kind read the same.

    >>> refusal_kind("/dev/null is under /dev, which the sandbox never reads")
    '<> is under <>, which the sandbox never reads'
    """
    return _PATHISH.sub("<>", error)
