"""CLI and library conventions a user expects (issue: a tool people enjoy). Each test fails
on the code before its change."""

from __future__ import annotations

import gc
import json
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


def test_the_cli_collects_during_the_run_and_leaves_the_collector_as_it_was(
        capsys: pytest.CaptureFixture[str]) -> None:
    # The CLI skips collections while it starts (_gc.quiet_startup); the investigation runs
    # with the collector on, and main() run in a caller's process gives its state back.
    from agentkit._sandbox import _files
    from agentkit.cli import main

    seen: list[tuple[bool, int]] = []
    real = _files.glob_paths

    def watching(*a: Any, **k: Any) -> Any:
        seen.append((gc.isenabled(), gc.get_freeze_count()))
        return real(*a, **k)

    _files.glob_paths = watching  # type: ignore[assignment]
    try:
        code = main(["ask", "Is NCCL tuned?", "--root", str(EXAMPLES / "hopper-deepseek"),
                     "-q", "--trace", os.devnull])
    finally:
        _files.glob_paths = real  # type: ignore[assignment]
    capsys.readouterr()
    assert code == 0
    assert seen and all(on and frozen > 0 for on, frozen in seen)  # on, start-up frozen
    assert gc.isenabled() and gc.get_freeze_count() == 0
    gc.disable()  # a caller that turned it off keeps it off
    try:
        assert main(["ask", "Is NCCL tuned?", "--root", str(EXAMPLES / "hopper-deepseek"),
                     "-q", "--trace", os.devnull]) == 0
        assert not gc.isenabled() and gc.get_freeze_count() == 0
    finally:
        gc.enable()
    capsys.readouterr()


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
    modules = {"nvidia-ml-py": "pynvml", "pyyaml": "yaml", "google-re2": "re2",
               "clustershell": "ClusterShell"}
    for name in names:
        mod = modules.get(name, name.replace("-", "_"))
        assert f"import {mod}" in source or f"from {mod}" in source, name


@pytest.mark.parametrize("bad", ["", "   \n"])
def test_an_empty_stdin_question_is_bad_input(bad: str, tmp_path: Path) -> None:
    done = cli("ask", "-", "--root", str(EXAMPLES / "hopper-deepseek"), "-q",
               "--trace", str(tmp_path / "t.jsonl"), stdin=bad)
    assert done.returncode == 2 and "the question is empty" in done.stderr


def test_json_mode_prints_an_error_object_on_every_failure(tmp_path: Path) -> None:
    import json

    cases = [(("ask", "--json"), 2), (("ask", "x", "--root", "/nonexistent", "--json"), 2),
             (("ask", "What is the weather in Paris?", "--root",
               str(EXAMPLES / "hopper-deepseek"), "--json", "-q", "--trace",
               str(tmp_path / "t.jsonl")), 3)]
    for args, code in cases:
        done = cli(*args, env={"AGENTKIT_CONFIG": "/dev/null"})
        assert done.returncode == code, (args, done.stderr)
        err = json.loads(done.stdout)["error"]
        assert err["code"] == code and err["message"], args


def test_a_base_url_that_is_not_a_url_is_bad_input_at_once(tmp_path: Path) -> None:
    import time

    t0 = time.monotonic()
    done = cli("ask", "Is NCCL tuned?", "--root", str(EXAMPLES / "hopper-deepseek"),
               "--base-url", "not-a-url", "--model", "m", "-q", "--trace",
               str(tmp_path / "t.jsonl"), env={"AGENTKIT_CONFIG": "/dev/null"})
    assert done.returncode == 2 and "is not an http(s) URL" in done.stderr
    assert time.monotonic() - t0 < 5  # no retries against something that is not a server


def test_a_refused_key_names_the_variable_it_came_from(tmp_path: Path) -> None:
    import http.server
    import threading

    class Deny(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            body = b'{"error": {"message": "Incorrect API key provided"}}'
            self.send_response(401)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Deny)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        done = cli("ask", "Is NCCL tuned?", "--root", str(EXAMPLES / "hopper-deepseek"),
                   "--base-url", f"http://127.0.0.1:{server.server_address[1]}/v1",
                   "--model", "m", "-q", "--trace", str(tmp_path / "t.jsonl"),
                   env={"AGENTKIT_CONFIG": "/dev/null", "OPENAI_API_KEY": "sk-wrong-0000",
                        "AGENTKIT_API_KEY": ""})
    finally:
        server.shutdown()
    assert done.returncode == 4
    assert "The API key from $OPENAI_API_KEY was refused: set OPENAI_API_KEY" in done.stderr
    assert "sk-wrong" not in done.stderr


@pytest.mark.parametrize("after", [0.0, 0.05, 0.2, 0.5])
def test_ctrl_c_early_is_a_clean_exit(after: float, tmp_path: Path) -> None:
    # The interrupt is sent a fixed time after the process says it is ready (its trace file
    # has its header: agentkit's own code runs, inside main()), never a fixed time after it
    # was started: under load that landed in the interpreter's start-up imports, which is
    # Python's to handle, not agentkit's, and made the test depend on the machine's speed.
    import signal
    import time

    trace = tmp_path / "t.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentkit", "ask", "Is NCCL tuned?", "--root",
         str(EXAMPLES / "blackwell-kimi"), "-q", "--trace", str(trace)],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        env={**os.environ, "AGENTKIT_CONFIG": "/dev/null"})
    deadline = time.monotonic() + 60
    while proc.poll() is None and time.monotonic() < deadline:
        if trace.exists() and trace.read_bytes().endswith(b"\n"):
            break
        time.sleep(0.005)
    time.sleep(after)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert "Traceback" not in err, err
    # 130, or -2 when asyncio's runner re-delivers SIGINT as it unwinds (a shell shows 130
    # either way); 0 if it finished first
    assert proc.returncode in (0, 130, -2), (proc.returncode, err)
    if proc.returncode == -2 and not err and _run_ended(trace):
        return  # it had answered: the signal came while the interpreter shut down, after
        # it had put SIGINT back to the default the parent gave it (killed, nothing to say)
    if proc.returncode != 0:
        assert "interrupted" in err and "CancelledError" not in err, err


def _run_ended(trace: Path) -> bool:
    lines = trace.read_text().splitlines() if trace.exists() else []
    last = json.loads(lines[-1]) if lines else {}
    return (last.get("kind"), last.get("phase")) == ("run", "end")


def test_a_closed_stderr_is_no_traceback() -> None:
    done = subprocess.run(
        ["sh", "-c", f"exec 2>&-; exec {sys.executable} -m agentkit ask x --root /nonexistent"],
        capture_output=False, stdout=subprocess.PIPE, text=True, cwd=REPO, timeout=60)
    assert done.returncode == 2 and "Traceback" not in done.stdout


def test_trace_names_are_unique_and_old_runs_are_pruned(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from agentkit.cli._common import default_trace_path

    tmp_path = tmp_path / "traces"
    monkeypatch.setenv("AGENTKIT_TRACE_DIR", str(tmp_path))
    monkeypatch.setenv("AGENTKIT_TRACE_KEEP", "3")
    names = {default_trace_path() for _ in range(50)}  # all within a second or two
    assert len(names) == 50
    for n in sorted(names)[:5]:
        Path(n).write_text("{}\n")
    (tmp_path / "notes.txt").write_text("mine")  # not a run trace: never touched
    default_trace_path()
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == sorted([*(Path(n).name for n in sorted(names)[3:5]), "notes.txt"])


def test_an_unwritable_trace_directory_is_a_one_line_error(tmp_path: Path) -> None:
    done = cli("ask", "Is NCCL tuned?", "--root", str(EXAMPLES / "hopper-deepseek"), "-q",
               env={"AGENTKIT_TRACE_DIR": "/proc/no/such/dir", "AGENTKIT_CONFIG": "/dev/null"})
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "cannot create the trace directory /proc/no/such/dir" in done.stderr


def test_the_library_logs_through_the_standard_library_and_configures_nothing(
        caplog: pytest.LogCaptureFixture) -> None:
    import logging

    root_handlers = list(logging.getLogger().handlers)
    with caplog.at_level(logging.DEBUG, logger="agentkit"):
        orch = Orchestrator.catalog(Host.at(EXAMPLES / "hopper-deepseek"))
        anyio.run(orch.investigate, "Is NCCL tuned?")
    ours = [r for r in caplog.records if r.name.startswith("agentkit")]
    text = [r.getMessage() for r in ours]
    assert any(t.startswith("investigating 'Is NCCL tuned?'") for t in text)
    assert any(t.startswith("task nccl-env ok in ") for t in text)
    assert any(t.startswith("answered in ") for t in text)
    assert logging.getLogger().handlers == root_handlers  # no handler added for anyone
    assert logging.getLogger("agentkit").handlers == []


def test_shell_completion_knows_the_commands_and_options(tmp_path: Path) -> None:
    done = cli("completion", "bash")
    assert done.returncode == 0
    script = tmp_path / "agentkit.bash"
    script.write_text(done.stdout)
    # bash itself: load the script, then ask it to complete `agentkit as` and `agentkit ask --ro`
    probe = (f"source {script}; "
             "COMP_WORDS=(agentkit as); COMP_CWORD=1; COMP_LINE='agentkit as'; "
             "COMP_POINT=${#COMP_LINE}; _shtab_agentkit; echo ${COMPREPLY[@]}; "
             "COMP_WORDS=(agentkit ask --ro); COMP_CWORD=2; COMP_LINE='agentkit ask --ro'; "
             "COMP_POINT=${#COMP_LINE}; _shtab_agentkit; echo ${COMPREPLY[@]}")
    got = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, timeout=30)
    lines = got.stdout.splitlines()
    assert lines[0].split() == ["ask"], got.stderr
    assert "--root" in lines[1].split(), got.stdout
    assert cli("completion", "fish").returncode == 2  # not a shell it writes for


def test_a_default_named_trace_is_created_exclusively(tmp_path: Path) -> None:
    from agentkit import Trace

    path = tmp_path / "run.jsonl"
    Trace(str(path), exclusive=True).close()
    with pytest.raises(FileExistsError):  # never a second writer on one trace
        Trace(str(path), exclusive=True)
    Trace(str(path)).close()  # a path the user gives (--trace FILE) is theirs to overwrite
