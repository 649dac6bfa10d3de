"""Issue 28's attempt classes, each through the real sandbox: programs that run code named
in a config are never run (kubectl), git is read by a library in one fixed shape from a
private copy (no TOCTOU, no format strings, per-file redaction before the diff), the journal
in a line format with its pattern matched after redaction, every output decoded before it is
redacted, special files refused before they are opened.

What the real tools would do is from their documentation: kubectl runs
``users[].user.exec.command`` to get a credential (client-go's exec plugin), git applies
``filter.<x>.clean`` and reads ``objects/info/alternates`` and ``info/grafts``
(gitattributes(5), gitrepository-layout(5)), ``--format=%<(N,ltrunc)`` keeps a value's tail
(git-log(1) PRETTY FORMATS), ``journalctl -o json`` prints a message with control bytes as an
array of numbers (journalctl(1), systemd.journal-fields(7)).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import anyio
import pytest

from agentkit import Host, Sandbox
from agentkit._sandbox._paths import Root

from ..test_commands_edges import call

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SECRET = "Zq8Lr3Vx7Np2Kt5Wm9Hc4Yd6"
GIT_ENV = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git makes the fixtures")


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo,
                   check=True, env=GIT_ENV, capture_output=True)


def _live(tmp_path: Path) -> Host:
    return Host(root=Root("/", allow=(str(tmp_path),)), sandbox="allowlist",
                command_timeout_s=5.0)


def _repo(tmp_path: Path, files: dict[str, bytes]) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    for name, data in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_bytes(data)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", f"Api-Key: {SECRET}")
    return repo


def test_kubectl_is_never_run_on_a_live_host(tmp_path: Path) -> None:
    # A kubeconfig's users[].user.exec runs a program on `kubectl get`: no argument check
    # stops it, so kubectl is not run at all (before: the command ran).
    r = call(_live(tmp_path), ["kubectl", "get", "pods", "-A", "-o", "json"])
    assert not r.ok and r.error.startswith("refused: ") and "exec" in r.error, r


@needs_git
@pytest.mark.parametrize("argv", [
    ["log", "--format=%<(26,ltrunc)%s"], ["log", "--format=%(trailers:key=Api-Key)"],
    ["log", "-p", "--graph"], ["log", "-p", "-U0"], ["log", "--encoding=UTF-16LE"],
    ["show", "--binary"], ["log", "-g", "--format=%gs"], ["log", "--date=format:%Y"],
    ["branch", "--format=%(contents)"], ["tag", "--list", "--format=%(contents)"],
    ["ls-files", "-m"], ["-c", "core.bigFileThreshold=1", "show"],
])
def test_git_options_that_shape_output_are_refused(tmp_path: Path, argv: list[str]) -> None:
    repo = _repo(tmp_path, {"a.txt": b"x\n"})
    r = call(_live(tmp_path), ["git", "-C", str(repo), *argv])
    assert not r.ok and r.error.startswith("refused: "), (argv, r)
    assert SECRET not in str(r.data) + r.error


@needs_git
@pytest.mark.parametrize("name", ["a dir/.env", "ü/.env", 'q"/.env', "t\tb/.env", ".env"])
def test_a_dotenv_in_history_is_redacted_as_a_dotenv(tmp_path: Path, name: str) -> None:
    repo = _repo(tmp_path, {name: f"STRIPE={SECRET}\n".encode()})
    (repo / name).write_bytes(f"STRIPE={SECRET}x\nOTHER=1\n".encode())
    _git(repo, "commit", "-q", "-am", "two")
    host = _live(tmp_path)
    for argv in (["log", "-p"], ["show"], ["show", f"HEAD~1:{name}"], ["log", "--oneline"]):
        r = call(host, ["git", "-C", str(repo), *argv])
        assert r.ok, (argv, r.error)
        assert SECRET not in r.data["stdout"], (argv, r.data["stdout"])


@needs_git
@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be", "utf-32", "utf-16"])
def test_a_wide_file_in_history_is_decoded_before_it_is_redacted(tmp_path: Path,
                                                                 codec: str) -> None:
    text = "说明文字 " * 300 + f"\nDB_PASSWORD={SECRET}\n"
    repo = _repo(tmp_path, {"conf/app.ini": text.encode(codec)})
    for argv in (["show", "HEAD:conf/app.ini"], ["log", "-p"]):
        r = call(_live(tmp_path), ["git", "-C", str(repo), *argv])
        # NUL-interleaved text is the secret to whoever drops the NULs
        assert r.ok and SECRET not in r.data["stdout"].replace("\0", ""), (argv, r.data)


@needs_git
def test_git_reads_only_what_was_copied_whatever_changes_after(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The race of issue 28: .git changed after the vetting (a filter in the config, grafts
    # made a symlink, alternates appearing). The reader reads its private copy only.
    outside = tmp_path / "outside"
    outside.mkdir()
    other = _repo(outside, {"secret.txt": f"TOKEN={SECRET}\n".encode()})
    blob = subprocess.run(["git", "rev-parse", "HEAD:secret.txt"], cwd=other, env=GIT_ENV,
                          capture_output=True, text=True, check=True).stdout.strip()
    inside = tmp_path / "in"
    inside.mkdir()
    repo = _repo(inside, {"a.txt": b"1\n", ".gitattributes": b"* filter=x\n"})
    marker = tmp_path / "ran"
    from agentkit._sandbox import _gitcopy  # (absent before issue 28: this test then errors)

    real = _gitcopy.private_copy

    def racing(root: Root, repo_dir: str, dest: str) -> None:
        real(root, repo_dir, dest)
        git = repo / ".git"
        (git / "objects/info/alternates").write_text(str(other / ".git/objects") + "\n")
        (git / "info").mkdir(exist_ok=True)
        os.symlink(str(outside / "repo/secret.txt"), git / "info/grafts")
        with (git / "config").open("a") as f:
            f.write(f'[filter "x"]\n\tclean = "touch {marker}; cat"\n'
                    f"[core]\n\tfsmonitor = touch {marker}\n")

    monkeypatch.setattr("agentkit._sandbox._gitread.private_copy", racing)
    host = Host(root=Root("/", allow=(str(inside),)), sandbox="allowlist")
    for argv in (["log", "-p"], ["show", blob], ["ls-files"]):
        r = call(host, ["git", "-C", str(repo), *argv])
        assert SECRET not in str(r.data) + r.error, argv
    assert not marker.exists()


def _snapshot_with(tmp_path: Path, argv: list[str], stdout: bytes) -> Host:
    root = tmp_path / "snap"
    shutil.copytree(EXAMPLES / "blackwell-kimi", root)
    manifest = json.loads((root / ".agentkit/snapshot.json").read_text())
    (root / ".agentkit/commands/extra.txt").write_bytes(stdout)
    manifest["commands"].append({"argv": argv, "stdout": "commands/extra.txt",
                                 "exit_code": 0})
    (root / ".agentkit/snapshot.json").write_text(json.dumps(manifest))
    return Host.at(root)


JOURNAL = ["journalctl", "-u", "vllm.service", "--no-pager"]


def test_journal_grep_matches_the_redacted_lines(tmp_path: Path) -> None:
    line = f"Nov 20 10:00:00 h vllm[1]: OPENAI_API_KEY=sk-proj-{SECRET}\n"
    host = _snapshot_with(tmp_path, JOURNAL, ("start\n" + line).encode())
    # a guess at the secret's prefix must not be confirmed by a match (84 calls recovered a
    # token so before)
    r = call(host, [*JOURNAL, "--grep", f"sk-proj-{SECRET[:4]}"])
    assert r.ok, r.error
    assert r.data["stdout"] == ""
    both = call(host, [*JOURNAL, "--grep", "OPENAI"])
    assert "OPENAI_API_KEY" in both.data["stdout"] and SECRET not in both.data["stdout"]


def test_journal_json_output_is_refused(tmp_path: Path) -> None:
    r = call(_live(tmp_path), ["journalctl", "-o", "json", "-n", "1"])
    assert not r.ok and r.error.startswith("refused: ")


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-32", "utf-16-be"])
def test_a_wide_capture_is_decoded_before_redaction(tmp_path: Path, codec: str) -> None:
    host = _snapshot_with(tmp_path, JOURNAL, f"x DB_PASSWORD={SECRET}\n".encode(codec))
    r = call(host, JOURNAL)
    assert r.ok and SECRET not in r.data["stdout"].replace("\0", ""), r.data


@pytest.mark.parametrize("data", [
    ("说明 " * 2000 + f"\nDB_PASSWORD={SECRET}\n").encode("utf-16-le"),  # no mark, CJK
    (f"DB_PASSWORD={SECRET}\n").encode("utf-32"),  # with a mark
    b"A" * 9000 + f"\nDB_PASSWORD={SECRET}\n".encode("utf-16-le"),  # wide after 8 KiB
    f"DB_PASS\x1b[0mWORD={SECRET}\n".encode(),  # an escape inside the key
])
@pytest.mark.parametrize("how", ["cat", "head", "sort", "read_file"])
def test_text_is_decoded_before_it_is_redacted(tmp_path: Path, data: bytes, how: str) -> None:
    f = tmp_path / "app.conf"
    f.write_bytes(data)
    host = _live(tmp_path)
    if how == "read_file":
        r = anyio.run(Sandbox(host, task_id="t").call, "read_file", {"path": str(f)})
        shown = r.data.get("text", "") + r.error
    else:
        r = call(host, [how, str(f)])
        shown = r.data.get("stdout", "") + r.error
    assert SECRET not in shown.replace("\0", ""), shown[-300:]


@pytest.mark.parametrize("program", ["wc", "sha256sum"])
def test_a_fifo_is_refused_before_it_is_opened(tmp_path: Path, program: str) -> None:
    fifo = tmp_path / "p"
    os.mkfifo(fifo)
    r = call(_live(tmp_path), [program, str(fifo)])
    assert not r.ok and "FIFO" in r.error, r.error  # before: blocked to the deadline


# Credential files by content (class 6): signatures from their formats' documentation
# (GNOME keyring's file header, KDE's kwallet, GnuPG's keybox "KBXf" at offset 8, PEM's
# BEGIN line, crypt(3)'s $id$ hashes in shadow(5) and htpasswd lines).
_CREDENTIALS = {
    "keyring": b"GnomeKeyring\n\r\x00\n\x00\x00" + SECRET.encode(),
    "keybox": b"\x00\x00\x00\x20\x01\x01\x00\x00KBXf" + SECRET.encode(),
    "pem": f"\n-----BEGIN OPENSSH PRIVATE KEY-----\n{SECRET}\n-----END OPENSSH PRIVATE KEY-----\n"
           .encode(),
    "shadow": f"root:$6$salt12345${SECRET}:19000:0:99999:7:::\n"
              f"svc:$y$j9T$abcdefgh${SECRET}:19000::::::\n".encode(),
    "htpasswd": f"admin:$apr1$abcdefgh${SECRET}\n".encode(),
}


@pytest.mark.parametrize("kind", sorted(_CREDENTIALS))
@pytest.mark.parametrize("how", ["cat", "tail", "read_file", "grep"])
def test_a_credential_file_under_any_name_is_refused(tmp_path: Path, kind: str,
                                                      how: str) -> None:
    f = tmp_path / "backup.dat"
    f.write_bytes(_CREDENTIALS[kind])
    host = _live(tmp_path)
    if how == "read_file":
        r = anyio.run(Sandbox(host, task_id="t").call, "read_file", {"path": str(f)})
    elif how == "grep":
        r = call(host, ["grep", "-e", ".", str(f)])
    else:
        r = call(host, [how, str(f)])
    assert not r.ok and "credential" in r.error, (r.data, r.error)
    assert SECRET not in str(r.data) + r.error
