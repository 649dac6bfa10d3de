"""CLI and library conventions a user expects (issue: a tool people enjoy). Each test fails
on the code before its change."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from agentkit import Host, Orchestrator
from agentkit._config import load_settings

from .conftest import EXAMPLES, REPO


def cli(*args: str, stdin: str | None = None, env: dict[str, str] | None = None
        ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agentkit", *args], input=stdin,
                          capture_output=True, text=True, timeout=120, cwd=REPO,
                          env={**os.environ, **(env or {})})


def test_version() -> None:
    done = cli("--version")
    assert done.returncode == 0 and done.stdout.startswith("agentkit ")
    assert done.stdout.split()[1][0].isdigit() or "unknown" in done.stdout


def test_a_question_read_from_stdin(tmp_path: Path) -> None:
    done = cli("ask", "-", "--root", str(EXAMPLES / "hopper-deepseek"), "--json", "-q",
               "--trace", str(tmp_path / "t.jsonl"),
               stdin="Is NCCL\n  tuned for this topology?\n")
    assert done.returncode == 0, done.stderr
    assert '"question": "Is NCCL tuned for this topology?"' in done.stdout


def test_the_config_file_follows_xdg_config_home(tmp_path: Path) -> None:
    conf = tmp_path / "xdg/agentkit/config.toml"
    conf.parent.mkdir(parents=True)
    conf.write_text('model = "from-xdg"\nbase_url = "http://127.0.0.1:9/v1"\n')
    got = load_settings(environ={"XDG_CONFIG_HOME": str(tmp_path / "xdg")})
    assert got.model == "from-xdg"
    # a relative XDG_CONFIG_HOME is invalid by the spec and ignored
    assert load_settings(environ={"XDG_CONFIG_HOME": "xdg", "HOME": str(tmp_path)}).model \
        != "from-xdg"


def test_the_package_says_it_is_typed() -> None:
    import agentkit

    assert (Path(agentkit.__file__).parent / "py.typed").is_file()


def test_the_library_leaves_the_gc_thresholds_alone() -> None:
    seen: list[tuple[int, int, int]] = []
    before = gc.get_threshold()
    orch = Orchestrator.catalog(Host.at(EXAMPLES / "hopper-deepseek"))

    async def go() -> Any:  # watch the thresholds from inside the run, at each glob
        from agentkit._sandbox import _files

        real = _files.glob_paths

        def watching(*a: Any, **k: Any) -> Any:
            seen.append(gc.get_threshold())
            return real(*a, **k)

        _files.glob_paths = watching
        try:
            return await orch.investigate("Is NCCL tuned?")
        finally:
            _files.glob_paths = real

    anyio.run(go)
    assert seen and set(seen) == {before}
    orch.tune_gc = True  # the CLI's choice, and an embedder's when asked for
    seen.clear()
    anyio.run(go)
    assert any(t[0] >= 100_000 for t in seen)  # while the tasks run
    assert gc.get_threshold() == before


def test_the_mcp_command_without_the_extra_says_how_to_get_it(tmp_path: Path) -> None:
    # A Python where `mcp` cannot be imported (not installed): a sitecustomize that blocks it.
    block = tmp_path / "block"
    block.mkdir()
    (block / "sitecustomize.py").write_text(
        "import sys\nclass _B:\n    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'mcp' or name.startswith('mcp.'):\n"
        "            raise ModuleNotFoundError(\"No module named 'mcp'\", name='mcp')\n"
        "sys.meta_path.insert(0, _B())\n")
    done = cli("mcp", "--root", str(EXAMPLES / "hopper-deepseek"),
               env={"PYTHONPATH": f"{block}:{REPO}"})
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == ("agentkit: the MCP server needs the mcp extra, which is not "
                                   "installed: pip install 'agentkit[mcp]'")


def test_no_dependency_is_declared_and_never_imported() -> None:
    import tomllib

    deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    names = {d.split(">")[0].split("=")[0].split("<")[0].strip().lower() for d in deps}
    assert "httpx-aiohttp" not in names and "mcp" not in names
    source = "\n".join(p.read_text() for p in (REPO / "agentkit").rglob("*.py"))
    modules = {"nvidia-ml-py": "pynvml", "pyyaml": "yaml"}
    for name in names:
        mod = modules.get(name, name.replace("-", "_"))
        assert f"import {mod}" in source or f"from {mod}" in source, name


@pytest.mark.parametrize("bad", ["", "   \n"])
def test_an_empty_stdin_question_is_bad_input(bad: str, tmp_path: Path) -> None:
    done = cli("ask", "-", "--root", str(EXAMPLES / "hopper-deepseek"), "-q",
               "--trace", str(tmp_path / "t.jsonl"), stdin=bad)
    assert done.returncode == 2 and "the question is empty" in done.stderr
