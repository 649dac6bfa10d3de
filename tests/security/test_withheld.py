"""Issue 28: each known limit of docs/security.md is answered by a visible "withheld" in the
output, at the place it happens (the table "What the output shows" in docs/security.md names
these tests).

Expected facts, written from the tools' documentation before running:

* mysql's ``-p`` takes the password attached only ("-pPASS, no space"; ``-p db`` prompts and
  ``db`` is the database) and ``-P`` is the port; sshpass ``-p PASS`` (getopt: attached too),
  redis-cli ``-a PASS``, ``docker login -p PASS`` (pflag: ``-pPASS``, ``-p=PASS``) take a
  password whatever it looks like; ``docker run -p 127.0.0.1:8000:8000``, ``ssh -p 2222``,
  ``redis-cli -p 6379`` and ``mkdir -p`` do not.
* A number under a name that says password, passphrase, PIN or secret is a numeric password;
  under ``token`` it is a count (SGLang's decode lines print ``#token: N``).
* A file with other hard links is read (it may be a credential file named elsewhere) with
  its credential-looking words withheld; the result says so and names the file.
* bubblewrap absent (``allowlist``): every command's result says the kernel layer was
  absent; under it, that there is no seccomp/Landlock and operands are opened by the program.
* journalctl, systemctl, ps report host state whatever ``Root.allow`` says: their result says
  so, whether it ran or was captured.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from agentkit import Host, Sandbox
from agentkit._sandbox import _kernel
from agentkit._sandbox._redact import redact

from ..conftest import EXAMPLES, REFERENCE_QUESTION

KERNEL = _kernel._probe(_kernel.BWRAP) is None
MODES = ["allowlist", pytest.param("kernel", marks=pytest.mark.skipif(
    not KERNEL, reason=f"the kernel layer cannot run here: {_kernel._probe(_kernel.BWRAP)}"))]
FLAG_LINES = ("mysql -h db -uroot -p{pw} appdb", "sshpass -p {pw} ssh -p 2222 host",
              "redis-cli -h cache -a {pw} ping", "docker login -u me -p {pw} registry.io",
              "sshpass -p{pw} scp f host:", "mongosh -u admin -p {pw} db")
PORT_LINES = ("docker run -p 8000 img", "docker run -p 127.0.0.1:8000:8000 img",
              "ssh -p 2222 host", "mysql -h db -P 3306 -u root", "redis-cli -p 6379 ping",
              "mkdir -p ckpt2024", "mysql -p appdb", "ps -p 1234")


def _call(host: Host, tool: str, args: dict[str, Any]) -> Any:
    out = anyio.run(Sandbox(host, task_id="t").call, tool, args)
    assert out.ok, out.error
    return out


def _seen(host: Host, path: str, mode: str) -> list[str]:
    """The file's text as read_file shows it and as `cat` (a real process) prints it."""
    text = _call(host, "read_file", {"path": path}).data["text"]
    cat = _call(Host(root=host.root, sandbox=mode), "run_command",
                {"argv": ["cat", path]}).data["stdout"]
    return [text, cat]


# passwords a shape rule keeps: lower case, digits only, short
_PASSWORDS = st.text("abcdefghijklmnopqrstuvwxyz0123456789", min_size=4, max_size=14)


@pytest.mark.parametrize("mode", MODES)
@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pw=_PASSWORDS)
def test_password_flag_values_are_withheld_ports_stay(mode: str, pw: str,
                                                      tmp_path_factory: Any) -> None:
    blank = "\n".join(FLAG_LINES + PORT_LINES).replace("{pw}", "")
    assume(pw not in blank and not pw.startswith(("2222", "8000", "6379", "3306")))
    root = tmp_path_factory.mktemp("r")
    (root / "etc").mkdir()
    body = "\n".join([*(ln.format(pw=pw) for ln in FLAG_LINES), *PORT_LINES]) + "\n"
    (root / "etc" / "ops.sh").write_text(body)
    for shown in _seen(Host.at(root), "/etc/ops.sh", mode):
        assert pw not in shown
        assert shown.count("[REDACTED:password-flag]") == len(FLAG_LINES)
        for line in PORT_LINES:
            assert line in shown


def test_password_flag_in_a_real_process_list(tmp_path: Path) -> None:
    """`ps` on the live host (both modes): a process whose argv holds mysql -pPASS."""
    pw = f"lower{os.getpid()}pass"
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "mysql",
                             "-uroot", f"-p{pw}", "appdb"])
    try:
        time.sleep(0.3)
        for mode in ("allowlist", *(("kernel",) if KERNEL else ())):
            out = _call(Host.at("/", sandbox=mode), "run_command", {"argv": ["ps", "-efww"]})
            assert "appdb" in out.data["stdout"], mode  # the process was listed
            assert pw not in out.data["stdout"], mode
            assert "-p[REDACTED:password-flag] appdb" in out.data["stdout"], mode
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.parametrize("mode", MODES)
def test_numeric_passwords_under_secret_names_are_withheld(tmp_path: Path, mode: str) -> None:
    (tmp_path / "etc").mkdir()
    secret = ["DB_PASSWORD=4711093", "admin_pin: 8642", '"password": 135792,',
              "requirepass 97531"]
    benign = ["max_tokens=4096", "port: 5432", "hash_salt: 42", "sort_key=2",
              '"pad_token_id": 0,', "token_budget: 1.5",
              "Decode batch. #running-req: 212, #token: 1017318, token usage: 0.97"]
    (tmp_path / "etc" / "app.conf").write_text("\n".join(secret + benign) + "\n")
    for shown in _seen(Host.at(tmp_path), "/etc/app.conf", mode):
        for value in ("4711093", "8642", "135792", "97531"):
            assert value not in shown
        assert shown.count("[REDACTED:secret]") == len(secret)
        for line in benign:
            assert line in shown


@pytest.mark.parametrize("mode", MODES)
def test_a_hard_linked_file_says_what_was_withheld(tmp_path: Path, mode: str) -> None:
    (tmp_path / "etc").mkdir()
    token = "s.Rt4hOmE9tWo12345678"
    (tmp_path / "etc" / "a.txt").write_text(f"token {token}\n")
    os.link(tmp_path / "etc" / "a.txt", tmp_path / "etc" / "b.txt")
    (tmp_path / "etc" / "single.txt").write_text("token plain\n")
    host = Host.at(tmp_path, sandbox=mode)
    read = _call(host, "read_file", {"path": "/etc/b.txt"})
    grep = _call(host, "grep", {"pattern": "token", "path": "/etc"})
    cat = _call(host, "run_command", {"argv": ["cat", "/etc/b.txt"]})
    for out in (read, grep, cat):
        assert token not in json.dumps(out.data) and "[REDACTED:linked-file]" in \
            json.dumps(out.data)
        [linked] = [w for w in out.data["withheld"] if w.startswith("hard-link:")
                    and "/etc/b.txt" in w] or [""]
        assert "2 hard links" in linked and "shorter secret" in linked
    assert "withheld" not in _call(host, "read_file", {"path": "/etc/single.txt"}).data


def test_parse_config_of_a_hard_linked_file_says_so(tmp_path: Path) -> None:
    """Red team 4 (F8): parse_config read a hard-linked file's short value (inside the
    documented limit) without the notice read_file, grep and cat give for the same file."""
    (tmp_path / "hl").mkdir()
    (tmp_path / "hl" / "c.yaml").write_text("db:\n  note: s3cr3tPw9\n")
    os.link(tmp_path / "hl" / "c.yaml", tmp_path / "hl" / "other.yaml")
    (tmp_path / "hl" / "single.yaml").write_text("db:\n  note: plain\n")
    host = Host.at(tmp_path, sandbox="allowlist")
    out = _call(host, "parse_config", {"path": "/hl/other.yaml"})
    [linked] = [w for w in out.data.get("withheld", []) if w.startswith("hard-link:")] or [""]
    assert "/hl/other.yaml" in linked and "2 hard links" in linked
    assert "withheld" not in _call(host, "parse_config", {"path": "/hl/single.yaml"}).data


@pytest.mark.parametrize("mode", MODES)
def test_every_command_says_which_layer_it_ran_under(mode: str) -> None:
    out = _call(Host.at("/", sandbox=mode), "run_command", {"argv": ["uname", "-r"]})
    kinds = [w.split(":", 1)[0] for w in out.data["withheld"]]
    if mode == "allowlist":
        assert kinds == ["allowlist-only"]
        assert "without the kernel layer" in out.data["withheld"][0]
    else:
        assert kinds == ["kernel-layer", "live-root"]
        assert "no seccomp filter or Landlock" in out.data["withheld"][0]


@pytest.mark.parametrize("mode", MODES)
def test_host_state_says_it_reaches_beyond_the_allowed_paths(mode: str) -> None:
    live = _call(Host.at("/", sandbox=mode), "run_command", {"argv": ["ps", "-ef"]})
    snap = Host.at(EXAMPLES / "blackwell-kimi", sandbox=mode)
    captured = _call(snap, "run_command", {"argv": ["journalctl", "-u", "vllm-kimi.service",
                                                    "-n", "2000", "--no-pager"]})
    plain = _call(snap, "run_command", {"argv": ["uname", "-r"]})
    for out in (live, captured):
        [line] = [w for w in out.data["withheld"] if w.startswith("system-state:")]
        assert "beyond the allowed paths" in line and "redacted as output only" in line
    assert "withheld" not in plain.data  # captured, and not host state beyond the paths


def test_the_answer_names_the_limits_in_force(tmp_path: Path) -> None:
    """The reference question: the journal and systemctl captures are host state, and every
    answer holds the redactor's own limit; the trace replays to the same answer."""
    trace = tmp_path / "run.jsonl"
    done = subprocess.run([sys.executable, "-m", "agentkit", "ask", REFERENCE_QUESTION,
                           "--root", str(EXAMPLES / "blackwell-kimi"), "--json",
                           "--trace", str(trace)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    notes = json.loads(done.stdout)["notes"]
    assert any(n.startswith("Host state (journal") for n in notes)
    assert any(n.startswith("Secrets were withheld by pattern and marked [REDACTED:")
               for n in notes)
    assert not any("allowlist-only" in n for n in notes)  # no command ran: captures only
    again = subprocess.run([sys.executable, "-m", "agentkit", "replay", str(trace)],
                           capture_output=True, text=True, timeout=120)
    assert again.returncode == 0 and "answer identical" in again.stderr, again.stderr


def test_the_redaction_mark_names_why() -> None:
    assert redact("mysql -plowercase1 db") == "mysql -p[REDACTED:password-flag] db"
    assert redact("PASSWORD=123456") == "PASSWORD=[REDACTED:secret]"
