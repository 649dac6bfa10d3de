"""Checks that a citation points at something real: the file line, the captured command
output line, the config key line or the NVML capture it names."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

_FILE = re.compile(r"^(/[^\s:]+):(\d+)(?:-(\d+))?(?: (\S+))?$")
_CMD = re.compile(r"^\$ (.+?) \[exit (-?\d+)\](?: \(captured [^)]*\))?(?: line (\d+))?$")
_ABSENT = re.compile(r"^(/\S+) \((?:no key (\S+)|no KV-cache quantization)\)$")


def _captured(root: Path, argv: str) -> str:
    manifest = json.loads((root / ".agentkit/snapshot.json").read_text())
    for c in manifest["commands"]:
        if " ".join(c["argv"]) == argv:
            return (root / ".agentkit" / c["stdout"]).read_text()
    raise AssertionError(f"no capture for {argv!r}")


def assert_resolves(citation: dict[str, Any], root: Path) -> None:
    loc, excerpt = citation["locator"], citation["excerpt"]
    if m := _FILE.match(loc):
        lines = (root / m.group(1).lstrip("/")).read_text().splitlines()
        first, last = int(m.group(2)), int(m.group(3) or m.group(2))
        if citation["kind"] == "config" and excerpt == "":
            assert 1 <= first <= len(lines), loc
            return
        actual = "\n".join(lines[first - 1 : last])
        assert actual.strip().startswith(excerpt.strip().split("\n")[0][:300].rstrip("…")), (
            f"{loc}: excerpt {excerpt!r} is not what the file says: {actual!r}")
        if m.group(4) and citation["kind"] == "config":
            leaf = re.split(r"[.\[]", m.group(4))[-1].rstrip("]")
            assert leaf in actual or leaf.isdigit(), (loc, actual)
    elif m := _CMD.match(loc):
        out = _captured(root, m.group(1))
        if m.group(3):
            assert out.splitlines()[int(m.group(3)) - 1].strip() == excerpt.strip(), loc
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
    else:
        raise AssertionError(f"citation locator of unknown shape: {loc}")
