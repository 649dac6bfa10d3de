"""Regressions for red team round 2's holes (docs/security.md, "Independent red team"), each
through the real sandbox and real git. What git does is from git-config(1), git-diff(1) and
git-log(1): lines of a config end at LF only; --no-prefix and friends change the diff
headers; -L takes /regex/ ranges."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import anyio
import pytest

from agentkit import Host, Sandbox
from agentkit._sandbox._paths import Root

from ..test_commands_edges import _repo, call

VALUE = "Ev7Qx2Lm9Rt4Wz8Kp3Nb6Hd1"  # under a name no generic rule knows: only dotenv rules
GIT_ENV = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo,
                   check=True, env=GIT_ENV, capture_output=True)


@pytest.fixture
def env_repo(tmp_path: Path) -> tuple[Host, Path]:
    repo = _repo(tmp_path / "repo")
    (repo / "app.env").write_text(f"STRIPE={VALUE}\n")
    _git(repo, "add", "app.env")
    _git(repo, "commit", "-q", "-m", "env")
    return Host(root=Root("/", allow=(str(tmp_path),)), command_timeout_s=10.0), repo


@pytest.mark.parametrize("sep", ["\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029", "\x0b",
                                 "\x0c", "\r"])
@pytest.mark.parametrize("comment", ["#", ";"])
def test_a_config_line_git_reads_as_one_line_is_vetted_as_one(
        tmp_path: Path, sep: str, comment: str) -> None:
    # To git, "# <sep>[advice]" is one comment line and `clean` below is filter.x.clean, a
    # program git runs; str.splitlines() saw a section [advice] and an inert advice.clean.
    repo = _repo(tmp_path / "repo")
    (repo / ".gitattributes").write_text("* filter=x\n")
    (repo / "a").write_text("1\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "x")
    (repo / "a").write_text("2\n")
    marker = tmp_path / "ran"
    with (repo / ".git" / "config").open("a") as f:
        f.write(f'[filter "x"]\n{comment} {sep}[advice]\n\tclean = "touch {marker}; cat"\n')
    host = Host(root=Root("/", allow=(str(tmp_path),)), sandbox="allowlist",
                command_timeout_s=10.0)
    r = call(host, ["git", "-C", str(repo), "ls-files", "-m"])
    assert not r.ok and r.error.startswith("refused: "), r.data
    assert not marker.exists()


@pytest.mark.parametrize("args", [
    ["log", "-p", "--no-prefix"], ["log", "-p", "--src-prefix=x/", "--dst-prefix=y/"],
    ["log", "-p", "--src-prefix=", "--dst-prefix="], ["log", "-p", "--line-prefix=|"],
    ["log", "--cc"], ["log", "-p", "--diff-merges=combined"], ["show", "--cc", "HEAD"],
])
def test_options_that_rewrite_diff_headers_are_refused(env_repo: tuple[Host, Path],
                                                       args: list[str]) -> None:
    host, repo = env_repo
    r = call(host, ["git", "-C", str(repo), *args])
    # refused as every option that shapes output is (issue 28: one fixed format)
    assert not r.ok and "not allowed" in r.error, (r.error, r.data)


def test_a_blob_shown_by_its_id_is_redacted_as_a_dotenv_file(env_repo: tuple[Host, Path]
                                                             ) -> None:
    host, repo = env_repo
    blob = subprocess.run(["git", "rev-parse", "HEAD:app.env"], cwd=repo, env=GIT_ENV,
                          capture_output=True, text=True, check=True).stdout.strip()
    r = call(host, ["git", "-C", str(repo), "show", blob])
    assert r.ok and "STRIPE=" in r.data["stdout"] and VALUE not in r.data["stdout"], r.data


@pytest.mark.parametrize("spec", ["/^STRIPE=Ev7/,+1:app.env", ":STRIPE:app.env",
                                  "1,/Ev7/:app.env"])
def test_a_regex_line_range_is_refused_as_the_pickaxe_is(env_repo: tuple[Host, Path],
                                                         spec: str) -> None:
    host, repo = env_repo
    for argv in (["log", "-L", spec], ["log", f"-L{spec}"]):
        r = call(host, ["git", "-C", str(repo), *argv])
        assert not r.ok and "-L" in r.error, r.data
    # line ranges are not offered at all since issue 28; the file's history is log -p
    ok = call(host, ["git", "-C", str(repo), "log", "-p", "--", "app.env"])
    assert ok.ok and VALUE not in ok.data["stdout"], ok.error


@pytest.mark.parametrize("name", [".env.production", ".env.local", ".envrc", "app.env.bak"])
def test_dotenv_files_by_dotenv_names_get_the_dotenv_rule(tmp_path: Path, name: str) -> None:
    f = tmp_path / name
    f.write_text(f"STRIPE={VALUE}\n")
    host = Host(root=Root("/", allow=(str(tmp_path),)), command_timeout_s=10.0)
    for argv in (["cat", str(f)], ["tail", "-c", "+1", str(f)]):
        r = call(host, argv)
        assert r.ok and VALUE not in r.data["stdout"], (argv, r.data)
    parsed = _parse(host, str(f))
    assert VALUE not in str(parsed)


@pytest.mark.parametrize("text", [
    '{"p\\u0061ssword": "%s"}\n', '"p\\x61ssword": "%s"\n', '"p\\u0061ssword" = "%s"\n',
])
def test_a_key_spelled_with_escapes_still_hides_its_value(tmp_path: Path, text: str) -> None:
    # JSON, YAML and TOML decode the escapes: the parser sees `password`, and so must the
    # redaction of what it returns (values and the evidence line)
    suffix = {"{": ".json", '"p\\x61': ".yaml", '"p\\u0061ssword" =': ".toml"}
    ext = next(v for k, v in suffix.items() if text.startswith(k))
    f = tmp_path / f"c{ext}"
    f.write_text(text % VALUE)
    host = Host(root=Root("/", allow=(str(tmp_path),)))
    parsed = _parse(host, str(f))
    assert "password" in str(parsed) and VALUE not in str(parsed), parsed


def _parse(host: Host, path: str) -> object:
    box = Sandbox(host, task_id="t")
    r = anyio.run(box.call, "parse_config", {"path": path})
    assert r.ok, r.error
    return [r.data, [e.model_dump() for e in r.evidence]]


# ---- the second pass over round 2's findings ---------------------------------------------


@pytest.mark.parametrize("args", [["log", "--grep=STRIPE=Ev7"], ["log", "--gre=STRIPE"],
                                  ["rev-parse", ":/STRIPE=Ev7"], ["show", "HEAD^{/Ev7}"]])
def test_commit_message_searches_are_refused_as_oracles(env_repo: tuple[Host, Path],
                                                        args: list[str]) -> None:
    # git-log(1) --grep and gitrevisions(7) :/<text>, ^{/<text>} select commits by a regex
    # over messages: a yes/no answer per guess about text the output redaction hides
    host, repo = env_repo
    r = call(host, ["git", "-C", str(repo), *args])
    assert not r.ok and "refused" in r.error, r.data
    ok = call(host, ["git", "-C", str(repo), "log", "--oneline", "--", ":/"])
    assert ok.ok, ok.error  # ':/' after `--` is a pathspec (the top), not a search


def test_a_hard_linked_object_in_the_store_refuses_the_repository(
        env_repo: tuple[Host, Path], tmp_path: Path) -> None:
    host, repo = env_repo
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x").write_text("an object of another repository\n")
    objects = repo / ".git" / "objects" / "ab"
    objects.mkdir(exist_ok=True)
    os.link(outside / "x", objects / ("c" * 38))
    r = call(host, ["git", "-C", str(repo), "log", "--oneline"])
    assert not r.ok and "hard links" in r.error, r.data


def test_a_file_with_other_hard_links_is_read_strictly(tmp_path: Path) -> None:
    # a hard link is another name of the same file, which may be a credential in a home
    # the kernel layer does not know: its credential-looking words are withheld
    home2 = tmp_path / "home2"
    home2.mkdir()
    (home2 / ".vault-token").write_text("RTHOMETWO12345678\n")
    allowed = tmp_path / "srv"
    allowed.mkdir()
    os.link(home2 / ".vault-token", allowed / "notes.txt")
    host = Host(root=Root("/", allow=(str(allowed),)), command_timeout_s=10.0)
    box = Sandbox(host, task_id="t")
    read = anyio.run(box.call, "read_file", {"path": str(allowed / "notes.txt")})
    assert read.ok and "RTHOMETWO" not in read.data["text"], read.data
    notes = str(allowed / "notes.txt")
    for argv in (["cat", notes], ["tail", "-c", "12", notes]):
        r = call(host, argv)
        assert r.ok and "RTHOMETWO" not in r.data["stdout"] and "12345678" not in r.data["stdout"]


def test_a_utf16_file_is_redacted_as_text(tmp_path: Path) -> None:
    f = tmp_path / "app.conf"
    f.write_bytes(f"API_KEY={VALUE}\n".encode("utf-16-le"))
    host = Host(root=Root("/", allow=(str(tmp_path),)), command_timeout_s=10.0)
    for argv in (["cat", str(f)], ["sed", "-n", "1p", str(f)]):
        r = call(host, argv)
        out = r.data["stdout"].replace("\x00", "")
        assert r.ok and "API_KEY=" in out and VALUE[:12] not in out, r.data


def test_one_command_redacts_at_most_one_whole_copy(tmp_path: Path) -> None:
    big = tmp_path / "big.log"
    big.write_text("line of log\n" * (400 << 10))  # 4.7 MiB
    os.link(big, tmp_path / "big2.log")  # the same bytes under a second name, redacted twice
    host = Host(root=Root("/", allow=(str(tmp_path),)), command_timeout_s=30.0)
    assert call(host, ["cat", str(big)]).ok
    r = call(host, ["cat", str(big), str(tmp_path / "big2.log")])
    assert not r.ok and "MiB" in r.error, r.data
