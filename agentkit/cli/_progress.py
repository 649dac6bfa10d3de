"""Structured progress logs on stderr (structlog), fed by trace events."""

from __future__ import annotations

import re
import sys
from collections import Counter
from collections.abc import Callable
from typing import Any

import structlog


def progress_logger(warnings_only: bool = False) -> Callable[[dict[str, Any]], None]:
    structlog.configure(
        processors=[structlog.processors.add_log_level,
                    structlog.processors.TimeStamper(fmt="%H:%M:%S"),
                    structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty())],
        logger_factory=structlog.PrintLoggerFactory(sys.stderr),
        cache_logger_on_first_use=False,
    )
    log = structlog.get_logger("agentkit")
    if warnings_only:
        log = structlog.wrap_logger(structlog.PrintLogger(sys.stderr),
                                    wrapper_class=structlog.make_filtering_bound_logger(30),
                                    processors=[structlog.processors.add_log_level,
                                                structlog.dev.ConsoleRenderer(colors=False)])
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
                level = log.info if mode["catalog"] else log.warning
                level("tool refused", task=ev["task"], tool=data["tool"], error=error[:200])
        elif kind == "llm" and phase == "end":
            if "error" in data:
                log.warning("model call failed", task=ev["task"], step=ev["step"],
                            error=data["error"][:200])
            else:
                calls = [c["name"] for c in data["response"]["tool_calls"]]
                log.info("model answered", task=ev["task"], step=ev["step"], calls=calls)
        elif kind == "run" and phase == "end":
            level = log.info if mode["catalog"] else log.warning
            for (tool, _), n in sorted(kinds.items()):
                if n > 1:
                    level("refused more like it", tool=tool, count=n,
                          like=first[(tool, _)][:120])
            log.info("run finished", status=data.get("status"))

    return on_event


_PATHISH = re.compile(r"(?<![\w])/[^\s,;:'\"()]*|`[^`]*`|'[^']*'|\"[^\"]*\"|\d+")


def refusal_kind(error: str) -> str:
    """An error without its particulars (paths, quoted arguments, numbers): refusals of the
    same kind read the same.

    >>> refusal_kind("/dev/null is under /dev, which the sandbox never reads")
    '<> is under <>, which the sandbox never reads'
    """
    return _PATHISH.sub("<>", error)
