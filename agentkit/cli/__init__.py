"""The ``agentkit`` command line. Heavy imports happen inside each command, so
``agentkit --help`` and ``agentkit tools list`` start fast."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Iterator, Sequence
from typing import NoReturn

from .._codecache import compiled_dataclasses
from ._errors import EXIT_CODES, CLIError

__all__ = ["main"]


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("agentkit")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown (not installed)"


class _Version(argparse.Action):
    # importlib.metadata costs 20-30 ms to import: only when --version is asked for
    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        sys.stdout.write(f"agentkit {_version()}\n")  # where argparse's own action writes
        parser.exit()


def _parser(only_ask: bool = False) -> argparse.ArgumentParser:
    """The command line's parser; ``only_ask`` leaves out the commands after ``ask`` (building
    their options is 10 ms of an ``agentkit ask`` start), for a command line whose first word
    is ``ask``: argparse then parses it the same (tests/test_cli_parser.py)."""
    p = argparse.ArgumentParser(
        prog="agentkit",
        description="Answers questions about ML serving deployments by finding out.",
        epilog="Exit codes: " + "; ".join(f"{c} {w}" for c, w in EXIT_CODES.items()))
    p.add_argument("--version", action=_Version, nargs=0,
                   help="show the program's version number and exit")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    from . import _ask

    _ask.register(sub)
    if only_ask:
        return p
    from . import (
        _catalog_cmd,
        _doctor_cmd,
        _mcp_cmd,
        _replay_cmd,
        _schema_cmd,
        _snapshot_cmd,
        _tools_cmd,
    )

    _tools_cmd.register(sub)
    _catalog_cmd.register(sub)
    _snapshot_cmd.register(sub)
    _schema_cmd.register(sub)
    _mcp_cmd.register(sub)
    _replay_cmd.register(sub)
    _doctor_cmd.register(sub)
    c = sub.add_parser("completion", help="print a shell completion script (bash, zsh, tcsh)",
                       description="e.g. agentkit completion bash > "
                       "~/.local/share/bash-completion/completions/agentkit")
    c.add_argument("shell", choices=["bash", "zsh", "tcsh"], help="the shell to complete for")
    c.set_defaults(func=lambda args: _completion(p, args.shell))
    return p


def _completion(parser: argparse.ArgumentParser, shell: str) -> int:
    # shtab writes the script from the parser itself, so it never drifts from the options
    import shtab

    sys.stdout.write(shtab.complete(parser, shell=shell))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; every failure is a one-line message (and, with ``--json``, a JSON
    error object on stdout) and an exit code, never a traceback."""
    words = list(sys.argv[1:] if argv is None else argv)
    as_json = "--json" in words or "--format=json" in words or any(
        a == "--format" and b == "json" for a, b in zip(words, words[1:]))  # noqa: B905,RUF007
    with _withheld_output(), compiled_dataclasses():
        try:
            parser = _parser(only_ask=words[:1] == ["ask"])
            args = _JsonAwareParser.wrap(parser, as_json).parse_args(words)
            return int(args.func(args) or 0)
        except CLIError as exc:
            return _fail(str(exc), exc.code, as_json)
        except KeyboardInterrupt:
            return _fail("interrupted; the trace was closed", 130, as_json)
        except BrokenPipeError:
            return 0


@contextlib.contextmanager
def _withheld_output() -> Iterator[None]:
    """stdout and stderr, for the command, withholding the model API key in any spelling
    (issue 28: a server's echo of it reached both by a note and a log line)."""
    from .._trace._withhold import WithholdingStream

    saved = sys.stdout, sys.stderr
    if sys.stdout is not None:
        sys.stdout = WithholdingStream(sys.stdout)
    if sys.stderr is not None:
        sys.stderr = WithholdingStream(sys.stderr)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved


class _JsonAwareParser:
    """argparse's own errors (exit 2) as a JSON object too when ``--json`` was given."""

    @staticmethod
    def wrap(parser: argparse.ArgumentParser, as_json: bool) -> argparse.ArgumentParser:
        if as_json:
            def error(message: str) -> NoReturn:
                raise CLIError(f"{message} (see agentkit --help)")
            for p in [parser, *_subparsers(parser)]:
                p.error = error  # type: ignore[method-assign]
        return parser


def _subparsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    out: list[argparse.ArgumentParser] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                out += [sub, *_subparsers(sub)]
    return out


def _fail(message: str, code: int, as_json: bool) -> int:
    if as_json:
        with contextlib.suppress(OSError):
            sys.stdout.write(json.dumps({"error": {"code": code, "message": message}}) + "\n")
            sys.stdout.flush()
    if sys.stderr is not None:  # None when started with stderr closed
        with contextlib.suppress(OSError, ValueError):  # nor may a closed pipe turn into a
            print(f"agentkit: {message}", file=sys.stderr)  # traceback
    return code
