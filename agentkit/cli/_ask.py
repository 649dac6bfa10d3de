"""``agentkit ask``: investigate a question and print the cited answer."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ._common import add_llm, add_root, default_trace_path, host_from, settings_from
from ._errors import CLIError

if TYPE_CHECKING:
    from .._fleet._run import FleetOrchestrator
    from .._orchestrator import Orchestrator
    from .._sandbox._host import Host
    from .._settings import SettingsValues
    from .._trace import Trace

_MAX_QUESTION = 8000


def register(sub: Any) -> None:
    p = sub.add_parser("ask", help="investigate a question; the answer goes to stdout",
                       description="Investigate a question about the host and print a cited "
                       "answer. Without a model configured, the task catalog answers.")
    p.add_argument("question", help='the question; "-" reads it from standard input')
    add_root(p)
    add_llm(p)
    p.add_argument("--trace", metavar="FILE", help="where to write the trace (JSON lines); "
                   "default: $AGENTKIT_TRACE_DIR or ~/.local/state/agentkit/traces/")
    p.add_argument("--json", action="store_true", help="print the answer as JSON "
                   "(the same as --format json)")
    p.add_argument("--format", choices=("text", "md", "json"), default=None,
                   help="text: plain text, host text as written; md: Markdown source "
                   "(special characters escaped); json. Default: rendered Markdown on a "
                   "terminal, text elsewhere")
    p.add_argument("--brief", action="store_true",
                   help="only the bottom line and the table (with the evidence they cite)")
    talk = p.add_mutually_exclusive_group()
    talk.add_argument("-q", "--quiet", action="store_true",
                      help="no live display, even on a terminal: stderr has only what needs "
                      "your attention")
    talk.add_argument("-v", "--verbose", action="store_true",
                      help="the event log on stderr (plan, tasks, refusals), one line each, "
                      "instead of the live display")
    p.add_argument("--log-format", choices=("console", "json"), default="console",
                   help="how log lines on stderr are written: console (aligned text) or json "
                   "(one JSON object per line, for CI logs and programs)")
    p.add_argument("--max-tasks", type=int, help="cap on planned tasks (LLM mode)")
    p.add_argument("--concurrency", type=int, help="subagents running at once")
    from ._fleet_cmd import add_fleet

    add_fleet(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from .._gc import quiet_startup

    question = _question(args)
    with quiet_startup() as started:  # the CLI owns its process: see _gc.py
        return _run(args, question, started)


def _run(args: argparse.Namespace, question: str, started: Callable[[], None]) -> int:
    settings = settings_from(args)
    host = host_from(args)
    from .._sandbox._kernel import probe_early

    probe_early(host.sandbox)  # bubblewrap starts while the answer's modules load
    fleet = None
    if _fleet_asked(args):  # one question, many hosts: see _fleet_cmd
        from ._fleet_cmd import transport_from

        fleet = transport_from(args)
    trace_path = args.trace or default_trace_path()
    trace, live = _open_trace(trace_path, args)
    try:
        answer = _answer(question, settings, host, trace, live, (fleet, args.catalog),
                         started)
    finally:
        trace.close()
        if args.verbose and args.log_format == "json":
            from ._progress import lines

            lines(fmt="json").info("trace written", path=trace_path)
        elif args.verbose or live is not None:  # quiet by default where no one is watching
            print(f"agentkit: trace written to {trace_path}", file=sys.stderr)
    _print(answer, "json" if args.json else args.format, args.brief)
    return _exit_code(answer, host)


def _question(args: argparse.Namespace) -> str:
    raw = sys.stdin.read(_MAX_QUESTION * 4 + 1) if args.question == "-" else args.question
    question = " ".join(raw.split())
    if not question:
        raise CLIError('the question is empty: ask something, e.g. agentkit ask "Is NCCL '
                       'tuned for this topology?"')
    if len(question) > _MAX_QUESTION:
        raise CLIError(f"the question is {len(question)} characters; keep it under "
                       f"{_MAX_QUESTION} and put details in files under --root")
    return question


def _open_trace(trace_path: str, args: argparse.Namespace) -> tuple[Trace, Any]:
    """The trace file, with the live display (a terminal), the event log (``-v``) or, where
    no one watches (CI logs, scripts, an embedding runtime), only the warnings listening."""
    from .._trace import Trace

    try:
        trace = Trace(trace_path, exclusive=not args.trace)
    except OSError as exc:
        raise CLIError(f"cannot write the trace to {trace_path}: {exc.strerror}") from None
    live = None
    json_log = args.log_format == "json"
    if sys.stderr.isatty() and not (args.quiet or args.verbose or json_log):
        from rich.console import Console

        from ._live import LiveProgress

        live = LiveProgress(Console(stderr=True))
        trace.listen(live)
    else:
        from ._progress import StdlibToLines, lines, progress_logger

        log = lines(warnings_only=not args.verbose, fmt=args.log_format)
        trace.listen(progress_logger(log=log))
        if json_log:  # the library's own warnings as JSON lines too (the CLI owns its process)
            import logging

            logger = logging.getLogger("agentkit")
            logger.addHandler(StdlibToLines(log))
            logger.propagate = False
    return trace, live


def _answer(question: str, settings: SettingsValues, host: Host, trace: Trace, live: Any,
            how: tuple[tuple[Any, Any] | None, bool], started: Callable[[], None]) -> Any:
    """The investigation, its failures said as CLIErrors with their exit codes; ``how`` is
    the fleet (or None) and whether catalog mode is asked for, ``started`` ends the
    start-up (the modules are loaded and the orchestrator built)."""
    fleet, catalog_only = how
    import anyio

    from .._agents._planner import PlanError
    from .._api import build_orchestrator
    from .._catalog._planner import NoMatchingTask
    from .._catalog._template import TemplateError
    from .._llm._messages import ModelError

    try:
        one = build_orchestrator(settings, host, trace=trace, catalog_only=catalog_only)
        one.tune_gc = True  # the CLI owns its process: fewer collections while tasks fan out
        orch: Orchestrator | FleetOrchestrator = one
        if fleet is not None:
            from .._fleet._run import FleetOrchestrator

            orch = FleetOrchestrator(one, *fleet)
        started()

        async def go() -> Any:
            async with orch:  # closes the model's connections, on errors too
                return await orch.investigate(question)

        if live is None:
            return anyio.run(go)
        with live:
            return anyio.run(go)
    except TemplateError as exc:
        raise CLIError(str(exc)) from None
    except ValueError as exc:  # a fleet's inventory (host names, a job, a cluster)
        if fleet is None or type(exc).__name__ != "InventoryError":
            raise
        raise CLIError(str(exc)) from None
    except NoMatchingTask as exc:
        raise CLIError(str(exc), 3) from None
    except (ModelError, PlanError) as exc:
        raise _model_error(exc, settings) from None


def _model_error(exc: Exception, settings: SettingsValues) -> CLIError:
    status = getattr(exc, "status", None)
    if status in (401, 403):
        source = settings.api_key_source()
        had = "is not set" if not settings.api_key() else "was refused"
        return CLIError(f"{exc}. The API key from ${source} {had}: set {source} (or name "
                        "another variable with --api-key-env) to a key this endpoint "
                        "accepts", 4)
    if type(exc).__name__ == "ContextTooLong":  # the endpoint works; the request is big
        return CLIError(f"{exc}. Raise the server's context (vLLM --max-model-len, llama.cpp "
                        "--ctx-size, Ollama num_ctx) or use a model with a longer one", 4)
    return CLIError(f"{exc}. Check --base-url/--model (or AGENTKIT_BASE_URL/AGENTKIT_MODEL), "
                    "or run without them for catalog mode", 4)


def _exit_code(answer: Any, host: Host) -> int:
    """7 when nothing was established (no fleet host answered; no task of one host found
    anything), 9 when some hosts of a fleet did not answer with anything to compare (failed,
    unreachable, timed out, host key unknown or changed, no model server), else 0; the reason
    goes to stderr."""
    if answer.fleet is not None:
        return _fleet_exit(answer.fleet)
    if not answer.citations and all(s != "ok" for s in answer.tasks.values()):
        why = answer.bottom_line[0].text if answer.bottom_line else "no task found anything"
        hint = ("If the server runs on another machine, snapshot that one with `agentkit "
                "snapshot` and point --root at the snapshot." if host.is_live else
                "Point --root at the host's / or at a snapshot made with `agentkit snapshot`.")
        print(f"agentkit: nothing could be established under {host.root.path}: {why} {hint}",
              file=sys.stderr)
        return 7
    return 0


def _fleet_exit(fleet: Any) -> int:
    from .._fleet_model import ANSWERED

    answered = sum(fleet.counts.get(b, 0) for b in ANSWERED)
    if answered == 0:
        print(f"agentkit: no host of the fleet answered ({fleet.recap})", file=sys.stderr)
        return 7
    if answered < fleet.hosts:
        print(f"agentkit: {fleet.hosts - answered} of {fleet.hosts} hosts did not answer "
              f"({fleet.recap})", file=sys.stderr)
        return 9
    return 0


def _fleet_asked(args: argparse.Namespace) -> bool:
    return any(getattr(args, k, None) for k in ("hosts", "slurm_job", "ray", "fleet"))


def _print(answer: Any, form: str | None, brief: bool = False) -> None:
    from .._render import json_safe, to_markdown

    if form == "json":
        sys.stdout.write(json_safe(answer.model_dump_json(indent=2)) + "\n")
    elif form is None and sys.stdout.isatty():
        from rich.console import Console
        from rich.markdown import Markdown

        Console().print(Markdown(to_markdown(answer, brief=brief)))
    else:  # a pipe or a file reads plain text unless Markdown is asked for
        sys.stdout.write(to_markdown(answer, brief=brief, escape=form == "md"))
