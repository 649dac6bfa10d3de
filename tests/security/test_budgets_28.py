"""Issue 28, class 7 (unbounded work) and MCP replay's reach: parse_config holds key paths
shared, not copied; the grep tool stops at a byte budget; MCP replay reads the trace it
checked (a private copy) and no task directory the server does not allow."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from agentkit import Host, Sandbox
from agentkit._sandbox._paths import Root

ROOT = Path(__file__).resolve().parents[2]
_WIDE = "k" * 200_000  # a parent key of 200 KB over many children (the red team's shape)


def _wide(fmt: str, children: int) -> str:
    if fmt == "json":
        return json.dumps({_WIDE: {f"c{i}": i for i in range(children)}})
    if fmt == "yaml":
        # a plain key is at most 1024 characters in YAML 1.1; an explicit key (?) has no limit
        return f"? {_WIDE}\n:\n" + "".join(f"  c{i}: {i}\n" for i in range(children))
    if fmt == "toml":
        return f"[{_WIDE}]\n" + "".join(f"c{i} = {i}\n" for i in range(children))
    return f"[{_WIDE}]\n" + "".join(f"c{i} = {i}\n" for i in range(children))


_CHILD = """
import resource, sys, anyio
resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
from agentkit import Host, Sandbox
from agentkit._sandbox._paths import Root
host = Host(root=Root("/", allow=(sys.argv[1],)), read_limit=1 << 20)
r = anyio.run(Sandbox(host, task_id="t").call, "parse_config", {"path": sys.argv[2]})
print("OK" if r.ok else "REFUSED " + r.error[:200])
"""


@pytest.mark.parametrize("fmt", ["json", "yaml", "toml", "ini"])
@pytest.mark.parametrize("children", [25_000, 100])
def test_parse_config_of_a_long_key_over_many_children_is_bounded(
        tmp_path: Path, fmt: str, children: int) -> None:
    # ~450 KB over 25k children: before, every child's path copied the 200 KB key (5-10 GB,
    # MemoryError). Run under a 3 GiB address-space limit so a regression fails, not the host.
    f = tmp_path / f"big.{fmt}"
    f.write_text(_wide(fmt, children))
    got = subprocess.run([sys.executable, "-c", _CHILD, str(tmp_path), str(f)],
                         capture_output=True, text=True, timeout=300,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    out = got.stdout.strip()
    assert got.returncode == 0 and "MemoryError" not in got.stderr, got.stderr[-500:]
    if children > 5000:  # more entries than parse_config gives: refused, with the reason
        assert out.startswith("REFUSED") and "entries" in out, out
    else:
        assert out == "OK", out


def test_a_long_key_is_shown_by_its_start_and_length(tmp_path: Path) -> None:
    f = tmp_path / "k.json"
    f.write_text(_wide("json", 3))
    host = Host(root=Root("/", allow=(str(tmp_path),)), read_limit=1 << 20)
    r = anyio.run(Sandbox(host, task_id="t").call, "parse_config", {"path": str(f)})
    assert r.ok, r.error
    keys = [e["key"] for e in r.data["entries"]]
    assert len(keys) == 3 and all(len(k) < 200 for k in keys)
    assert all(k.endswith(f"[{len(_WIDE)} chars].c{i}") for i, k in enumerate(keys)), keys


def test_the_grep_tool_stops_at_its_byte_budget(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from agentkit._sandbox import _files

    for i in range(20):
        (tmp_path / f"f{i}.txt").write_text("x" * 4000 + "\n")
    monkeypatch.setattr(_files, "GREP_BYTES", 10_000)
    host = Host(root=Root("/", allow=(str(tmp_path),)))
    r = anyio.run(Sandbox(host, task_id="t").call, "grep",
                  {"pattern": "nothing-here", "path": str(tmp_path)})
    assert r.ok and r.data.get("stopped", "").startswith("budget spent"), r.data
    assert r.data["files_searched"] < 20


def _trace_with(tmp_path: Path, task_dirs: list[str]) -> Path:
    src = ROOT / "examples/traces/blackwell-kimi.jsonl"
    lines = src.read_text().splitlines()
    run = json.loads(lines[1])
    run["data"]["config"]["task_dirs"] = task_dirs
    lines[1] = json.dumps(run)
    out = tmp_path / "t.jsonl"
    out.write_text("\n".join(lines) + "\n")
    return out


def test_mcp_replay_loads_no_task_directory_the_server_does_not_allow(tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    from mcp.server.mcpserver.exceptions import ToolError

    from agentkit._mcp import _replay

    trace = _trace_with(tmp_path, ["/etc"])
    with pytest.raises(ToolError, match="task directory '/etc'"):
        anyio.run(_replay, str(trace), [str(tmp_path)])


def test_mcp_replay_reads_the_file_it_checked(tmp_path: Path) -> None:
    # a link in an allowed root to a file outside it: the realpath is outside, refused
    from agentkit._mcp import ReplayRefused, private_trace

    allowed = tmp_path / "allowed"
    allowed.mkdir()
    (tmp_path / "secret.jsonl").write_text("SECRET\n")
    os.symlink(tmp_path / "secret.jsonl", allowed / "t.jsonl")
    with pytest.raises(ReplayRefused):
        private_trace(str(allowed / "t.jsonl"), [str(allowed)], str(tmp_path))
