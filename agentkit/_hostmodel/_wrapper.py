"""Wrapper scripts: ``ExecStart=/opt/vllm/start.sh`` or ``bash -c``-free ``bash start.sh``.

What the engine really gets is what the script exports and the line it finally runs. Only the
plain shapes real start scripts use are read: ``export K=V``, ``K=V`` (a shell variable, not
in the environment unless exported or under ``set -a``), ``export K``, ``source``/``.`` of a
file, line continuations, ``$VAR``/``${VAR}``/``${VAR:-default}`` and ``"$@"`` in the final
command. Nothing is executed; a shape outside this subset leaves the command unresolved.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

SHELLS = {"sh", "bash", "dash", "zsh"}
_ASSIGN = re.compile(r"^(export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$")
_EXPORT_NAMES = re.compile(r"^export\s+([A-Za-z_][A-Za-z0-9_]*(?:\s+[A-Za-z_][A-Za-z0-9_]*)*)$")
_SOURCE = re.compile(r"^(?:source|\.)\s+(\S+)$")
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)")


@dataclass
class ScriptVar:
    name: str
    value: str
    line: int
    raw: str
    exported: bool
    source: str


@dataclass
class Script:
    """What a start script sets and runs, with the line of each."""

    path: str
    variables: dict[str, ScriptVar] = field(default_factory=dict)
    sourced: list[tuple[str, int]] = field(default_factory=list)
    command: list[str] = field(default_factory=list)
    command_line: int = 0
    command_raw: str = ""
    problems: list[str] = field(default_factory=list)

    @property
    def exported(self) -> dict[str, ScriptVar]:
        return {k: v for k, v in self.variables.items() if v.exported}


def script_of(argv: list[str]) -> tuple[str, list[str]] | None:
    """(script path, its arguments) when ``argv`` runs a shell script, else None."""
    if not argv:
        return None
    prog = argv[0].rsplit("/", 1)[-1]
    if prog == "env" and len(argv) > 1:
        return script_of(argv[1:])
    if prog in SHELLS:
        rest = [a for a in argv[1:] if not a.startswith("-")]
        if "-c" in argv[1:] or not rest:
            return None
        i = argv.index(rest[0])
        return rest[0], argv[i + 1 :]
    if argv[0].endswith(".sh"):
        return argv[0], argv[1:]
    return None


def _logical_lines(text: str) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    buf, start = "", 0
    for n, line in enumerate(text.splitlines(), 1):
        if not buf:
            start = n
        stripped = line.rstrip()
        if stripped.endswith("\\"):
            buf += stripped[:-1] + " "
            continue
        buf += stripped
        out.append((start, buf.strip()))
        buf = ""
    if buf:
        out.append((start, buf.strip()))
    return out


def expand(word: str, values: dict[str, str]) -> str | None:
    """``$VAR`` expansion over known values; None when a variable is unknown."""
    missing = False

    def sub(m: re.Match[str]) -> str:
        nonlocal missing
        name = m.group(1) or m.group(3)
        if name in values:
            return values[name]
        if m.group(2) is not None:
            return m.group(2)
        missing = True
        return m.group(0)

    out = _VAR.sub(sub, word)
    return None if missing else out


def parse_script(text: str, path: str, env: dict[str, str], args: list[str],
                 is_engine: object) -> Script:
    """Read a start script. ``env`` is what the unit gives it, ``args`` its arguments, and
    ``is_engine(argv)`` says whether a command line starts an inference server."""
    script = Script(path=path)
    values = dict(env)
    all_export = False
    for n, line in _logical_lines(text):
        if not line or line.startswith("#"):
            continue
        if line in ("set -a", "set -o allexport"):
            all_export = True
            continue
        if line in ("set +a", "set +o allexport"):
            all_export = False
            continue
        m = _ASSIGN.match(line)
        if m and (_quoted(m.group(3).strip()) or " " not in m.group(3).strip()):
            raw_value = _unquote(m.group(3).strip())
            value = expand(raw_value, values)
            if value is None:
                value = raw_value
            exported = bool(m.group(1)) or all_export or (
                m.group(2) in script.variables and script.variables[m.group(2)].exported)
            script.variables[m.group(2)] = ScriptVar(m.group(2), value, n, line, exported, path)
            values[m.group(2)] = value
            continue
        m2 = _EXPORT_NAMES.match(line)
        if m2:
            for name in m2.group(1).split():
                if name in script.variables:
                    script.variables[name].exported = True
            continue
        m3 = _SOURCE.match(line)
        if m3:
            script.sourced.append((m3.group(1), n))
            continue
        words = _words(line)
        if words and words[0] == "exec":
            words = words[1:]
        if words and is_engine(words):  # type: ignore[operator]
            argv = _expand_argv(words, values, args)
            if argv is None:
                script.problems.append(f"{path}:{n}: the command uses a variable the script "
                                       "does not set")
                argv = words
            script.command, script.command_line, script.command_raw = argv, n, line
    return script


def _quoted(value: str) -> bool:
    v = value.strip()
    return len(v) >= 2 and v[0] == v[-1] and v[0] in "'\""


def _unquote(value: str) -> str:
    return value[1:-1] if _quoted(value) else value


def _words(line: str) -> list[str]:
    try:
        return shlex.split(line, comments=True)
    except ValueError:
        return []


def _expand_argv(words: list[str], values: dict[str, str], args: list[str]) -> list[str] | None:
    out: list[str] = []
    for w in words:
        if w in ("$@", "$*"):
            out += args
            continue
        got = expand(w, values)
        if got is None:
            return None
        if got != w and not w.startswith(("'", '"')) and " " in got:
            out += got.split()  # an unquoted $FLAGS splits into words
        else:
            out.append(got)
    return out
