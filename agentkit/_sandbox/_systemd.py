"""systemd unit files: sections, continuation lines, comments, drop-ins and the effective
environment as systemd.exec(5) compiles it: ``Environment=`` (an empty assignment resets),
then ``EnvironmentFile=`` (its settings override ``Environment=``; ``-`` marks an optional
file), then ``UnsetEnvironment=`` as the final step (``NAME`` removes any assignment,
``NAME=VALUE`` only that exact one); later assignments win throughout.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field

# Drop-in directories, highest priority first: a same-named file in an earlier directory
# masks later ones (systemd.unit(5)).
UNIT_DIRS = ("/etc/systemd/system", "/run/systemd/system", "/usr/local/lib/systemd/system",
             "/usr/lib/systemd/system", "/lib/systemd/system")


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
class EnvVar:
    name: str
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
    refused: str = ""  # why systemd would refuse to load the unit, if it would


class UnitSyntaxError(ValueError):
    def __init__(self, source: str, line: int, msg: str) -> None:
        super().__init__(f"{source}:{line}: {msg}")
        self.line = line


def parse_unit_text(text: str, source: str) -> list[Assignment]:
    """Assignments in file order, each with its line and the comment block right above it."""
    out: list[Assignment] = []
    section = ""
    comment: list[str] = []
    lines = text.removeprefix("\ufeff").splitlines()  # systemd skips a leading BOM
    i = 0
    while i < len(lines):
        start = i
        raw = lines[i]
        line = raw.strip()
        i += 1
        while line.endswith("\\") and i < len(lines):
            nxt = lines[i].strip()
            i += 1
            if nxt.startswith(("#", ";")):
                continue
            line = line[:-1].rstrip() + " " + nxt
            raw += "\n" + lines[i - 1]
        if not line:
            comment = []
            continue
        if line.startswith(("#", ";")):
            comment.append(line.lstrip("#; ").rstrip())
            continue
        if line.startswith("["):
            if not line.endswith("]"):
                raise UnitSyntaxError(source, start + 1, f"bad section header {line!r}")
            section = line[1:-1]
            comment = []
            continue
        if "=" not in line:
            raise UnitSyntaxError(source, start + 1, f"expected Key=Value, got {line[:120]!r}")
        key, _, value = line.partition("=")
        out.append(Assignment(section, key.strip(), value.strip(), source, start + 1, raw,
                              " ".join(comment)))
        comment = []
    return out


def split_env_assignments(value: str) -> list[tuple[str, str]]:
    """``Environment=`` value → [(name, value)], honouring quotes as systemd does."""
    pairs = []
    for word in shlex.split(value, comments=False, posix=True):
        name, eq, val = word.partition("=")
        if eq and name:
            pairs.append((name, val))
    return pairs


def parse_dotenv(text: str, source: str, *, ignored: list[str] | None = None
                 ) -> list[EnvVar]:
    """NAME=value lines. With ``ignored`` (systemd's EnvironmentFile= reading), a line such as
    ``export NAME=value`` is not an assignment systemd accepts: it is left out and named in
    ``ignored``; otherwise (a shell-style dotenv) ``export`` is dropped."""
    out: list[EnvVar] = []
    comment: list[str] = []
    for n, raw in enumerate(text.removeprefix("\ufeff").splitlines(), 1):
        line = raw.strip()
        if not line:
            comment = []
            continue
        if line.startswith(("#", ";")):
            comment.append(line.lstrip("#; "))
            continue
        if line.startswith("export "):
            if ignored is not None:
                ignored.append(f"{source}:{n}: systemd ignores {line[:80]!r} (the key would "
                               "be 'export …', not a valid name)")
                continue
            line = line[7:].lstrip()
        name, eq, val = line.partition("=")
        if not eq or not name.strip().replace("_", "").isalnum():
            raise UnitSyntaxError(source, n, f"expected NAME=value, got {line[:120]!r}")
        val = val.strip()
        if len(val) >= 2 and val[0] == val[-1] and val[0] in "'\"":
            val = val[1:-1]
        out.append(EnvVar(name.strip(), val, source, n, raw, " ".join(comment)))
        comment = []
    return out


def specifiers(unit_name: str) -> dict[str, str]:
    """The unit specifiers agentkit resolves (systemd.unit(5)): %n %N %p %P %i %I %h %u %U
    %%."""
    stem, _, _kind = unit_name.rpartition(".")
    prefix, _, instance = stem.partition("@")
    # %h/%u/%U are the service manager's user: for the system manager, root (not User=)
    return {"n": unit_name, "N": stem, "p": prefix, "P": prefix, "i": instance, "I": instance,
            "h": "/root", "u": "root", "U": "0", "%": "%"}


def apply_specifiers(value: str, spec: dict[str, str]) -> str:
    return re.sub(r"%([nNpPiIhuU%])", lambda m: spec[m.group(1)], value)


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


def drop_in_dirs(unit_name: str) -> list[str]:
    """Drop-in directories of a unit, most specific first: ``name.service.d``, the dash-prefix
    ones (``foo-bar.service`` also reads ``foo-.service.d``), then the type-wide
    ``service.d``; each in /etc before /run before /usr/lib (systemd.unit(5))."""
    stem, _, kind = unit_name.rpartition(".")
    names = [unit_name]
    if "@" in stem and not stem.endswith("@"):  # an instance also reads its template's
        names.append(f"{stem.split('@', 1)[0]}@.{kind}")
    parts = stem.split("-")
    names += [f"{'-'.join(parts[:i])}-.{kind}" for i in range(len(parts) - 1, 0, -1)]
    names.append(kind)
    return [f"{base}/{n}.d" for n in names for base in UNIT_DIRS]


def resolve_unit(
    unit_path: str,
    read: Callable[[str], str | None],
    list_dir: Callable[[str], list[str]],
    instance: str | None = None,
) -> Unit:
    """The effective unit: main file, drop-ins in order, environment files.

    ``read`` returns a file's text or None when absent; ``list_dir`` returns names or [].
    ``instance`` resolves a template (``foo@.service``) as ``foo@INSTANCE.service``:
    specifiers such as ``%i`` take their values.
    """
    name = unit_path.rsplit("/", 1)[-1]
    if instance is not None and "@." in name:
        name = name.replace("@.", f"@{instance}.", 1)
    spec = specifiers(name)
    unit = Unit(name=name)
    text = read(unit_path)
    if text is None:
        raise FileNotFoundError(unit_path)
    sources = [(unit_path, text)]
    chosen: dict[str, str] = {}
    for d in drop_in_dirs(name):
        for fname in list_dir(d):
            if fname.endswith(".conf") and fname not in chosen:
                chosen[fname] = f"{d}/{fname}"
    for fname in sorted(chosen):
        body = read(chosen[fname])
        if body is not None:
            sources.append((chosen[fname], body))
    env_files: list[tuple[str, bool]] = []
    for path, body in sources:
        unit.files.append(path)
        for a in parse_unit_text(body, path):
            if "%" in a.value:
                a.value = apply_specifiers(a.value, spec)
            unit.assignments.append(a)
            _apply(unit, a, env_files)
    for path, optional in env_files:
        body = read(path)
        if body is None:
            if not optional:
                unit.problems.append(f"EnvironmentFile {path} is missing (not optional)")
            continue
        unit.files.append(path)
        for var in parse_dotenv(body, path, ignored=unit.problems):
            unit.environment[var.name] = var
    _unset(unit)
    if unit.exec_starts > 1 and unit.service_type != "oneshot":
        unit.refused = (f"{unit.exec_starts} ExecStart= commands in effect for Type="
                        f"{unit.service_type} (only oneshot allows more; a drop-in must reset "
                        "with an empty ExecStart= first): systemd refuses to load the unit, so "
                        "none of them runs")
    return unit


def _unset(unit: Unit) -> None:
    """UnsetEnvironment= is applied last, over everything compiled before it."""
    for word, a in unit.unset:
        name, eq, value = word.partition("=")
        var = unit.environment.get(name)
        if var is not None and (not eq or var.value == value):
            unit.removed[name] = (unit.environment.pop(name), a)


def _apply(unit: Unit, a: Assignment, env_files: list[tuple[str, bool]]) -> None:
    if a.section != "Service":
        return
    if a.key == "Environment":
        if not a.value:
            unit.environment.clear()
        for name, val in split_env_assignments(a.value):
            unit.environment[name] = EnvVar(name, val, a.source, a.line, a.raw, a.comment)
    elif a.key == "EnvironmentFile":
        if not a.value:
            env_files.clear()
        else:
            optional = a.value.startswith("-")
            env_files.append((a.value.lstrip("-"), optional))
    elif a.key == "UnsetEnvironment":
        if not a.value:
            unit.unset.clear()
        unit.unset += [(w, a) for w in shlex.split(a.value)]
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
