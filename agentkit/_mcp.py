"""``agentkit mcp``: agentkit as an MCP server (official ``mcp`` SDK), over stdio or
streamable HTTP.

Tools: ``investigate`` (progress notifications as tasks finish; a client's cancellation stops
the subagents), ``list_tasks`` and ``replay``. ``investigate`` asks a fleet (``hosts``,
``fleet_dir``) only where the operator allowed one (see ``_mcp_fleet``).
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Sequence
from contextlib import aclosing
from dataclasses import dataclass
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError as Refusal  # its text reaches the client
from pydantic import Field

from ._api import Orchestrator
from ._catalog._load import load_catalog
from ._fleet._run import FleetOrchestrator
from ._mcp_fleet import FleetPolicy, FleetRefused
from ._orchestrator import Limits
from ._render import to_markdown
from ._schema import DESCRIPTION, _inside
from ._trace import Trace
from ._trace._read import read_trace


def _trace_path() -> str:
    from ._trace._files import new_trace_path

    return new_trace_path()


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) < 600 else text[:600] + " …"


def compact(answer: Any) -> dict[str, Any]:
    """The answer without its sections and notes, and citations with one short excerpt line:
    what a calling agent needs, at a fraction of the size (``detail="full"`` for the rest)."""
    cited = {e for c in answer.bottom_line for e in c.evidence}
    if answer.table is not None:
        cited |= {e for row in answer.table.rows for cell in row for e in cell.evidence}
    return {
        "question": answer.question, "mode": answer.mode,
        "bottom_line": [c.model_dump(mode="json") for c in answer.bottom_line],
        "table": answer.table.model_dump(mode="json") if answer.table else None,
        "citations": [{"id": c.id, "locator": c.locator,
                       "excerpt": c.excerpt.split("\n")[0][:160]}
                      for c in answer.citations if c.id in cited],
        "tasks": answer.tasks, "failed_tasks": answer.failed_tasks,
        "usage": answer.usage.model_dump(mode="json"),
        **({"fleet": answer.fleet.model_dump(mode="json", include={
            "transport", "hosts", "recap", "buckets", "counts", "problems"})}
           if answer.fleet is not None else {}),
    }


async def _events(orch: Orchestrator | FleetOrchestrator, question: str, tasks: list[str] | None,
                  limits: Any = None) -> Any:
    from ._catalog._planner import NoMatchingTask
    from ._orchestrator import UnknownTask

    try:
        async with aclosing(orch.stream(question, tasks=tasks, limits=limits)) as events:
            async for event in events:
                yield event
    except (UnknownTask, NoMatchingTask) as exc:  # the client's to correct: say why
        raise Refusal(str(exc)) from None


HOSTS_ARG = ("Fleet: the hosts to ask, a range or list (gpu[01-08], gpu01,gpu02). Over SSH "
             "unless fleet_dir is given; only hosts the server's operator allowed.")
FLEET_DIR_ARG = ("Fleet: a directory of per-host snapshots (DIR/<host>/) to ask instead of one "
                 "host; only inside a directory the server's operator allowed.")


def _fleet_transport(policy: FleetPolicy, root: str | None, hosts: str | None,
                     fleet_dir: str | None) -> tuple[Any, list[str] | None] | None:
    """The transport a fleet request names (None for a one-host request), or Refusal."""
    if hosts is None and fleet_dir is None:
        return None
    if root is not None:
        raise Refusal("root names one host; give it or a fleet (hosts, fleet_dir), not both")
    try:
        return policy.transport(hosts=hosts, fleet_dir=fleet_dir)
    except (FleetRefused, ValueError) as exc:  # ValueError: an unusable fleet directory
        raise Refusal(_one_line(exc)) from None


def build_server(default_root: str = "/", *, allowed_roots: Sequence[str] | None = None,
                 task_dirs: Sequence[str] = (), fleet: FleetPolicy | None = None,
                 **from_env: Any) -> MCPServer[Any]:
    """An MCP server whose ``investigate`` reads ``default_root`` (or a root inside
    ``allowed_roots`` that the client names), or asks a fleet that ``fleet`` allows (by
    default none).

    >>> build_server("/", fleet=FleetPolicy(fleet_dirs=("/srv/fleets",))).name
    'agentkit'
    """
    from ._version import __version__

    server: MCPServer[Any] = MCPServer(
        "agentkit", instructions="Investigate ML serving hosts read-only; answers are cited.",
        version=__version__, log_level="WARNING")  # the SDK's default, INFO, printed every run
    # the default root is the operator's own choice: allowed whatever else is (--allow-root
    # adds roots, it does not take the default away)
    allowed = list(dict.fromkeys([default_root, *(allowed_roots or ())]))
    served = _Served(default_root, allowed, fleet or FleetPolicy(), task_dirs, from_env)

    # The tools' signatures are their schemas (the SDK reads them): the work is below.
    @server.tool(name="investigate", description=DESCRIPTION)
    async def investigate(question: str, ctx: Context, root: str | None = None,
                          tasks: list[str] | None = None, detail: str = "compact",
                          max_tasks: int | None = None, max_steps: int | None = None,
                          deadline_s: float | None = None,
                          hosts: Annotated[str | None, Field(description=HOSTS_ARG)] = None,
                          fleet_dir: Annotated[str | None,
                                               Field(description=FLEET_DIR_ARG)] = None,
                          ) -> dict[str, Any]:
        """``detail``: "compact" (the bottom line, the table and the citations with short
        excerpts: light in a calling agent's context) or "full" (the whole answer)."""
        limits = {"max_tasks": max_tasks, "max_steps": max_steps, "deadline_s": deadline_s}
        return await _investigate(served, ctx, question, root, tasks, detail, limits, hosts,
                                  fleet_dir)

    @server.tool(name="list_tasks", description="The catalog tasks `investigate` can run.")
    def list_tasks() -> dict[str, Any]:
        cat = load_catalog(list(task_dirs))
        return {"tasks": [{"name": t.name, "title": t.title, "description": t.description}
                          for t in sorted(cat.values(), key=lambda t: t.name)]}

    @server.tool(name="replay", description="Re-run a recorded trace exactly (no model call, "
                 "no tool run) and return its answer.")
    async def replay(trace_path: str) -> dict[str, Any]:
        return await _replay(trace_path, served.allowed, served.task_dirs)

    _ = (investigate, list_tasks, replay)  # registered by the decorators
    return server


@dataclass
class _Served:
    """What the operator who started the server decided: the roots and fleets a client may
    name, the task directories, the settings."""

    default_root: str
    allowed: list[str]
    policy: FleetPolicy
    task_dirs: Sequence[str]
    from_env: dict[str, Any]


async def _investigate(served: _Served, ctx: Context, question: str, root: str | None,
                       tasks: list[str] | None, detail: str, limits: dict[str, Any],
                       hosts: str | None, fleet_dir: str | None) -> dict[str, Any]:
    if not question.split():
        raise Refusal('the question is empty: ask something, e.g. "Is NCCL tuned for this '
                      'topology?"')
    on_fleet = _fleet_transport(served.policy, root, hosts, fleet_dir)
    chosen = root or served.default_root
    if not _inside(chosen, served.allowed):
        raise Refusal(f"root {chosen!r} is not allowed; allowed: {served.allowed}")
    if detail not in ("compact", "full"):
        raise Refusal(f"detail must be 'compact' or 'full', not {detail!r}")
    try:
        checked = Limits(**limits)
        trace_path = _trace_path()
        one = Orchestrator.from_env(chosen, trace=Trace(trace_path, exclusive=True),
                                    task_dirs=served.task_dirs, **served.from_env)
    except Exception as exc:  # bad limits, root or config: the client's to correct
        raise Refusal(_one_line(exc)) from None
    orch: Orchestrator | FleetOrchestrator = (
        one if on_fleet is None else FleetOrchestrator(one, *on_fleet))
    try:
        async with orch:
            answer = await _reporting(orch, ctx, question, tasks, checked)
    except Refusal:
        raise
    except Exception as exc:  # the reason reaches the client, not a server traceback
        raise Refusal(f"{_one_line(exc)} (trace: {trace_path})") from None
    assert answer is not None
    if detail == "full":
        return {"answer": answer.model_dump(mode="json"), "markdown": to_markdown(answer),
                "trace": trace_path}
    return {"answer": compact(answer), "trace": trace_path}


async def _reporting(orch: Orchestrator | FleetOrchestrator, ctx: Context, question: str,
                     tasks: list[str] | None, limits: Limits) -> Any:
    """The answer, the run's progress reported to the client as it goes."""
    answer = None
    done, total = 0, 0
    async for event in _events(orch, question, tasks, limits):
        if event.kind == "plan":
            total = len(event.plan.tasks)
            await ctx.report_progress(0, total, "planned: " +
                                      ", ".join(t.id for t in event.plan.tasks))
        elif event.kind == "task_finished":
            done, total = event.done, event.total
            await ctx.report_progress(event.done, event.total,
                                      f"{event.task_id}: {event.status}")
        elif event.kind == "host_finished":
            await ctx.report_progress(event.done, event.total,
                                      f"{event.host}: {event.status}")
        elif event.kind == "model_answered":  # a subagent's step: still moving
            await ctx.report_progress(done, total, f"{event.task_id} step "
                                      f"{event.step}")
        elif event.kind == "answer":
            answer = event.answer
    return answer


async def _replay(trace_path: str, allowed: list[str],
                  task_dirs: Sequence[str] = ()) -> dict[str, Any]:
    from ._replay import replay_trace

    # The client names a file on this machine: only traces this server may show, read once
    # (a private copy), and only task directories this server allows: a trace written by
    # someone on the host could name any directory, and the catalog's errors quote what
    # they read (issue 28).
    trace_dir = os.path.dirname(_trace_path())
    if not _inside(trace_path, [trace_dir, *allowed]):
        raise Refusal(f"{trace_path} is not in the trace directory {trace_dir} or an "
                      "allowed root")
    with tempfile.TemporaryDirectory(prefix="agentkit-replay-") as scratch:
        try:
            copy = private_trace(trace_path, [trace_dir, *allowed], scratch)
            check_task_dirs(copy, allowed, task_dirs)
        except ReplayRefused as exc:
            raise Refusal(str(exc)) from None
        return await _replayed(trace_path, copy, replay_trace)


async def _replayed(trace_path: str, copy: str, replay_trace: Any) -> dict[str, Any]:
    try:
        result = await replay_trace(copy)
    except (ValueError, OSError) as exc:  # TraceError, a bad record: not a trace
        from ._replay._untrusted import redacted_error

        why = " ".join(redacted_error(exc).split()) or type(exc).__name__
        raise Refusal(f"{trace_path} is not a trace agentkit can replay: "
                      f"{why[:600].replace(copy, trace_path)}") from None
    if result.answer is None:
        return {"answer": None, "markdown": "", "notes": result.notes,
                "tasks": result.tasks}
    return {"answer": result.answer.model_dump(mode="json"),
            "markdown": to_markdown(result.answer), "notes": result.notes,
            "identical": result.identical}


MAX_TRACE = 256 << 20


class ReplayRefused(Exception):
    """A trace (or what it names) that MCP replay does not read; the message says why."""


def private_trace(trace_path: str, roots: Sequence[str], dest_dir: str) -> str:
    """A private copy of the trace at ``trace_path`` (which must lie in ``roots``)."""
    real = os.path.realpath(trace_path)
    if not _inside(real, roots):
        raise ReplayRefused(f"{trace_path} is not in the trace directory or an allowed root")
    try:
        fd = os.open(real, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise ReplayRefused(f"no trace file at {trace_path} ({exc.strerror})") from None
    try:
        st = os.fstat(fd)
        # where the descriptor really is: a directory on the way swapped for a link after
        # the realpath above shows here
        opened = os.path.realpath(f"/proc/self/fd/{fd}")
        if not stat.S_ISREG(st.st_mode) or not _inside(opened, roots):
            raise ReplayRefused(f"no trace file at {trace_path}")
        if st.st_size > MAX_TRACE:
            raise ReplayRefused(f"{trace_path} is larger than {MAX_TRACE >> 20} MiB")
        copy = os.path.join(dest_dir, "trace.jsonl")
        with open(copy, "wb") as out:
            while chunk := os.read(fd, 1 << 20):
                out.write(chunk)
    finally:
        os.close(fd)
    return copy


def check_task_dirs(copy: str, allowed: Sequence[str], served: Sequence[str]) -> None:
    """Refuse a trace whose run loaded task directories the server does not allow."""
    try:
        run = read_trace(copy).first("run", "start")
    except (ValueError, OSError):
        return  # not a trace: replay_trace says so
    cfg: dict[str, Any] = (run.data.get("config") or {}) if run is not None else {}
    for d in cfg.get("task_dirs") or []:
        if not isinstance(d, str) or not (_inside(d, allowed) or _inside(d, served)):
            raise ReplayRefused(f"the trace's run loaded task directory {d!r}, which is "
                                "neither this server's nor in an allowed root; not replayed")
