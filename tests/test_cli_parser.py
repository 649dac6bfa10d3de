"""``agentkit ask ...`` is parsed by a parser holding only the ``ask`` command (the others'
options are not built on its start-up): it must parse every command line starting with
``ask`` as the whole parser does, errors and help included."""

from __future__ import annotations

import contextlib
import io
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from agentkit.cli import _JsonAwareParser, _parser

_WORDS = ["q", "-", "--root", "/tmp", "--manifests", "--sandbox", "kernel", "auto", "bogus",
          "--base-url", "http://h/v1", "--model", "m", "--provider", "openai", "anthropic",
          "--api-key-env", "K", "--config", "c.toml", "--catalog", "--tasks-dir", "d",
          "--trace", "t.jsonl", "--json", "--format", "md", "text", "json", "xml", "--brief",
          "-q", "--quiet", "-v", "--verbose", "--log-format", "console", "--max-tasks", "3",
          "x", "--concurrency", "--hosts", "a,b", "--slurm-job", "--ray", "--fleet", "-h",
          "--help", "--version", "--no-such", "--", "tools", "doctor", "--ro"]


def _outcome(only_ask: bool, argv: list[str], as_json: bool) -> tuple[Any, ...]:
    out, err = io.StringIO(), io.StringIO()
    parser = _JsonAwareParser.wrap(_parser(only_ask=only_ask), as_json)
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            ns = parser.parse_args(argv)
        except SystemExit as exc:
            return ("exit", exc.code, out.getvalue(), err.getvalue())
        except Exception as exc:  # the --json wrapper's CLIError
            return ("error", type(exc).__name__, str(exc))
    got = {k: v for k, v in vars(ns).items() if k != "func"}
    return ("parsed", got, ns.func.__module__, ns.func.__name__)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rest=st.lists(st.sampled_from(_WORDS), max_size=8), as_json=st.booleans())
@example(rest=["q", "--root", "/x", "-q", "--trace", "/dev/null"], as_json=False)
@example(rest=[], as_json=False)
@example(rest=["--help"], as_json=False)
@example(rest=["q", "--format", "xml"], as_json=True)
@example(rest=["q", "--no-such"], as_json=False)
def test_ask_alone_parses_as_the_whole_parser(rest: list[str], as_json: bool) -> None:
    argv = ["ask", *rest]
    assert _outcome(True, argv, as_json) == _outcome(False, argv, as_json)
