"""The kernel layer (bubblewrap) under the allowlist, and the redacted copies.

Two questions, each asked of real processes:

* With every userspace check switched off (the allowlist, the path guard, the redacted
  copies, output redaction: as if each had a bug), what does the kernel layer alone stop?
  Each attack is first shown to work with the kernel layer off too, so the test can fail.
* With everything on, do the slicing tricks that beat output-only redaction get anything?

Expected facts, written from the semantics before running: a read-only bind mount refuses
every write (EROFS) whatever the file mode; a new pid namespace's /proc lists only the
sandbox's processes, so another process's environ is absent; a new net namespace has only
a down loopback, so a TCP connect to the host's 127.0.0.1 fails; a credential path covered
by an empty tmpfs or /dev/null mount has no content to read.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from agentkit import Host, Sandbox
from agentkit._sandbox import _commands, _copies, _kernel, _rooted, _spawn
from agentkit._sandbox._paths import Root
from agentkit._sandbox._rules import Checked

pytestmark = pytest.mark.skipif(
    _kernel._probe(_kernel.BWRAP) is not None,
    reason=f"the kernel layer cannot run here: {_kernel._probe(_kernel.BWRAP)}")

SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYz9q8Xk2LmN"
PEM_BODY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7Vz3q9fake4body"


def call(host: Host, argv: list[str]) -> Any:
    return anyio.run(Sandbox(host, task_id="t").call, "run_command", {"argv": argv})


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A home directory outside /tmp (which the sandbox empties anyway), holding credentials,
    and taken by the kernel layer as one of the host's homes."""
    path = Path.home() / f".agentkit-test-{uuid.uuid4().hex[:8]}"
    (path / ".aws").mkdir(parents=True)
    (path / ".aws" / "credentials").write_text(f"[default]\naws_secret_access_key = {SECRET}\n")
    (path / ".netrc").write_text(f"machine h login u password {SECRET}\n")
    with as_kernel_home(monkeypatch, path, path):
        yield path


@contextlib.contextmanager
def as_kernel_home(monkeypatch: pytest.MonkeyPatch, home: Path, scratch: Path) -> Iterator[None]:
    """``home`` is the only home the kernel layer knows (its mask lists rebuilt before and
    after); ``scratch`` is removed at the end."""
    monkeypatch.setattr(_kernel, "_homes", lambda: [str(home)])
    _kernel._existing_secrets.cache_clear()
    _kernel._inodes.cache_clear()
    try:
        yield
    finally:
        _kernel._existing_secrets.cache_clear()
        _kernel._inodes.cache_clear()
        subprocess.run(["rm", "-rf", str(scratch)], check=True)


@contextlib.contextmanager
def daemon_socket() -> Iterator[str]:
    """A listening Unix socket under /run, where daemons keep theirs (skips where /run is
    not writable); removed after, with the kernel layer's socket list."""
    top = f"/run/agentkit-test-{uuid.uuid4().hex[:8]}"
    try:
        os.mkdir(top)
    except OSError as exc:
        pytest.skip(f"cannot make a socket under /run here: {exc.strerror}")
    path = f"{top}/daemon.sock"
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(path)
        server.listen(4)
        yield path
    finally:
        server.close()
        with contextlib.suppress(OSError):
            os.unlink(path)
        os.rmdir(top)
        _kernel._sockets.cache_clear()


@pytest.fixture
def no_userspace(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every userspace layer off: any argv runs, every path is taken as given, no copies, no
    redaction. What still holds is the kernel layer's alone."""
    monkeypatch.setattr(_commands, "check", lambda argv: Checked(
        list(argv), paths=[a for a in argv[1:] if a.startswith("/")]))
    monkeypatch.setattr(_commands, "_police", lambda ctx, operand: os.path.realpath(operand))
    monkeypatch.setattr(_rooted, "_into_root", lambda ctx, checked: Checked(
        checked.argv, paths=checked.paths))
    monkeypatch.setattr(_commands, "_copied", lambda ctx, checked, scratch: checked)
    monkeypatch.setattr(_commands, "_no_secret_links", lambda checked: None)
    monkeypatch.setattr(_commands, "redact", lambda text: text)
    monkeypatch.setattr(_commands, "trusted_binary", lambda name, dirs: name if
                        name.startswith("/") else f"/usr/bin/{name}")


def live(kernel: bool) -> Host:
    return Host(root=Root("/"), sandbox="kernel" if kernel else "allowlist",
                command_timeout_s=10)


@contextlib.contextmanager
def canary_process() -> Iterator[int]:
    proc = subprocess.Popen(["/bin/sleep", "30"], env={"AGENTKIT_CANARY": SECRET})
    try:
        yield proc.pid
    finally:
        proc.kill()
        proc.wait()


@contextlib.contextmanager
def listener() -> Iterator[int]:
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen()
    srv.settimeout(5)

    def serve() -> None:
        with contextlib.suppress(OSError):
            conn, _ = srv.accept()
            conn.sendall(SECRET.encode())
            conn.close()

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield srv.getsockname()[1]
    finally:
        srv.close()


def _attack_output(kernel: bool, argv: list[str]) -> str:
    r = call(live(kernel), argv)
    return f"{r.data.get('stdout', '')}{r.data.get('stderr', '')}{r.error}"


# -- what the kernel layer alone stops ----------------------------------------------------

# Slices, so that output redaction (still on in the Sandbox) sees a bare value.
@pytest.mark.parametrize("argv", [
    ["tail", "-c", "41", "{home}/.aws/credentials"],
    ["grep", "-o", "[A-Za-z0-9/]\\{30,\\}", "{home}/.aws/credentials"],
    ["tail", "-c", "41", "{home}/.netrc"],
])
def test_credential_files_are_not_mounted(home: Path, no_userspace: None,
                                          argv: list[str]) -> None:
    argv = [a.replace("{home}", str(home)) for a in argv]
    assert SECRET in _attack_output(False, argv)  # the attack works without the kernel
    assert SECRET not in _attack_output(True, argv)


def test_other_processes_environment_is_absent(no_userspace: None) -> None:
    with canary_process() as pid:
        argv = ["cat", f"/proc/{pid}/environ"]
        assert SECRET in _attack_output(False, argv)
        assert SECRET not in _attack_output(True, argv)


def test_the_agents_own_environment_is_absent(no_userspace: None,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    # The agent's environment holds the model's API key; /proc/<agent pid>/environ shows the
    # environment it was started with, so start a child agent-like process with one.
    with canary_process() as pid:
        argv = ["tail", "-c", "41", f"/proc/{pid}/environ"]
        assert SECRET in _attack_output(False, argv)
        assert SECRET not in _attack_output(True, argv)


def test_no_write_reaches_the_host(no_userspace: None) -> None:
    marker = Path.home() / f".agentkit-marker-{uuid.uuid4().hex[:8]}"
    try:
        call(live(True), ["touch", str(marker)])
        assert not marker.exists()
        call(live(False), ["touch", str(marker)])  # RLIMIT_FSIZE=0 still lets a file be made
        assert marker.exists()
    finally:
        marker.unlink(missing_ok=True)


def test_no_network(no_userspace: None) -> None:
    code = ("import socket,sys; s=socket.create_connection(('127.0.0.1', int(sys.argv[1])), 3);"
            "print(s.recv(100).decode())")
    with listener() as port:
        assert SECRET not in _attack_output(True, [sys.executable, "-c", code, str(port)])
    with listener() as port:
        assert SECRET in _attack_output(False, [sys.executable, "-c", code, str(port)])


def test_a_snapshot_sandbox_holds_only_the_files_given(tmp_path: Path,
                                                       no_userspace: None) -> None:
    # On a snapshot root nothing of the host but its programs is mounted: a host path that
    # a broken guard let through names nothing.
    host = Host(root=Root(str(tmp_path)), sandbox="kernel")
    outside = Path.home() / f".agentkit-outside-{uuid.uuid4().hex[:8]}"
    outside.write_text(SECRET)
    try:
        r = call(host, ["cat", str(outside)])
        assert SECRET not in f"{r.data}{r.error}"
        r = call(Host(root=Root(str(tmp_path)), sandbox="allowlist"), ["cat", str(outside)])
        assert SECRET in f"{r.data}{r.error}"
    finally:
        outside.unlink()


# -- everything on: slicing tricks against a file the investigation may read ---------------

SLICES = [
    ["tail", "-c", "+30", "{f}"], ["tail", "-c", "45", "{f}"], ["tail", "-n", "+2", "{f}"],
    ["grep", "-o", "[A-Za-z0-9/+]\\{16,\\}", "{f}"], ["grep", "-v", "BEGIN", "{f}"],
    ["sed", "-n", "2,3p", "{f}"], ["sed", "-n", "5,6p", "{f}"], ["head", "-c", "200", "{f}"],
    ["sort", "{f}"], ["uniq", "{f}"], ["grep", "-r", "-o", "[A-Za-z0-9/+]\\{20,\\}", "{d}"],
    ["grep", "-h", "-o", "[^ =]*$", "{f}"], ["cat", "-A", "{f}"],
]


@pytest.mark.parametrize("root", ["live", "snapshot"])
@pytest.mark.parametrize("kernel", [True, False], ids=["kernel", "allowlist-only"])
@pytest.mark.parametrize("argv", SLICES, ids=[" ".join(a[:3]).replace("\\", "") for a in SLICES])
def test_slicing_gets_no_secret_from_a_readable_file(tmp_path: Path, argv: list[str],
                                                     kernel: bool, root: str) -> None:
    if root == "snapshot" and (argv[0] not in _rooted.FILE_READERS or "{d}" in argv):
        pytest.skip("on a snapshot only the plain file readers run, on regular files")
    unit = tmp_path / "etc" / "vllm.env"
    unit.parent.mkdir()
    unit.write_text(
        f"VLLM_API_KEY={SECRET}\n-----BEGIN PRIVATE KEY-----\n{PEM_BODY}\n"
        "-----END PRIVATE KEY-----\n"
        f"ExecStart=/usr/bin/vllm serve m --api-key {SECRET[::-1]}\nAWS_SECRET={SECRET[3:]}\n")
    mode = "kernel" if kernel else "allowlist"
    if root == "live":
        host = Host(root=Root("/", allow=(str(tmp_path),)), sandbox=mode)
        f, d = str(unit), str(tmp_path)
    else:
        host, f, d = Host(root=Root(str(tmp_path)), sandbox=mode), "/etc/vllm.env", "/etc"
    r = call(host, [a.replace("{f}", f).replace("{d}", d) for a in argv])
    shown = f"{r.data}{r.error}"
    assert r.ok, r.error
    for secret in (SECRET, SECRET[::-1], PEM_BODY):
        fragments = {secret[i:i + 12] for i in range(len(secret) - 11)}
        assert not [f for f in fragments if f in shown], (argv, shown)


def test_a_slice_still_reads_the_rest_of_the_file(tmp_path: Path) -> None:
    f = tmp_path / "app.env"
    f.write_text(f"MODEL=/models/kimi\nHF_TOKEN={SECRET}\nTP=8\n")
    r = call(Host(root=Root("/", allow=(str(tmp_path),))), ["tail", "-n", "+2", str(f)])
    assert r.ok and "TP=8" in r.data["stdout"] and SECRET not in r.data["stdout"]
    assert str(f) not in r.data["stdout"] and "agentkit-cmd" not in str(r.data)


def test_big_files_use_a_window_for_head_and_tail_and_are_refused_whole(tmp_path: Path) -> None:
    f = tmp_path / "big.log"
    f.write_bytes(b"line of log\n" * (1 << 20))  # 12 MiB
    host = Host(root=Root("/", allow=(str(tmp_path),)))
    r = call(host, ["tail", "-n", "2", str(f)])
    assert r.ok and r.data["stdout"] == "line of log\nline of log\n"
    r = call(host, ["cat", str(f)])
    assert not r.ok and "MiB" in r.error and "head or tail" in r.error


# -- the mode is said, and the setting is obeyed ------------------------------------------

def test_required_kernel_layer_refuses_where_it_cannot_run(monkeypatch: pytest.MonkeyPatch,
                                                           caplog: pytest.LogCaptureFixture
                                                           ) -> None:
    monkeypatch.setattr(_kernel, "BWRAP", "/nonexistent/bwrap")
    r = call(Host(root=Root("/"), sandbox="kernel"), ["uname"])
    assert not r.ok and "required" in r.error and "bubblewrap" in r.error
    _kernel._warned.clear()
    with caplog.at_level("WARNING", logger="agentkit.sandbox"):
        for _ in range(3):
            assert call(Host(root=Root("/"), sandbox="auto"), ["uname"]).ok
    said = [r for r in caplog.records if "allowlist-only" in r.getMessage()]
    assert len(said) == 1, "warned once, not per command"


def test_the_cli_says_loudly_when_it_runs_without_the_kernel_layer(tmp_path: Path) -> None:
    code = ("import sys; from agentkit._sandbox import _kernel; "
            "_kernel.BWRAP = '/nonexistent/bwrap'; from agentkit.cli import main; "
            "sys.exit(main(sys.argv[1:]))")
    env = {**os.environ, "AGENTKIT_SANDBOX": "auto", "AGENTKIT_TRACE_DIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", code, "tools", "call", "run_command", "--args",
                           '{"argv": ["uname"]}'], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("allowlist-only") == 1 and "bubblewrap" in done.stderr


def test_the_mode_in_force_is_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    env = {**os.environ, "AGENTKIT_SANDBOX": "allowlist"}
    out = subprocess.run([sys.executable, "-m", "agentkit", "tools", "list"], env=env,
                         capture_output=True, text=True, check=True).stdout
    assert "sandbox: allowlist-only" in out
    env["AGENTKIT_SANDBOX"] = "auto"
    out = subprocess.run([sys.executable, "-m", "agentkit", "tools", "list"], env=env,
                         capture_output=True, text=True, check=True).stdout
    assert "sandbox: kernel" in out
    env["AGENTKIT_SANDBOX"] = "bogus"
    done = subprocess.run([sys.executable, "-m", "agentkit", "tools", "list"], env=env,
                          capture_output=True, text=True)
    assert done.returncode == 2 and "AGENTKIT_SANDBOX" in done.stderr
    assert "Traceback" not in done.stderr


# -- git leaves the repository exactly as it was -------------------------------------------

def _tree_state(root: Path) -> dict[str, tuple[int, int, int]]:
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns, p.stat().st_mode)
            for p in sorted(root.rglob("*"))}


@pytest.mark.parametrize("kernel", [True, False], ids=["kernel", "allowlist-only"])
def test_git_changes_nothing_in_a_dirty_repository(tmp_path: Path, kernel: bool) -> None:
    # A dirty work tree with a stale index is when git most wants to refresh the index and
    # write index.lock (`describe --dirty`, `status`): none of its files, sizes or mtimes
    # may change, and no lock may stay.
    repo = tmp_path / "repo"
    repo.mkdir()
    env = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
    (repo / "a.txt").write_text("one\n")
    for argv in (["init", "-q", "-b", "main"], ["add", "a.txt"],
                 ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "first"],
                 ["tag", "v1"]):
        subprocess.run(["git", *argv], cwd=repo, check=True, env=env, capture_output=True)
    (repo / "a.txt").write_text("two\n")
    os.utime(repo / "a.txt", ns=(1, 1))  # a stat that disagrees with the index
    before = _tree_state(repo)
    host = Host(root=Root("/", allow=(str(tmp_path),)), sandbox="kernel" if kernel else
                "allowlist", command_timeout_s=10)
    ran = 0
    # the reader's questions (issue 28: git itself is never run), and two it refuses
    for args in (["log", "-p"], ["show", "HEAD"], ["ls-files"], ["ls-files", "-m"],
                 ["branch", "-a"], ["tag", "-l"], ["rev-parse", "HEAD"], ["log", "--oneline"],
                 ["describe", "--dirty"]):
        r = call(host, ["git", "-C", str(repo), *args])
        ran += r.ok
    assert ran >= 7
    assert _tree_state(repo) == before
    assert not (repo / ".git" / "index.lock").exists()


def test_with_every_userspace_check_off_git_still_writes_nothing(
        tmp_path: Path, no_userspace: None, monkeypatch: pytest.MonkeyPatch) -> None:
    # `git status` and `update-index --refresh` rewrite the index of a dirty tree, and
    # `tag` writes a ref; without the allowlist, GIT_OPTIONAL_LOCKS and RLIMIT_FSIZE only the
    # read-only mount is left, and it must hold. (The same calls with the kernel layer off
    # show that they do write, so the test can fail.)
    monkeypatch.setattr(_spawn, "_limited", lambda argv, cpu_s: (argv, None))
    home_repo = Path.home() / f".agentkit-repo-{uuid.uuid4().hex[:8]}"
    try:
        home_repo.mkdir()
        env = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
        (home_repo / "a.txt").write_text("one\n")
        for argv in (["init", "-q", "-b", "main"], ["add", "a.txt"],
                     ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "x"]):
            subprocess.run(["git", *argv], cwd=home_repo, check=True, env=env,
                           capture_output=True)
        os.utime(home_repo / "a.txt", ns=(1, 1))
        before = _tree_state(home_repo)
        writes = (["status"], ["update-index", "--refresh"], ["tag", "planted"])
        for args in writes:
            call(live(True), ["git", "-C", str(home_repo), *args])
        assert _tree_state(home_repo) == before
        for args in writes:
            call(live(False), ["git", "-C", str(home_repo), *args])
        assert _tree_state(home_repo) != before
    finally:
        subprocess.run(["rm", "-rf", str(home_repo)], check=True)


@pytest.mark.parametrize("argv", [["cat", "{f}"], ["tail", "-c", "41", "{f}"],
                                  ["grep", "-r", "-o", "[A-Za-z0-9/]\\{30,\\}", "{d}"]])
def test_a_hard_link_to_a_credential_file_is_refused(home: Path, argv: list[str]) -> None:
    # A hard link is the same file under another name: no mask or deny-list names it, so
    # operands are compared by inode with the credential files found.
    allowed = home / "allowed"
    allowed.mkdir()
    os.link(home / ".aws" / "credentials", allowed / "innocent.txt")
    host = Host(root=Root("/", allow=(str(allowed),)), sandbox="kernel")
    r = call(host, [a.replace("{f}", str(allowed / "innocent.txt")).replace("{d}", str(allowed))
                    for a in argv])
    assert SECRET not in f"{r.data}{r.error}"
    if "-r" not in argv:  # a recursive walk skips it, as it skips every refused file
        assert not r.ok and "hard link" in r.error


def test_the_file_tools_refuse_every_name_the_kernel_layer_masks() -> None:
    # The file tools run in this process, without the kernel layer: a credential name the
    # mounts hide but the path guard reads would leak through read_file and grep.
    from agentkit._sandbox._paths import PathRefused, check_policy

    names = [f"/home/u/{n}" for n in _kernel._HOME_SECRETS] + [
        p.replace("*", "x") for p in _kernel._SYSTEM_SECRETS + _kernel._KUBECONFIGS]
    missed = []
    for name in names:
        for path in (name, f"{name}/inner"):
            try:
                check_policy(Root("/"), path)
            except PathRefused:
                break
        else:
            missed.append(name)
    assert not missed


@pytest.mark.parametrize(("tool", "args"), [
    ("read_file", {"path": "{f}"}), ("grep", {"pattern": ".", "path": "{d}"}),
    ("parse_config", {"path": "{f}", "format": "ini"})])
def test_the_file_tools_refuse_a_hard_link_to_a_credential_file(home: Path, tool: str,
                                                                args: dict[str, str]) -> None:
    # a bare token: nothing for output redaction to recognise, so only the refusal stands
    (home / ".vault-token").write_text(SECRET + "\n")
    _kernel._existing_secrets.cache_clear()
    _kernel._inodes.cache_clear()
    allowed = home / "allowed"
    allowed.mkdir()
    os.link(home / ".vault-token", allowed / "innocent.txt")
    host = Host(root=Root("/", allow=(str(allowed),)))
    filled = {k: v.replace("{f}", str(allowed / "innocent.txt")).replace("{d}", str(allowed))
              for k, v in args.items()}
    r = anyio.run(Sandbox(host, task_id="t").call, tool, filled)
    assert SECRET not in f"{r.data}{r.error}{r.evidence}"
    assert SECRET[:12] not in f"{r.data}{r.error}{r.evidence}"


def test_a_tail_window_of_a_big_kubernetes_secret_is_still_redacted(tmp_path: Path) -> None:
    # The window holds data lines only; that they are a Secret's is said at the file's top
    f = tmp_path / "big-secret.yaml"
    lines = "".join(f"  key{i}: {SECRET[:20]}{i:08d}\n" for i in range(40_000))
    f.write_text(f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\ndata:\n{lines}")
    assert f.stat().st_size > _copies.WINDOW
    r = call(Host(root=Root("/", allow=(str(tmp_path),))), ["tail", "-n", "3", str(f)])
    assert r.ok and r.data["stdout"].count("key") == 3 and SECRET[:20] not in r.data["stdout"]


def test_a_host_daemons_unix_socket_is_not_reachable_but_by_its_own_client() -> None:
    # A network namespace does not cut a path-named Unix socket (unix(7): it is a file);
    # docker.sock is root on the host. Every daemon socket is covered, but for the program
    # that talks to it (red team round 2).
    with daemon_socket() as path:
        _kernel._sockets.cache_clear()
        assert path in _kernel.daemon_sockets()
        probe = ["/usr/bin/python3", "-c", "import socket,sys; s=socket.socket(socket.AF_UNIX);"
                 f" s.connect({path!r}); print('connected')"]

        def run(needs: _kernel.Needs) -> str:
            argv = _kernel.wrap(probe, {"PATH": "/usr/bin:/bin"}, needs, live=True)
            return subprocess.run(argv, capture_output=True, text=True, timeout=30).stdout

        assert "connected" not in run(_kernel.Needs())
        assert "connected" in run(_kernel.Needs(unmasked=(path,)))  # as docker gets its own
