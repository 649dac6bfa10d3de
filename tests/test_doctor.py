"""``agentkit doctor`` says what the machine gives agentkit and the fix for each gap (issue 25
item 4). A machine without bubblewrap is made the way the kernel layer's own tests make it:
``_kernel.BWRAP`` pointed at a path that does not exist."""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from .conftest import EXAMPLES, REPO

_NO_BWRAP = ("import sys; from agentkit._sandbox import _kernel; "
             "_kernel.BWRAP = '/nonexistent/bwrap'; from agentkit.cli import main; "
             "sys.exit(main(sys.argv[1:]))")


def _run(*args: str, env: dict[str, str] | None = None, no_bwrap: bool = False
         ) -> subprocess.CompletedProcess[str]:
    head = ["-c", _NO_BWRAP] if no_bwrap else ["-m", "agentkit"]
    full = {**os.environ, "AGENTKIT_CONFIG": "/dev/null", **(env or {})}
    for k in [k for k, v in full.items() if not v]:
        del full[k]
    return subprocess.run([sys.executable, *head, *args], cwd=REPO, capture_output=True,
                          text=True, timeout=60, env=full)


def _checks(done: subprocess.CompletedProcess[str]) -> dict[str, dict[str, Any]]:
    return {c["area"]: c for c in json.loads(done.stdout)}


def test_a_machine_without_bubblewrap(tmp_path: Path) -> None:
    env = {"AGENTKIT_TRACE_DIR": str(tmp_path), "AGENTKIT_SANDBOX": ""}
    done = _run("doctor", "--json", env=env, no_bwrap=True)
    assert done.returncode == 0, done.stderr  # auto: commands still run, allowlist-only
    c = _checks(done)
    assert c["bubblewrap"]["state"] == "warn" and "/nonexistent/bwrap" in c["bubblewrap"]["detail"]
    assert "apt install bubblewrap" in c["bubblewrap"]["fix"]
    assert c["sandbox mode"]["detail"].startswith("allowlist-only, from the default (auto)")
    text = _run("doctor", env=env, no_bwrap=True).stdout
    assert "fix: install it (Debian/Ubuntu: apt install bubblewrap" in text
    # required and missing: every command would be refused, which is a failure to fix
    required = _run("doctor", "--json", env={**env, "AGENTKIT_SANDBOX": "kernel"},
                    no_bwrap=True)
    assert required.returncode == 10
    assert _checks(required)["sandbox mode"]["state"] == "fail"


def test_the_first_answer_without_bubblewrap_points_to_doctor(tmp_path: Path) -> None:
    done = _run("ask", "Which GPUs?", "--root", str(EXAMPLES / "blackwell-kimi"),
                env={"AGENTKIT_TRACE_DIR": str(tmp_path), "AGENTKIT_SANDBOX": "auto"},
                no_bwrap=True)
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("allowlist-only") == 1 and "agentkit doctor" in done.stderr


def test_with_bubblewrap_the_mode_is_kernel(tmp_path: Path) -> None:
    from agentkit._sandbox import _kernel

    if _kernel._probe(_kernel.BWRAP) is not None:
        pytest.skip(f"the kernel layer cannot run here: {_kernel._probe(_kernel.BWRAP)}")
    c = _checks(_run("doctor", "--json", env={"AGENTKIT_TRACE_DIR": str(tmp_path),
                                              "AGENTKIT_SANDBOX": ""}))
    assert c["bubblewrap"]["state"] == "ok" and c["sandbox mode"]["detail"].startswith("kernel")


@contextmanager
def _models_server(ids: list[str]) -> Iterator[str]:
    class Models(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = json.dumps({"object": "list", "data": [{"id": i} for i in ids]}).encode()
            code = 200 if self.path == "/v1/models" else 404
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Models)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()


def test_the_model_endpoint_is_checked_only_when_configured(tmp_path: Path) -> None:
    base = {"AGENTKIT_TRACE_DIR": str(tmp_path), "AGENTKIT_BASE_URL": "", "AGENTKIT_MODEL": ""}
    none = _checks(_run("doctor", "--json", env=base))
    assert none["model"]["state"] == "note" and "catalog mode" in none["model"]["detail"]
    with _models_server(["qwen3-32b", "other"]) as url:
        listed = _run("doctor", "--json", env={**base, "AGENTKIT_BASE_URL": url,
                                               "AGENTKIT_MODEL": "qwen3-32b"})
        assert listed.returncode == 0 and _checks(listed)["model"]["state"] == "ok"
        missing = _run("doctor", "--json", env={**base, "AGENTKIT_BASE_URL": url,
                                                "AGENTKIT_MODEL": "llama"})
        assert missing.returncode == 10
        m = _checks(missing)["model"]
        assert "does not list" in m["detail"] and "qwen3-32b" in m["detail"] and m["fix"]
    down = _run("doctor", "--json", env={**base, "AGENTKIT_BASE_URL": url,
                                         "AGENTKIT_MODEL": "qwen3-32b"})
    assert down.returncode == 10 and "not reachable" in _checks(down)["model"]["detail"]


def test_config_sources_and_trace_directory_are_named(tmp_path: Path) -> None:
    conf = tmp_path / "agentkit.toml"
    conf.write_text('concurrency = 4\n')
    traces = tmp_path / "traces"
    traces.mkdir()
    (traces / "run-20261201-000000-aaaaaa.jsonl").write_bytes(b"x" * 3_000_000)
    (traces / "unrelated.txt").write_bytes(b"x" * 5_000_000)
    c = _checks(_run("doctor", "--json", env={"AGENTKIT_TRACE_DIR": str(traces),
                                              "AGENTKIT_CONFIG": str(conf)}))
    assert str(conf) in c["config"]["detail"] and "AGENTKIT_CONFIG" in c["config"]["detail"]
    assert f"{traces}: 1 run, 3.0 MB" in c["traces"]["detail"]
    bad = tmp_path / "bad.toml"
    bad.write_text("nonsense = 1\n")
    broken = _run("doctor", "--json", env={"AGENTKIT_TRACE_DIR": str(traces),
                                           "AGENTKIT_CONFIG": str(bad)})
    assert broken.returncode == 10 and "unknown setting" in _checks(broken)["config"]["detail"]
