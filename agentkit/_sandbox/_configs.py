"""``parse_config``: JSON, YAML, TOML, INI, systemd units and dotenv files, all into one shape:
entries of ``{key, value, line, source}`` with a key path (``text_config.num_hidden_layers``,
``Service.Environment.NCCL_PROTO``), each citable as evidence.
"""

from __future__ import annotations

import configparser
import re
import tomllib
from typing import Annotated, Any, Literal

import yaml
from pydantic import Field

from .._bounded import MAX_DEPTH as _MAX_DEPTH
from .._bounded import LimitError, check_value, check_yaml
from .._types import Evidence
from ._files import read_text, read_text_links
from ._jsonlines import JSONLineError, loads_with_lines
from ._paths import PathRefused, list_entries, opened
from ._redact import is_env_file, redact_entry
from ._systemd import UnitSyntaxError, parse_dotenv, resolve_unit
from ._tool import ToolContext, ToolError, ToolOutput, tool
from ._withheld import linked_notice

Format = Literal["auto", "json", "yaml", "toml", "ini", "systemd", "dotenv"]
_MAX_ENTRIES = 5000
# Aliases share nodes, so a few dozen of them can stand for a billion leaves: walking the
# composed graph stops after this many nodes.
_MAX_YAML_NODES = 200_000
_MAX_KEY = 256
KeyPath = tuple[str | int, ...]
_UNIT_SUFFIXES = (".service", ".socket", ".timer", ".mount", ".target", ".path", ".slice")


def detect_format(path: str) -> str:
    name = path.rsplit("/", 1)[-1].lower()
    if name.endswith(".json"):
        return "json"
    if name.endswith((".yaml", ".yml")):
        return "yaml"
    if name.endswith(".toml"):
        return "toml"
    if name.endswith(_UNIT_SUFFIXES) or (name.endswith(".conf") and ".d/" in path and
                                         "/systemd/" in path):
        return "systemd"
    if is_env_file(name) or name.endswith("nccl.conf") or "/etc/default/" in path:
        return "dotenv"
    if name.endswith((".ini", ".cfg", ".conf")):
        return "ini"
    raise ToolError(f"cannot tell the format of {path}; pass format= one of "
                    "json, yaml, toml, ini, systemd, dotenv")


def flatten(value: Any, prefix: KeyPath = (), depth: int = 0,
            limit: int = _MAX_ENTRIES) -> list[tuple[KeyPath, Any]]:
    """Leaf entries of nested data; lists of scalars stay whole. Key paths are tuples that
    share their keys (a long key over many children is held once); more than ``limit``
    leaves is refused as it is found, before any path is made text."""
    out: list[tuple[KeyPath, Any]] = []
    _flatten(value, prefix, depth, out, limit)
    return out


def _flatten(value: Any, prefix: KeyPath, depth: int, out: list[tuple[KeyPath, Any]],
             limit: int) -> None:
    if depth > _MAX_DEPTH:
        raise ToolError(f"nested deeper than {_MAX_DEPTH} levels; refusing to parse")
    if isinstance(value, dict):
        for k, v in value.items():
            _flatten(v, (*prefix, str(k)), depth + 1, out, limit)
    elif isinstance(value, list) and any(isinstance(v, dict | list) for v in value):
        for i, v in enumerate(value):
            _flatten(v, (*prefix, i), depth + 1, out, limit)
    else:
        out.append((prefix, value))
        if len(out) > limit:
            raise ToolError(f"more than {limit} entries (limit {limit})")


def key_text(path: KeyPath) -> str:
    """``a.b[0].c``; a key longer than _MAX_KEY is shown by its start and its length (the
    text of every entry is built, so one long key must not be copied into each)."""
    out: list[str] = []
    for part in path:
        if isinstance(part, int):
            out.append(f"[{part}]")
            continue
        shown = part if len(part) <= _MAX_KEY else f"{part[:64]}…[{len(part)} chars]"
        out.append(f".{shown}" if out else shown)
    return "".join(out)


def _yaml_lines(text: str) -> tuple[Any, dict[KeyPath, int]]:
    # One event pass first (check_yaml): the composer and constructor recurse, and the
    # constructor computes integers, so depth, aliases and integer literals are checked
    # before either runs.
    check_yaml(text)
    lines: dict[KeyPath, int] = {}
    visited = 0

    def walk(node: yaml.Node, path: KeyPath, depth: int) -> None:
        nonlocal visited
        visited += 1
        if visited > _MAX_YAML_NODES:
            raise ToolError(f"YAML expands to more than {_MAX_YAML_NODES} nodes through "
                            "aliases: refusing a possible alias bomb")
        if depth > _MAX_DEPTH:
            raise ToolError(f"YAML nested deeper than {_MAX_DEPTH} levels")
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                sub = (*path, str(k.value))
                lines.setdefault(sub, k.start_mark.line + 1)
                walk(v, sub, depth + 1)
        elif isinstance(node, yaml.SequenceNode):
            for i, v in enumerate(node.value):
                lines.setdefault((*path, i), v.start_mark.line + 1)
                walk(v, (*path, i), depth + 1)

    root = yaml.compose(text, Loader=yaml.SafeLoader)
    if root is not None:
        walk(root, (), 0)
    return yaml.safe_load(text), lines


def _key_lines(text: str, pattern: str, dotted: bool) -> dict[KeyPath, int]:
    # TOML/INI parsers forget lines; find each `key =` under its [table] header. The
    # table's path is made once per header and shared by its keys' paths. TOML's dotted
    # names are paths (`a.b = 1` under [t] is t.a.b); an INI key is one name.
    lines: dict[KeyPath, int] = {}
    table: KeyPath = ()
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if m := re.match(r"^\[\[?\s*([^\]]+?)\s*\]\]?$", line):
            name = m.group(1).strip('"')
            table = tuple(p.strip('"') for p in name.split(".")) if dotted else (name,)
            continue
        if m := re.match(pattern, line):
            key = m.group(1).strip().strip('"')
            keys = tuple(p.strip('"') for p in key.split(".")) if dotted else (key,)
            lines.setdefault((*table, *keys), n)
    return lines


def _one_line(exc: object) -> str:
    # YAML and INI messages span lines (the offending text quoted below); an error is one,
    # and quotes no text of the file: configparser quotes whole lines, YAML an alias's or
    # tag's name, and a line may be a secret's that the redactor saw without its name
    # (issue 28). A quote of one or two characters (YAML's "found character '\t'") stays.
    return _QUOTED.sub("'…'", " ".join(str(exc).split()))


_QUOTED = re.compile(r"'(?:[^'\\]|\\.){3,}'|\"(?:[^\"\\]|\\.){3,}\"")


def _ini_error(exc: configparser.Error) -> str:
    if isinstance(exc, configparser.MissingSectionHeaderError):
        return f"line {exc.lineno}: an entry before any [section] header"
    if isinstance(exc, configparser.ParsingError) and exc.errors:
        lines = ", ".join(str(n) for n, _ in exc.errors[:5])
        return f"line {lines}: neither a [section], a 'name = value' nor a continuation line"
    return _one_line(exc)


def _structured(fmt: str, text: str, path: str) -> tuple[Any, dict[KeyPath, int]]:
    try:
        if fmt == "json":
            return loads_with_lines(text)
        if fmt == "yaml":
            return _yaml_lines(text)
        if fmt == "toml":
            return tomllib.loads(text), _key_lines(text, r"^([A-Za-z0-9_.\"-]+)\s*=", True)
        if fmt == "ini":
            cp = configparser.ConfigParser(interpolation=None, strict=False)
            cp.read_string(text, source=path)
            data = {s: dict(cp.items(s, raw=True)) for s in cp.sections()}
            return data, _key_lines(text, r"^([^=:#;\s][^=:]*?)\s*[=:]", False)
    except JSONLineError as exc:
        raise ToolError(f"{path}:{exc.line}: malformed JSON: {exc}") from None
    except yaml.MarkedYAMLError as exc:
        line = exc.problem_mark.line + 1 if exc.problem_mark else 0
        raise ToolError(f"{path}:{line}: malformed YAML: {_one_line(exc.problem)}") from None
    except yaml.YAMLError as exc:
        raise ToolError(f"{path}: malformed YAML: {_one_line(exc)}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ToolError(f"{path}: malformed TOML: {_one_line(exc)}") from None
    except configparser.Error as exc:
        raise ToolError(f"{path}: malformed INI: {_ini_error(exc)}") from None
    except RecursionError:
        raise ToolError(f"{path}: nested too deeply to parse as {fmt}") from None
    except LimitError as exc:
        raise ToolError(f"{path}: cannot parse as {fmt}: {exc}") from None
    except ValueError as exc:  # e.g. an integer literal past Python's digit limit
        raise ToolError(f"{path}: cannot parse as {fmt}: {type(exc).__name__}") from None
    raise ToolError(f"unknown format {fmt}")


@tool
def parse_config(
    ctx: ToolContext,
    path: Annotated[str, Field(description="Absolute host path of the config file")],
    format: Format = "auto",
    instance: Annotated[str | None, Field(
        description="systemd template units only (foo@.service): resolve as foo@INSTANCE",
        # the length as a bound of its own: `[\w.:-]{1,128}` (Unicode \w, counted 128
        # times) took pydantic's Rust regex 40 ms to compile, on every start
        pattern=r"^[\w.:-]+$", min_length=1, max_length=128)] = None,
) -> ToolOutput:
    """Parse a config file (JSON, YAML, TOML, INI, systemd unit with drop-ins, dotenv) into
    key paths with source line numbers. A unit also yields its effective environment."""
    fmt = detect_format(path) if format == "auto" else format
    if fmt == "systemd":
        return _unit(ctx, path, instance)
    text, host_path, truncated, links = read_text_links(ctx, path)
    if truncated:
        raise ToolError(f"{host_path} is larger than {ctx.host.read_limit} bytes; too large to "
                        "parse whole")
    spans: dict[int, tuple[int, int]] = {}  # rows cited at lines other than their key's
    if fmt == "dotenv":
        try:
            env = parse_dotenv(text, host_path)
        except UnitSyntaxError as exc:
            raise ToolError(f"malformed dotenv: {exc}") from None
        rows = [(v.name, v.value, v.line, v.raw) for v in env]
    else:
        data, lines = _structured(fmt, text, host_path)
        try:  # integers past 64 bits would fail the trace writer, and the whole tool call
            check_value(data, _MAX_DEPTH + 1)
        except LimitError as exc:
            raise ToolError(f"{host_path}: cannot parse as {fmt}: {exc}") from None
        src = text.splitlines()
        rows = []
        try:
            leaves = flatten(data)
        except ToolError as exc:
            raise ToolError(f"{host_path}: {exc}") from None
        for key, value in leaves:
            line = lines.get(key, 0)
            first, last = value_span(key, value, line, lines)
            if (first, last) != (line, line):
                spans[len(rows)] = (first, last)
            rows.append((key_text(key), value, line,
                         "\n".join(s.strip() for s in src[first - 1 : last])
                         if 0 < first <= last <= len(src) else ""))
    out = _entries(ctx, host_path, fmt, rows, spans=spans)
    if links > 1:  # read strictly, and the result says so, as read_file's does
        out.withheld.append(linked_notice(host_path, links))
    return out


def value_span(key: KeyPath, value: Any, line: int, lines: dict[KeyPath, int]
               ) -> tuple[int, int]:
    """The lines that hold a value: its key's line, unless the value is a list written
    below its key (``"architectures": [`` then one element a line), whose lines are the
    elements' (from the key's line when the first element shares it). A citation of the
    key's line alone would show the bracket, not the value."""
    if not isinstance(value, list) or not value or not line:
        return line, line
    items = [lines.get((*key, i), 0) for i in (0, len(value) - 1)]
    if not all(items) or items[1] < items[0] or items[0] < line:
        return line, line
    return (line if items[0] == line else items[0]), max(items[1], line)


def _entries(ctx: ToolContext, source: str, fmt: str,
             rows: list[tuple[str, Any, int, str]], extra: dict[str, Any] | None = None,
             spans: dict[int, tuple[int, int]] | None = None) -> ToolOutput:
    if len(rows) > _MAX_ENTRIES:
        raise ToolError(f"{source} has {len(rows)} entries (limit {_MAX_ENTRIES})")
    entries, evidence = [], []
    env_file = fmt == "dotenv" or is_env_file(source)
    for n, (key, value, line, raw) in enumerate(rows):
        shown = redact_entry(key, value, env_file)
        if shown is not value and str(value) in raw:
            raw = raw.replace(str(value), str(shown))  # the evidence line hides it too
        value = shown
        first, last = (spans or {}).get(n, (line, line))
        ev = config_evidence(ctx, source, first, key, raw, last)
        evidence.append(ev)
        entries.append({"key": key, "value": value, "line": line, "source": source,
                        "evidence_id": ev.id})
    data: dict[str, Any] = {"path": source, "format": fmt, "entries": entries}
    data.update(extra or {})
    return ToolOutput(data=data, evidence=evidence)


def config_evidence(ctx: ToolContext, source: str, line: int, key: str, raw: str,
                    last: int = 0) -> Evidence:
    where = (f"{source}:{line}-{last}" if last > line else f"{source}:{line}") if line \
        else source
    return ctx.evidence("config", f"{where} {key}", raw.strip(), f"{key}\0{raw}")


class _UnitFiles:
    """The unit tree as the resolver sees it: file texts, directory entries, links and
    canonical paths, each read through the sandbox (a refusal reads as absent)."""

    def __init__(self, ctx: ToolContext) -> None:
        self.ctx = ctx

    def read(self, p: str) -> str | None:
        try:
            return read_text(self.ctx, p)[0]
        except ToolError:
            return None

    def _entries(self, d: str, kinds: tuple[str, ...]) -> list[str]:
        try:
            return [n for n, kind in list_entries(self.ctx.host.root, d) if kind in kinds]
        except PathRefused:
            return []

    def names(self, d: str) -> list[str]:
        return self._entries(d, ("file", "link"))

    def links(self, d: str) -> list[str]:
        return self._entries(d, ("link",))

    def canonical(self, p: str) -> str | None:
        try:
            with opened(self.ctx.host.root, p) as o:
                return o.host_path
        except PathRefused:
            return None


def _unit(ctx: ToolContext, path: str, instance: str | None = None) -> ToolOutput:
    fs = _UnitFiles(ctx)
    try:
        unit = resolve_unit(read_text(ctx, path)[1], fs.read, fs.names, instance, fs.links,
                            fs.canonical)
    except UnitSyntaxError as exc:
        raise ToolError(f"malformed unit file: {exc}") from None
    rows = [(f"{a.section}.{a.key}", a.value, a.line, a.raw) for a in unit.assignments]
    out = _entries(ctx, unit.files[0], "systemd", rows)
    cite = _Citer(ctx, out)
    env: dict[str, Any] = {}
    for var in unit.environment.values():
        ev = cite(var.source, var.line, f"Environment.{var.name}", var.raw)
        env[var.name] = {"value": var.value, "source": var.source, "line": var.line,
                         "comment": var.comment, "evidence_id": ev.id}
    exec_start: dict[str, Any] | None = None
    if unit.exec_start_at:
        a = unit.exec_start_at
        ev = cite(a.source, a.line, "Service.ExecStart", a.raw)
        exec_start = {"argv": unit.exec_start, "source": a.source, "line": a.line,
                      "evidence_id": ev.id}
    out.data["effective"] = {"unit": unit.name, "files": unit.files, "environment": env,
                             "exec_start": exec_start, "unset": _removed(cite, unit),
                             "user": _user(cite, unit), "problems": unit.problems,
                             "unresolved": unit.unresolved, "dropped": _dropped(cite, unit),
                             "refused": unit.refused}
    return out


class _Citer:
    """Makes a config evidence record and keeps it with the tool's output."""

    def __init__(self, ctx: ToolContext, out: ToolOutput) -> None:
        self.ctx, self.out = ctx, out

    def __call__(self, source: str, line: int, key: str, raw: str) -> Evidence:
        ev = config_evidence(self.ctx, source, line, key, raw)
        self.out.evidence.append(ev)
        return ev


def _removed(cite: _Citer, unit: Any) -> dict[str, Any]:
    removed: dict[str, Any] = {}
    for name, (var, a) in unit.removed.items():
        ev = cite(a.source, a.line, "Service.UnsetEnvironment", a.raw)
        removed[name] = {"value": var.value, "set_at": f"{var.source}:{var.line}",
                         "source": a.source, "line": a.line, "evidence_id": ev.id}
    return removed


def _dropped(cite: _Citer, unit: Any) -> list[dict[str, Any]]:
    dropped = []
    for var in unit.dropped:
        ev = cite(var.source, var.line, f"Environment.{var.name}", var.raw)
        dropped.append({"name": var.name, "value": var.value, "source": var.source,
                        "line": var.line, "written": var.comment, "evidence_id": ev.id})
    return dropped


def _user(cite: _Citer, unit: Any) -> dict[str, Any] | None:
    if unit.user is None:
        return None
    ev = cite(unit.user.source, unit.user.line, "Service.User", unit.user.raw)
    return {"name": unit.user.value, "source": unit.user.source, "line": unit.user.line,
            "evidence_id": ev.id}
