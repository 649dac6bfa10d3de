"""``agentkit replay``, ``agentkit trace show`` and ``agentkit report``."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ._errors import CLIError


def register(sub: Any) -> None:
    p = sub.add_parser("replay", help="re-run a recorded trace: exactly (no model call, no tool "
                       "run), or with --live-tools to see what drifted")
    p.add_argument("trace", help="the trace file to replay (.jsonl or .jsonl.gz)")
    p.add_argument("--live-tools", action="store_true",
                   help="keep the recorded model answers, run the tools again now")
    p.add_argument("--root", metavar="DIR", help="with --live-tools: investigate this root "
                   "instead of the recorded one")
    p.add_argument("--json", action="store_true", help="the replayed answer (and drift) as JSON")
    p.add_argument("--trace-out", metavar="FILE", help="also trace the replay itself")
    p.set_defaults(func=replay)
    t = sub.add_parser("trace", help="look at a recorded trace")
    tsub = t.add_subparsers(dest="trace_command", required=True, metavar="ACTION")
    s = tsub.add_parser("show", help="plan, per-task timeline, tool calls, answer")
    s.add_argument("trace", help="the trace file (.jsonl, or .jsonl.gz as the trace directory "
                   "keeps them)")
    s.set_defaults(func=show)
    ls = tsub.add_parser("list", help="the runs in the trace directory, newest first: name, "
                         "when, status, size, question")
    ls.add_argument("--dir", metavar="DIR", help="the trace directory; default: "
                    "$AGENTKIT_TRACE_DIR or ~/.local/state/agentkit/traces/")
    ls.add_argument("--json", action="store_true", help="the runs as a JSON list")
    ls.set_defaults(func=list_cmd)
    r = sub.add_parser("report", help="write a self-contained HTML report of a trace")
    r.add_argument("trace", help="the trace file to report on (.jsonl or .jsonl.gz)")
    r.add_argument("-o", "--output", required=True, metavar="FILE",
                   help="where to write the HTML report (one self-contained file)")
    r.set_defaults(func=report)


def _read(path: str) -> Any:
    """The trace at ``path`` as it may be shown: a file from disk is untrusted input, its
    strings redacted like a tool's output (issue 28)."""
    from .._replay._untrusted import redacted_error, redacted_trace
    from .._trace._read import TraceError, read_trace

    try:
        return redacted_trace(read_trace(path))
    except TraceError as exc:
        raise CLIError(redacted_error(exc)) from None


def replay(args: argparse.Namespace) -> int:
    import anyio

    from .._render import to_markdown
    from .._replay import ReplayDiverged, replay_trace
    from .._replay._untrusted import redacted_error
    from .._trace._read import TraceError

    if args.root and not args.live_tools:
        raise CLIError("--root only applies with --live-tools (an exact replay reads nothing)")
    try:
        result = anyio.run(lambda: replay_trace(args.trace, live_tools=args.live_tools,
                                                root=args.root, trace_out=args.trace_out))
    except TraceError as exc:
        raise CLIError(redacted_error(exc)) from None
    except ReplayDiverged as exc:
        raise CLIError(f"replay {exc}. The code now asks something the trace never recorded: "
                       "re-record the trace with this version", 6) from None
    except FileNotFoundError as exc:
        raise CLIError(str(exc)) from None
    for note in result.notes:
        print(f"agentkit: {note}", file=sys.stderr)
    if not args.live_tools and result.answer is not None:
        if result.recorded is None:
            verdict = "no answer was recorded to compare with (the run stopped first)"
        elif result.identical:
            verdict = "answer identical to the recorded one"
        else:
            verdict = "answer DIFFERENT from the recorded one"
        print(f"agentkit: replayed {args.trace}: {verdict}", file=sys.stderr)
    if args.json:
        out: dict[str, Any] = {"answer": json.loads(result.answer.model_dump_json())
                               if result.answer else None}
        if result.drift is not None:
            out["drift"] = _drift_json(result.drift)
        if not args.live_tools and result.answer is not None:
            sys.stdout.write(result.answer.model_dump_json(indent=2) + "\n")
        else:
            sys.stdout.write(json.dumps(out, indent=2) + "\n")
    else:
        if result.drift is not None:
            sys.stdout.write(_drift_text(result.drift))
        if result.answer is not None:
            sys.stdout.write(to_markdown(result.answer))
        else:
            sys.stdout.write("No answer: the recorded run stopped before it finished.\n"
                             f"Task states: {json.dumps(result.tasks)}\n")
    if result.answer is None:  # nothing to use: a script must not take this for an answer
        print(f"agentkit: {args.trace} holds no answer (the recorded run stopped first)",
              file=sys.stderr)
        return 8
    return 0


def _drift_json(d: Any) -> dict[str, Any]:
    return {"changed": [{"id": o.id, "locator": o.locator, "was": o.excerpt, "now": n.excerpt}
                        for o, n in d.changed],
            "gone": [{"id": e.id, "locator": e.locator} for e in d.gone],
            "new": [{"id": e.id, "locator": e.locator} for e in d.new],
            "findings_on_changed_evidence": d.findings,
            "stale_model_steps": d.stale_steps}


def _drift_text(d: Any) -> str:
    if not d.any:
        return "# Drift\n\nNo recorded evidence changed.\n\n"
    lines = ["# Drift", "", "Evidence that changed since the recording:"]
    lines += [f"- `{o.locator}`: was `{o.excerpt[:120]}`, now `{n.excerpt[:120]}`"
              for o, n in d.changed]
    lines += [f"- `{e.locator}`: no longer found" for e in d.gone]
    lines += ["", "Recorded findings that rest on it:"]
    lines += [f"- {f}" for f in d.findings] or ["- none"]
    if d.stale_steps:
        lines += ["", "Model steps whose input changed; their recorded answers were reused "
                      "and may no longer hold:"] + [f"- {s}" for s in d.stale_steps]
    return "\n".join(lines) + "\n\nThe answer, re-made with today's evidence:\n\n"


def show(args: argparse.Namespace) -> int:
    from .._trace._show import render_show

    render_show(_read(args.trace))
    return 0


def list_cmd(args: argparse.Namespace) -> int:
    import os
    import time

    from .._render import visible_controls
    from .._trace._files import trace_dir
    from .._trace._list import list_runs

    base = args.dir or trace_dir()
    if args.dir and not os.path.isdir(base):
        raise CLIError(f"--dir {base!r} is not a directory")
    runs = list_runs(base)
    if args.json:
        sys.stdout.write(json.dumps([r.__dict__ for r in runs], indent=2) + "\n")
        return 0
    if not runs:
        print(f"no runs traced in {base}")
        return 0
    print(f"{'name':<35} {'when':<19} {'status':<11} {'size':>8}  question")
    for r in runs:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(r.when)) if r.when else "?"
        question = visible_controls(r.question)
        print(f"{r.name:<35} {when:<19} {r.status:<11} {_size(r.size):>8}  "
              f"{question[:60]}{'…' if len(question) > 60 else ''}")
    total = sum(r.size for r in runs)
    print(f"{len(runs)} run{'' if len(runs) == 1 else 's'}, {_size(total)} in {base}")
    return 0


def _size(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 1e6 else f"{n / 1e3:.0f} KB" if n >= 1e3 else f"{n} B"


def report(args: argparse.Namespace) -> int:
    from .._trace._report import render_report

    html = render_report(_read(args.trace))
    try:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(html)
    except OSError as exc:
        raise CLIError(f"cannot write {args.output}: {exc.strerror}") from None
    print(f"agentkit: report written to {args.output}", file=sys.stderr)
    return 0
