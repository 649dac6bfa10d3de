"""systemd unit files: sections, continuation lines, comments, drop-ins and the effective
environment as systemd.exec(5) compiles it: the manager's ``DefaultEnvironment=`` (system.conf
and its drop-ins), then ``Environment=`` (an empty assignment resets), then
``EnvironmentFile=`` (its settings override ``Environment=``; ``-`` marks an optional file,
wildcards are expanded), then ``UnsetEnvironment=`` as the final step (``NAME`` removes any
assignment, ``NAME=VALUE`` only that exact one); later assignments win throughout. Proven
against systemd 252 itself by tests/test_systemd_truth.py.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field

from ._systemd_envfile import EnvVar, UnitSyntaxError, parse_dotenv
from ._systemd_paths import (
    GlobError,
    aliases,
    drop_in_files,
    expand_env_glob,
    system_conf_files,
)
from ._systemd_syntax import (
    SpecifierError,
    apply_unit_specifiers,
    environment_words,
    extract_words,
    unit_specifiers,
)


@dataclass
class Assignment:
    section: str
    key: str
    value: str
    source: str
    line: int
    raw: str
    comment: str = ""


@dataclass
class Unit:
    name: str
    files: list[str] = field(default_factory=list)
    assignments: list[Assignment] = field(default_factory=list)
    environment: dict[str, EnvVar] = field(default_factory=dict)
    exec_start: list[str] = field(default_factory=list)
    exec_start_at: Assignment | None = None
    user: Assignment | None = None
    service_type: str = "simple"
    exec_starts: int = 0  # ExecStart= commands in effect (an empty one resets the list)
    unset: list[tuple[str, Assignment]] = field(default_factory=list)
    removed: dict[str, tuple[EnvVar, Assignment]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    # file:line: a construct agentkit does not resolve; what depends on it is not established
    unresolved: list[str] = field(default_factory=list)
    # EnvironmentFile= assignments systemd drops (``export NAME=…``), under the name meant
    dropped: list[EnvVar] = field(default_factory=list)
    refused: str = ""  # why systemd would refuse to load the unit, if it would


_WS = " \t\n\r"  # systemd's WHITESPACE: nothing else is stripped
_EOL = re.compile(r"\r\n|\r|\n|\0")


def _logical_lines(text: str) -> list[tuple[int, str, str, list[str]]]:
    """config_parse()'s reading: (first line, logical line, raw text, comment lines above).
    A comment line is dropped even inside a continuation; a line ending in an unescaped
    backslash continues, the backslash becoming a space; only the first line loses a BOM."""
    out: list[tuple[int, str, str, list[str]]] = []
    lines = _EOL.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    comment: list[str] = []
    cont: tuple[int, str, str] | None = None
    for n, buf in enumerate(lines, 1):
        stripped = buf.lstrip(_WS)
        if stripped[:1] in ("#", ";"):
            comment.append(stripped.lstrip("#; ").rstrip())
            continue
        line = buf.removeprefix("\ufeff") if n == 1 else buf
        start, joined, raw = (cont[0], cont[1] + line, cont[2] + "\n" + buf) if cont else \
            (n, line, buf)
        if _odd_backslash(joined):
            cont = (start, joined[:-1] + " ", raw)
            continue
        cont = None
        if joined.strip(_WS):
            out.append((start, joined, raw, comment))
        comment = []
    if cont is not None:
        out.append((cont[0], cont[1], cont[2], comment))
    return out


def _odd_backslash(s: str) -> bool:
    return (len(s) - len(s.rstrip("\\"))) % 2 == 1


def parse_unit_text(text: str, source: str, problems: list[str] | None = None
                    ) -> list[Assignment]:
    """Assignments in file order, each with its first line and the comment block right above
    it. Lines systemd ignores with a warning (no ``=``, no key, outside a section) are named in
    ``problems``; a malformed section header makes systemd refuse the file
    (UnitSyntaxError)."""
    out: list[Assignment] = []
    section = ""
    for start, logical, raw, comment in _logical_lines(text):
        line = logical.strip(_WS)
        if not line:
            continue
        if line.startswith("["):
            if not line.endswith("]"):
                raise UnitSyntaxError(source, start, "bad section header (no closing ']')")
            section = line[1:-1]
            continue
        key, eq, value = line.partition("=")
        if not eq or not key.strip(_WS) or not section:
            if problems is not None:
                why = "outside any section" if eq and key.strip(_WS) else "not Key=Value"
                # the line's text is not quoted: a line that is no assignment may be part
                # of a secret, seen by the redactor without its name (issue 28)
                problems.append(f"{source}:{start}: systemd ignores this line ({why})")
            continue
        out.append(Assignment(section, key.strip(_WS), value.strip(_WS), source, start, raw,
                              " ".join(comment)))
    return out


def split_env_assignments(value: str) -> list[tuple[str, str]]:
    """``Environment=`` value → [(name, value)], as systemd splits and unquotes it."""
    return environment_words(value)[0]


def specifiers(unit_name: str) -> dict[str, str]:
    """The unit specifiers agentkit resolves (systemd.unit(5)); for the system manager %h/%u/%U
    are root's, whatever User= says."""
    return unit_specifiers(unit_name)


def apply_specifiers(value: str, spec: dict[str, str]) -> str:
    return apply_unit_specifiers(value, spec)


def expand_exec(argv: list[str], env: dict[str, str]) -> list[str]:
    """ExecStart's own variable expansion (systemd.service(5)): ``${FOO}`` becomes the value
    inside its word, a word that is exactly ``$FOO`` becomes the value split at whitespace;
    an unset variable is empty."""
    out: list[str] = []
    for word in argv:
        m = re.fullmatch(r"\$([A-Za-z_][A-Za-z0-9_]*)", word)
        if m:
            out += env.get(m.group(1), "").split()
            continue
        out.append(re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}", lambda m: env.get(m.group(1), ""),
                          word))
    return out


def resolve_unit(
    unit_path: str,
    read: Callable[[str], str | None],
    list_dir: Callable[[str], list[str]],
    instance: str | None = None,
    links: Callable[[str], list[str]] | None = None,
    canonical: Callable[[str], str | None] | None = None,
) -> Unit:
    """The effective unit: main file, drop-ins in systemd's order, the manager's
    DefaultEnvironment=, environment files.

    ``read`` returns a file's text or None when absent; ``list_dir`` returns names or [].
    ``instance`` resolves a template (``foo@.service``) as ``foo@INSTANCE.service``:
    specifiers such as ``%i`` take their values. ``links`` (names of the symbolic links in a
    directory) and ``canonical`` (a path with its links resolved, None when absent) find the
    unit's aliases, whose drop-in directories systemd reads too.
    """
    name = unit_path.rsplit("/", 1)[-1]
    if instance is not None and "@." in name:
        name = name.replace("@.", f"@{instance}.", 1)
    unit = Unit(name=name)
    text = read(unit_path)
    if text is None:
        raise FileNotFoundError(unit_path)
    sources = [(unit_path, text)]
    other_names = aliases(name, unit_path, links, canonical) if links and canonical else []
    for path in drop_in_files(name, list_dir, other_names):
        body = read(path)
        if body is not None:  # a dangling link masks, and is read as nothing
            sources.append((path, body))
    state = _Compiled(specifiers(name))
    for path, body in sources:
        unit.files.append(path)
        for a in parse_unit_text(body, path, unit.problems):
            unit.assignments.append(a)
            _apply(unit, state, a)
    defaults = _default_environment(unit, read, list_dir)
    files_env = _environment_files(unit, state, read, list_dir)
    unit.environment = {**defaults, **state.env, **files_env}
    _unset(unit, state)
    if unit.exec_starts > 1 and unit.service_type != "oneshot":
        unit.refused = (f"{unit.exec_starts} ExecStart= commands in effect for Type="
                        f"{unit.service_type} (only oneshot allows more; a drop-in must reset "
                        "with an empty ExecStart= first): systemd refuses to load the unit, so "
                        "none of them runs")
    return unit


# DefaultEnvironment= is the manager's, not a unit's: only the specifiers of its table
# that do not depend on the host (systemd_and_tmp_specifier_table: %T %V, and %%)
_MANAGER_SPECIFIERS = {"%": "%", "T": "/tmp", "V": "/var/tmp"}


@dataclass
class _Compiled:
    """What the unit's own lines compile to, before the environment is put together."""

    spec: dict[str, str]
    env: dict[str, EnvVar] = field(default_factory=dict)
    env_files: list[tuple[str, bool, Assignment]] = field(default_factory=list)
    refused_env_files: list[tuple[str, str, Assignment]] = field(default_factory=list)


def _default_environment(unit: Unit, read: Callable[[str], str | None],
                         list_dir: Callable[[str], list[str]]) -> dict[str, EnvVar]:
    """DefaultEnvironment= of system.conf and its drop-ins: the manager passes it to every
    unit, below the unit's own settings."""
    env: dict[str, EnvVar] = {}
    for path in system_conf_files(list_dir):
        body = read(path)
        if body is None:
            continue
        try:
            found = parse_unit_text(body, path, unit.problems)
        except UnitSyntaxError as exc:
            unit.unresolved.append(f"{exc} (the manager stops reading it: its "
                                   "DefaultEnvironment= is not established)")
            continue
        used = False
        for a in found:
            if a.section == "Manager" and a.key == "DefaultEnvironment":
                used = True
                _assign_env(env, a, unit, _MANAGER_SPECIFIERS)
        if used:
            unit.files.append(path)
    return env


def _assign_env(env: dict[str, EnvVar], a: Assignment, unit: Unit,
                spec: dict[str, str]) -> None:
    """One Environment=-style line: an empty one resets, later names win; specifiers are
    replaced word by word, as systemd does after splitting."""
    if not a.value:
        env.clear()
        return
    pairs, ignored, unresolved = environment_words(
        a.value, lambda w: apply_specifiers(w, spec))
    unit.problems.extend(f"{a.source}:{a.line}: {why}" for why in ignored)
    unit.unresolved.extend(f"{a.source}:{a.line}: {a.key}= word {why}, whose value depends on "
                           "the running host (or systemd refuses it): what it sets is not "
                           "established" for why in unresolved)
    for name, val in pairs:
        env[name] = EnvVar(name, val, a.source, a.line, a.raw, a.comment)


def _environment_files(unit: Unit, state: _Compiled, read: Callable[[str], str | None],
                       list_dir: Callable[[str], list[str]]) -> dict[str, EnvVar]:
    """EnvironmentFile= in order, each pattern's matches in glob(3)'s (sorted) order; later
    settings win."""
    env: dict[str, EnvVar] = {}
    for pattern, optional, a in state.env_files:
        where = f"{a.source}:{a.line}"
        try:
            paths = expand_env_glob(pattern, list_dir)
        except GlobError as exc:
            unit.unresolved.append(f"{where}: EnvironmentFile={a.value}: {exc}; the variables "
                                   "it sets are not established")
            continue
        bodies = [(p, read(p)) for p in paths]
        if not any(b is not None for _, b in bodies):
            if not optional:
                unit.problems.append(f"{where}: EnvironmentFile {pattern} is missing (not "
                                     "optional): systemd fails to start the unit")
            continue
        for path, body in bodies:
            if body is None:
                continue
            unit.files.append(path)
            for var in parse_dotenv(body, path, ignored=unit.problems,
                                    unresolved=unit.unresolved, dropped=unit.dropped):
                env[var.name] = var
    _refused_env_files(unit, state, read)
    return env


def _refused_env_files(unit: Unit, state: _Compiled, read: Callable[[str], str | None]
                       ) -> None:
    """An EnvironmentFile= line systemd ignores is said, with what the file it likely meant
    (the path from /) would have set: those settings do not reach the unit."""
    for path, bad, a in state.refused_env_files:
        meant = "/" + path if bad == "not absolute" else ""
        body = read(meant) if meant and "*" not in meant and "?" not in meant else None
        try:
            names = [v.name for v in parse_dotenv(body, meant)] if body else []
            sets = (f"; {meant}, if that was meant, sets {', '.join(names)}, which therefore "
                    "do not apply" if names else "")
        except UnitSyntaxError as exc:  # what it would set is then not established
            sets = f"; {meant}, if that was meant, does not read as NAME=value ({exc})"
        unit.problems.append(f"{a.source}:{a.line}: EnvironmentFile={a.value}: the path is "
                             f"{bad}, so systemd ignores this line{sets}")


def _unset(unit: Unit, state: _Compiled) -> None:
    """UnsetEnvironment= is applied last, over everything compiled before it (the manager's
    DefaultEnvironment= included)."""
    for word, a in unit.unset:
        name, eq, value = word.partition("=")
        var = unit.environment.get(name)
        if var is not None and (not eq or var.value == value):
            unit.removed[name] = (unit.environment.pop(name), a)


def _resolved(unit: Unit, state: _Compiled, a: Assignment) -> str | None:
    """The value with its specifiers replaced; None (and said) when one is not established."""
    if "%" not in a.value:
        return a.value
    try:
        return apply_specifiers(a.value, state.spec)
    except SpecifierError as exc:
        # the environment's gaps are "not established"; the command's are a problem of its own
        said = unit.problems if a.key == "ExecStart" else unit.unresolved
        said.append(f"{a.source}:{a.line}: {a.key}= uses the specifier {exc}, whose value "
                    "depends on the running host (or systemd refuses it): what it sets is not "
                    "established")
        return None


def _env_file_path_refused(path: str) -> str:
    """Why config_parse_unit_env_file() ignores the path ("" when it does not): it must be
    absolute, and normalized once '.' and repeated slashes are dropped (no '..'), as
    ``systemd-analyze verify`` reports ("path is not absolute, ignoring")."""
    if not path.startswith("/"):
        return "not absolute"
    if ".." in path.split("/"):
        return "not normalized"
    return ""


def _apply(unit: Unit, state: _Compiled, a: Assignment) -> None:
    if a.section != "Service":
        return
    if a.key in ("EnvironmentFile", "ExecStart", "User"):  # the whole value, then used
        value = _resolved(unit, state, a)
        if value is None and a.key != "ExecStart":  # the command is kept, its gap said
            return
        a.value = a.value if value is None else value
    if a.key == "Environment":
        _assign_env(state.env, a, unit, state.spec)
    elif a.key == "EnvironmentFile":
        if not a.value:
            state.env_files.clear()
        else:
            optional = a.value.startswith("-")
            path = a.value[1:] if optional else a.value
            bad = _env_file_path_refused(path)
            if bad:  # path_simplify_and_warn(PATH_CHECK_ABSOLUTE), not fatal: the line is dropped
                state.refused_env_files.append((path, bad, a))
            else:
                state.env_files.append((path, optional, a))
    elif a.key == "UnsetEnvironment":
        if not a.value:
            unit.unset.clear()
        words, failed = extract_words(a.value)
        for w in words:  # each word's specifiers, as config_parse_unset_environ() does
            try:
                unit.unset.append((apply_specifiers(w, state.spec) if "%" in w else w, a))
            except SpecifierError as exc:
                unit.unresolved.append(f"{a.source}:{a.line}: UnsetEnvironment= word {w!r} "
                                       f"uses the specifier {exc}: what it removes is not "
                                       "established")
        if failed:
            unit.problems.append(f"{a.source}:{a.line}: invalid syntax: the rest of the "
                                 "UnsetEnvironment= line is ignored")
    elif a.key == "User":
        unit.user = a
    elif a.key == "Type":
        unit.service_type = a.value
    elif a.key == "ExecStart":
        if not a.value:
            unit.exec_start, unit.exec_start_at = [], None
            unit.exec_starts = 0
            return
        unit.exec_starts += 1
        argv = shlex.split(a.value)
        if argv:
            argv[0] = argv[0].lstrip("-@:+!")
        unit.exec_start, unit.exec_start_at = argv, a
