"""Start scripts and ``env`` prefixes: what the engine process really gets.

A unit may run ``/opt/vllm/start.sh`` (or ``bash start.sh``, or ``/usr/bin/env K=V vllm …``);
the engine's environment is then the unit's, changed by the script. Only the plain shapes real
start scripts use are read, following bash's rules:

- ``export K=V`` and ``export K`` export; ``K=V`` alone is a shell variable, except that a
  name inherited from the environment stays exported (bash(1), ENVIRONMENT) and that under
  ``set -a`` every assignment is exported;
- ``source F`` / ``. F`` read F in place, under the same ``set -a`` state;
- commands split on ``;``, ``&&`` and ``||``; line continuations join;
- the command that starts the engine (``exec`` optional), with ``K=V`` words before it and
  ``env K=V …`` (both put K in that process's environment), ``$VAR``/``${VAR}``/
  ``${VAR:-default}`` and ``"$@"`` expanded.

Nothing is executed; a shape outside this subset leaves the command unresolved.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field

SHELLS = {"sh", "bash", "dash", "zsh"}
_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_ASSIGN = re.compile(rf"^({_NAME})=(.*)$", re.S)
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)")
_SOURCE_WORDS = ("source", ".")
MAX_SOURCE_DEPTH = 3


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
    command: list[str] = field(default_factory=list)
    command_env: dict[str, ScriptVar] = field(default_factory=dict)
    command_line: int = 0
    command_raw: str = ""
    sourced: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def exported(self) -> dict[str, ScriptVar]:
        out = {k: v for k, v in self.variables.items() if v.exported}
        out.update(self.command_env)
        return out


def script_of(argv: list[str]) -> tuple[str, list[str]] | None:
    """(script path, its arguments) when ``argv`` runs a shell script, else None."""
    if not argv:
        return None
    prog = argv[0].rsplit("/", 1)[-1]
    if prog in SHELLS:
        rest = [a for a in argv[1:] if not a.startswith("-")]
        if "-c" in argv[1:] or not rest:
            return None
        i = argv.index(rest[0])
        return rest[0], argv[i + 1 :]
    if argv[0].endswith(".sh"):
        return argv[0], argv[1:]
    return None


def strip_env(argv: list[str]) -> tuple[list[str], list[tuple[str, str]], bool]:
    """``env [-i] [-u NAME] K=V … CMD …`` → (CMD …, [(K, V)], whether -i cleared the
    environment); ``-u NAME`` comes back as (NAME, "\\0"), a removal."""
    if not argv or argv[0].rsplit("/", 1)[-1] != "env":
        return argv, [], False
    pairs: list[tuple[str, str]] = []
    clear = False
    i = 1
    while i < len(argv):
        a = argv[i]
        if a in ("-i", "--ignore-environment", "-"):
            clear = True
        elif a in ("-u", "--unset") and i + 1 < len(argv):
            pairs.append((argv[i + 1], "\0"))
            i += 1
        elif a.startswith("--unset="):
            pairs.append((a.split("=", 1)[1], "\0"))
        elif a == "--":
            i += 1
            break
        elif (m := _ASSIGN.match(a)) is not None:
            pairs.append((m.group(1), m.group(2)))
        elif a.startswith("-"):
            return argv, [], False  # -S, -C …: not read; leave the command unresolved
        else:
            break
        i += 1
    return argv[i:], pairs, clear


def source_targets(text: str) -> list[str]:
    """Files a script sources (to read before parsing it)."""
    out = []
    for _, cmd in _commands(text):
        words = _words(cmd)
        if len(words) == 2 and words[0] in _SOURCE_WORDS:
            out.append(words[1])
    return out


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


def _commands(text: str) -> list[tuple[int, str]]:
    """(line, command) with ``;``, ``&&`` and ``||`` splitting commands (outside quotes)."""
    out: list[tuple[int, str]] = []
    for n, line in _logical_lines(text):
        if not line or line.startswith("#"):
            continue
        buf, quote = "", ""
        i = 0
        while i < len(line):
            c = line[i]
            if quote:
                quote = "" if c == quote else quote
            elif c in "'\"":
                quote = c
            elif c == "#" and (not buf or buf[-1].isspace()):
                break
            elif c == ";" or line[i : i + 2] in ("&&", "||"):
                out.append((n, buf.strip()))
                buf = ""
                i += 1 if c == ";" else 2
                continue
            buf += c
            i += 1
        if buf.strip():
            out.append((n, buf.strip()))
    return [(n, c) for n, c in out if c]


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


class _Reader:
    def __init__(self, script: Script, env: dict[str, str], args: list[str],
                 is_engine: Callable[[list[str]], bool], sources: dict[str, str]) -> None:
        self.script = script
        self.values = dict(env)
        self.inherited = set(env)
        self.args = args
        self.is_engine = is_engine
        self.sources = sources
        self.all_export = False

    def read(self, text: str, path: str, depth: int = 0) -> None:
        lines = text.splitlines()
        for n, cmd in _commands(text):
            raw = lines[n - 1] if 0 < n <= len(lines) else cmd
            words = _words(cmd)
            if not words:
                continue
            if words[0] == "set":
                self._set(words[1:])
            elif words[0] == "export":
                self._export(words[1:], n, raw, path)
            elif words[0] in _SOURCE_WORDS and len(words) == 2:
                self._source(words[1], depth)
            elif len(words) == 1 and _ASSIGN.match(words[0]):
                self._assign(words[0], n, raw, path, exported=False)
            else:
                self._command(words, n, cmd, path)

    def _set(self, opts: list[str]) -> None:
        for i, o in enumerate(opts):
            if o in ("-o", "+o") and opts[i + 1 : i + 2] == ["allexport"]:
                self.all_export = o == "-o"
            elif re.fullmatch(r"[-+][a-zA-Z]+", o) and "a" in o:
                self.all_export = o[0] == "-"

    def _export(self, words: list[str], n: int, raw: str, path: str) -> None:
        for w in words:
            if _ASSIGN.match(w):
                self._assign(w, n, raw, path, exported=True)
            elif w in self.script.variables:
                self.script.variables[w].exported = True
            elif re.fullmatch(_NAME, w) and w in self.values:
                self.script.variables[w] = ScriptVar(w, self.values[w], n, raw, True, path)

    def _assign(self, word: str, n: int, raw: str, path: str, exported: bool) -> None:
        m = _ASSIGN.match(word)
        assert m is not None
        name, value = m.group(1), m.group(2)
        got = expand(value, self.values)
        value = value if got is None else got
        before = self.script.variables.get(name)
        exported = (exported or self.all_export or name in self.inherited
                    or bool(before and before.exported))
        self.script.variables[name] = ScriptVar(name, value, n, raw, exported, path)
        self.values[name] = value

    def _source(self, target: str, depth: int) -> None:
        path = expand(target, self.values) or target
        self.script.sourced.append(path)
        text = self.sources.get(path)
        if text is None or depth >= MAX_SOURCE_DEPTH:
            self.script.problems.append(f"{self.script.path}: sources {path}, which could not "
                                        "be read")
            return
        self.read(text, path, depth + 1)

    def _command(self, words: list[str], n: int, cmd: str, path: str) -> None:
        prefix: list[tuple[str, str]] = []  # K=V before the command: its environment only
        while words and (m := _ASSIGN.match(words[0])) is not None:
            prefix.append((m.group(1), m.group(2)))
            words = words[1:]
        if words[:1] == ["exec"]:
            words = words[1:]
        words, env_pairs, _clear = strip_env(words)
        if not words or not self.is_engine(words):
            return
        argv = self._argv(words)
        if argv is None:
            self.script.problems.append(f"{path}:{n}: the command uses a variable the script "
                                        "does not set")
            argv = words
        s = self.script
        s.command, s.command_line, s.command_raw = argv, n, cmd
        s.command_env = {k: ScriptVar(k, expand(v, self.values) or v, n, cmd, True, path)
                         for k, v in [*prefix, *env_pairs]}

    def _argv(self, words: list[str]) -> list[str] | None:
        out: list[str] = []
        for w in words:
            if w in ("$@", "$*"):
                out += self.args
                continue
            got = expand(w, self.values)
            if got is None:
                return None
            out += got.split() if got != w and " " in got else [got]
        return out


def parse_script(text: str, path: str, env: dict[str, str], args: list[str],
                 is_engine: Callable[[list[str]], bool],
                 sources: dict[str, str] | None = None) -> Script:
    """Read a start script. ``env`` is what the unit gives it, ``args`` its arguments,
    ``is_engine(argv)`` whether a command starts an inference server, ``sources`` the text of
    the files it sources (read beforehand; see :func:`source_targets`)."""
    script = Script(path=path)
    _Reader(script, env, args, is_engine, sources or {}).read(text, path)
    return script


def _words(line: str) -> list[str]:
    try:
        return shlex.split(line, comments=True)
    except ValueError:
        return []
