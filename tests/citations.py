"""Checks that a citation points at something real (the file line, the captured command
output line, the config key line or the NVML capture it names) and that its excerpt shows
the fact it is cited for: the value itself, never only the line where a structure starts
(`"architectures": [`, `args:`), a bare `return True`, or a table's header row."""

from __future__ import annotations

import json
import math
import re
import tomllib
from pathlib import Path
from typing import Any

import yaml

_FILE = re.compile(r"^(/[^\s:]+):(\d+)(?:-(\d+))?(?: (\S+))?$")
_CMD = re.compile(r"^\$ (.+?) \[exit (-?\d+)\](?: \(captured [^)]*\))?"
                  r"(?: line (\d+)(?:-(\d+))?)?$")
_OUTPUT_LIMIT = 256 * 1024  # Host.output_limit: what a run_command result holds at most
_SCRIPT = re.compile(r"^(.+) \((?:ba)?sh -c\):(\d+)$")
_ABSENT = re.compile(r"^(/\S+) \((?:no key (\S+)|no KV-cache quantization)\)$")
# A line that opens a value written on the lines below it: a key and nothing after it but
# an opening bracket or a YAML block indicator.
_OPENER = re.compile(r"""^-?\s*["']?[\w.$/@-]+["']?\s*(?::\s*(?:[\[{]|[|>][-+]?\d*)?|=\s*[\[{(])"""
                     r"""\s*$""")
# Words that are syntax, not a fact: an excerpt of only these shows nothing
_SYNTAX = {"return", "true", "false", "none", "null", "pass", "else", "elif", "try", "except",
           "finally", "break", "continue", "yield", "end", "fi", "done", "then", "do", "esac"}
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?|inf|nan)")


def _captured(root: Path, argv: str) -> str | None:
    manifest = json.loads((root / ".agentkit/snapshot.json").read_text())
    for c in manifest["commands"]:
        if " ".join(c["argv"]) == argv:
            return (root / ".agentkit" / c["stdout"]).read_text()
    # `kubectl kustomize DIR` builds from the snapshot's files and runs offline, on a
    # snapshot too: its output is this run's, not a capture to compare with
    assert argv.startswith("kubectl kustomize "), f"no capture for {argv!r}"
    return None


def shows_nothing(excerpt: str) -> str | None:
    """Why an excerpt shows no fact whatever it is cited for, or None: an empty excerpt, a
    key whose value is on other lines, a line of syntax only (``return True``, ``}``), or
    the header row of a tab-separated table without any of its rows."""
    text = excerpt.strip()
    if not text:
        return "the excerpt is empty"
    lines = [ln for ln in excerpt.split("\n") if ln.strip()]
    if len(lines) == 1 and _OPENER.match(text):
        return f"{text!r} is a key whose value is on other lines"
    words = re.findall(r"[A-Za-z_][A-Za-z_0-9]*|\d+", text)
    if all(w.lower() in _SYNTAX for w in words):
        return f"{text!r} is syntax only"
    if len(lines) == 1 and re.match(r"^[ \t]*\t", lines[0]) and lines[0].count("\t") >= 2:
        return f"{text[:60]!r} is the header row of a table, not a row of it"
    return None


def _key_path(key: str) -> list[str | int]:
    return [int(p[1:-1]) if p.startswith("[") else p for p in re.findall(r"\[\d+\]|[^.\[\]]+",
                                                                           key)]


def _load(path: Path) -> Any:
    text = path.read_text()
    if path.suffix == ".json":
        return json.loads(text)
    if path.suffix in (".yaml", ".yml"):
        return yaml.safe_load(text)
    if path.suffix == ".toml":
        return tomllib.loads(text)
    return None  # systemd, INI, dotenv: the key and what follows it on the line are checked


def _resolve(data: Any, key: str) -> tuple[bool, Any]:
    for part in _key_path(key):
        if isinstance(data, dict) and str(part) in data:
            data = data[str(part)]
        elif isinstance(data, list) and isinstance(part, int) and part < len(data):
            data = data[part]
        else:
            return False, None
    return True, data


def _scalar_shown(value: Any, excerpt: str) -> bool:
    if isinstance(value, bool):
        words = ("true", "yes", "on") if value else ("false", "no", "off")
        return any(re.search(rf"\b{w}\b", excerpt, re.I) for w in words)
    if value is None:
        return bool(re.search(r"\bnull\b|~|\bNone\b", excerpt))
    if isinstance(value, int | float):
        for tok in _NUMBER.findall(excerpt.replace("_", "")):
            try:
                got = float(tok)
            except ValueError:
                continue
            if got == value or (math.isnan(got) and math.isnan(float(value))):
                return True
        return False
    text = str(value)
    return text in excerpt or json.dumps(text)[1:-1] in excerpt


def value_shown(value: Any, excerpt: str) -> bool:
    """Whether the excerpt shows the value: each element of a list (up to where a clipped
    excerpt ends), a scalar as a JSON/YAML/TOML file spells it."""
    if "[REDACTED" in excerpt:
        return True  # a secret is shown as its redaction mark, never its value
    if isinstance(value, dict):
        return not value and "{}" in excerpt
    if isinstance(value, list):
        if not value:
            return bool(re.search(r"\[\s*\]", excerpt))
        clipped = excerpt.endswith("…")
        shown = [_scalar_shown(v, excerpt) for v in value]
        return all(shown) or (clipped and shown[0])
    return _scalar_shown(value, excerpt)


def config_problem(path: Path, first: int, key: str, excerpt: str) -> str | None:
    """A config citation must show the key's value, and the key where it is on the value's
    line; a value on lines of its own (a list written one element a line) is cited at those
    lines, its key named by the locator."""
    leaf = str(_key_path(key)[-1]) if _key_path(key) else key
    data = _load(path)
    if data is None:
        if leaf not in excerpt:
            return f"{key}: the excerpt {excerpt!r} does not name the key"
        after = excerpt.split(leaf, 1)[1].lstrip(" \t\"'=:")
        return None if after.strip() else f"{key}: the excerpt {excerpt!r} shows no value"
    found, value = _resolve(data, key)
    if not found:
        return f"{key} is not in {path.name}"
    if not value_shown(value, excerpt):
        return f"{key}: the excerpt {excerpt!r} does not show its value {value!r}"
    if leaf.isdigit() or leaf in excerpt:
        return None
    lines = path.read_text().splitlines()
    above = next((n for n in range(first - 1, 0, -1) if leaf in lines[n - 1]), 0)
    if not above:
        return f"{key}: neither the excerpt nor a line above it names the key"
    if value_shown(value, lines[above - 1]) or (isinstance(value, list) and value and
                                                _scalar_shown(value[0], lines[above - 1])):
        return f"{key}: the value starts on the key's line {above}, which is not cited"
    return None


def excerpt_problem(citation: dict[str, Any], root: Path) -> str | None:
    """Why a citation's excerpt does not show the fact it stands for, or None."""
    loc, excerpt, kind = citation["locator"], citation["excerpt"], citation["kind"]
    if kind == "listing" or _ABSENT.match(loc) or kind == "derived":
        return None if excerpt.strip() else shows_nothing(excerpt)
    if (m := _FILE.match(loc)) and kind == "config" and m.group(4):
        return config_problem(root / m.group(1).lstrip("/"), int(m.group(2)), m.group(4),
                              excerpt)
    if kind == "nvml":
        return None  # a structured capture, checked by assert_resolves
    return shows_nothing(excerpt)


def _lines_match(actual: list[str], excerpt: str) -> bool:
    """The excerpt is the lines (each stripped), its last line cut where a clip ends it."""
    clipped = excerpt.endswith("…")
    want = [ln.strip() for ln in excerpt.removesuffix("…").strip().split("\n")]
    got = [ln.strip() for ln in actual]
    if len(want) > len(got) or got[: len(want) - 1] != want[:-1]:
        return False
    last = got[len(want) - 1]
    return last.startswith(want[-1]) if clipped else last == want[-1]


def assert_resolves(citation: dict[str, Any], root: Path) -> None:
    loc, excerpt = citation["locator"], citation["excerpt"]
    if m := _FILE.match(loc):
        lines = (root / m.group(1).lstrip("/")).read_text().splitlines()
        first, last = int(m.group(2)), int(m.group(3) or m.group(2))
        assert 1 <= first <= last <= len(lines), loc
        actual = "\n".join(lines[first - 1 : last])
        assert actual.strip().startswith(excerpt.strip().split("\n")[0][:300].rstrip("…")), (
            f"{loc}: excerpt {excerpt!r} is not what the file says: {actual!r}")
    elif m := _CMD.match(loc):
        out = _captured(root, m.group(1))
        if out is not None and len(out) > _OUTPUT_LIMIT and m.group(1).startswith("journalctl"):
            # agentkit keeps a long journal's newest bytes, from a line start: lines are
            # numbered from there, so the excerpt is looked for in the capture's lines
            got = [ln.strip() for ln in out.splitlines()]
            want = excerpt.removesuffix("…").strip().split("\n")[0].strip()
            assert any(ln.startswith(want) for ln in got), loc
        elif out is None:
            pass
        elif m.group(3):
            first, last = int(m.group(3)), int(m.group(4) or m.group(3))
            assert _lines_match(out.splitlines()[first - 1 : last], excerpt), loc
        else:
            assert out.startswith(excerpt.rstrip("…")[:200]), loc
    elif m := _ABSENT.match(loc):
        text = (root / m.group(1).lstrip("/")).read_text()
        if m.group(2):
            assert f'"{m.group(2)}"' not in text, f"{loc} claims a key is absent but it is there"
    elif loc.startswith("nvml ("):
        nvml = json.loads((root / ".agentkit/nvml.json").read_text())
        if " device " in loc:
            index = int(loc.rsplit(" ", 1)[1])
            dev = nvml["devices"][index]
            cc = ".".join(map(str, dev["compute_capability"]))
            assert dev["name"] in excerpt and cc in excerpt
        elif loc.endswith("topology"):
            assert all(c in excerpt for row in nvml["topology"]["matrix"] for c in row)
    elif loc.startswith("glob "):
        assert citation["kind"] == "listing"
    elif m := _SCRIPT.match(loc):  # a line of a `sh -c` string in a file or an inspect
        where = m.group(1)
        assert not where.startswith("/") or (root / where.lstrip("/")).is_file(), loc
    elif loc.startswith("serving processes ("):
        assert (root / ".agentkit/processes.json").is_file(), loc
    else:
        raise AssertionError(f"citation locator of unknown shape: {loc}")
    problem = excerpt_problem(citation, root)
    assert problem is None, f"{loc}: {problem}"


def audit(citations: list[dict[str, Any]], root: Path) -> list[str]:
    """Every citation that does not resolve or whose excerpt does not show its fact, one
    line each (empty when all are good)."""
    problems = []
    for c in citations:
        try:
            assert_resolves(c, root)
        except AssertionError as exc:
            problems.append(f"{c['id']} {exc}")
    return problems
