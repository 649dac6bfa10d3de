"""Every command, option and positional of the CLI says what it is for in --help (issue 25
item 8: `replay`/`report` trace, `report -o`, `replay --json`, `schema --format`,
`--tasks-dir` had none). Walked from the parser itself, so a new option without help fails."""

from __future__ import annotations

import argparse

from agentkit.cli import _parser


def _missing(parser: argparse.ArgumentParser, path: str) -> list[str]:
    out: list[str] = []
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help for a in action._choices_actions}
            for name, sub in action.choices.items():
                if not helps.get(name):
                    out.append(f"{path} {name} (the command)")
                out += _missing(sub, f"{path} {name}")
            continue
        if not action.help or action.help == argparse.SUPPRESS:
            out.append(f"{path} {'/'.join(action.option_strings) or action.dest}")
    return out


def test_every_command_option_and_positional_has_help() -> None:
    assert _missing(_parser(), "agentkit") == []
