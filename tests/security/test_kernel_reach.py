"""What the kernel layer gives each program, and how it finds what to hide, seen from inside
real bubblewrap sandboxes (issue 26, item 7: the mutants of `_kernel.py` these kill lived
through every other test).

Expected facts, from bwrap(1), unix(7) and the documents, written before running:

* a command's own operands in an emptied directory (/tmp …) are mounted back for it, whatever
  the program (docs/security.md: "the command's own operands there are mounted back");
* only ``nvidia-smi`` gets the NVIDIA device nodes: ``--dev /dev`` builds a minimal /dev
  without them, ``--dev-bind`` brings one node back;
* a daemon's socket covered by /dev/null: connect(2) on a path that is not a listening socket
  fails with ECONNREFUSED (unix(7)), and the command itself still runs;
* a snapshot sandbox holds /usr and its merged-usr links, the alternatives links, the loader
  cache, passwd/group (and the zone file), and nothing else of the host: no /tmp, /var, /run;
* homes are passwd's and every /home/* directory; a credential path found after the mask
  lists were made is masked once they are made again (every 30 s), sockets and hard-link
  inodes likewise;
* a credential link that dangles, or that names ``/``, is no mask: commands still run;
* a credential directory is walked without following links, nested files included, and a
  deep or huge one costs a bounded walk, not a failure.
"""

from __future__ import annotations

import logging
import os
import re
import subprocess
import types
import uuid
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from agentkit import Host
from agentkit._sandbox import _kernel
from agentkit._sandbox._paths import Root
from tests.security.test_kernel_flags import inside
from tests.security.test_kernel_layer import _attack_output, call, daemon_socket
from tests.security.test_kernel_layer import no_userspace as no_userspace  # the fixture

pytestmark = pytest.mark.skipif(
    _kernel._probe(_kernel.BWRAP) is not None,
    reason=f"the kernel layer cannot run here: {_kernel._probe(_kernel.BWRAP)}")

SECRET = "planted by the reach test, eleven plums"
PROGRAMS = ["kubectl", "podman", "ps", "nvidia-smi", "docker", "systemctl", "crictl", "cat"]


def _fresh() -> None:
    for cached in (_kernel._existing_secrets, _kernel._inodes, _kernel._sockets):
        cached.cache_clear()


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An empty home outside /tmp, the only one the kernel layer knows."""
    path = Path.home() / f".agentkit-reach-{uuid.uuid4().hex[:8]}"
    path.mkdir()
    monkeypatch.setattr(_kernel, "_homes", lambda: [str(path)])
    _fresh()
    try:
        yield path
    finally:
        _fresh()
        subprocess.run(["rm", "-rf", str(path)], check=True)


# -- what each program is given ----------------------------------------------------------

@pytest.mark.parametrize("program", PROGRAMS)
def test_every_program_gets_its_own_operands_back(program: str, tmp_path: Path) -> None:
    given_file = tmp_path / "operand.txt"  # under /tmp, which the sandbox empties
    given_file.write_text(f"{SECRET}\n")
    seen = inside(f"cat {given_file}", _kernel.needs_of(program, [str(given_file)], live=True))
    assert SECRET in seen
    # on a snapshot every operand is mounted, wherever it lies
    outside = Path.home() / f".agentkit-operand-{uuid.uuid4().hex[:8]}"
    outside.write_text(f"{SECRET}\n")
    try:
        needs = _kernel.needs_of(program, [str(outside)], live=False)
        assert SECRET in inside(f"cat {outside}", needs, live=False)
    finally:
        outside.unlink()


def test_only_nvidia_smi_gets_the_nvidia_device_nodes() -> None:
    node = f"/dev/nvidia-agentkit-test-{uuid.uuid4().hex[:8]}"  # never nvidia<N>
    try:
        os.mknod(node, 0o666 | 0o020000, os.makedev(1, 3))  # a char device: /dev/null's
    except OSError as exc:
        pytest.skip(f"cannot make a device node here: {exc.strerror}")
    try:
        probe = f"test -c {node} && head -c 1 {node} && echo usable"
        assert "usable" in inside(probe, _kernel.needs_of("nvidia-smi", [], live=True))
        assert "usable" not in inside(probe, _kernel.needs_of("cat", [], live=True))
    finally:
        os.unlink(node)


def _connect(path: str) -> str:
    code = ("import socket; s = socket.socket(socket.AF_UNIX)\n"
            f"try:\n s.connect({path!r}); print('connected')\n"
            "except OSError as e: print(type(e).__name__)")
    return inside(f"/usr/bin/python3 -c \"{code}\"")


def test_a_covered_daemon_socket_refuses_and_the_command_still_runs() -> None:
    with daemon_socket() as path:
        _kernel._sockets.cache_clear()
        assert "ConnectionRefusedError" in _connect(path)


def test_a_socket_or_credential_gone_since_the_lists_were_made_breaks_nothing(
        home: Path) -> None:
    # The lists are kept 30 s; a containerd shim's socket or a credential removed in that
    # time has nothing left to hide, and no mount point on the read-only root: bwrap refused
    # every command until the lists were made again.
    (home / ".netrc").write_text(f"{SECRET}\n")
    (home / ".aws").mkdir()
    with daemon_socket() as sock:
        _kernel._sockets.cache_clear()
        assert "ConnectionRefusedError" in _connect(sock)  # the lists hold it
        assert sock in _kernel.daemon_sockets()
        os.unlink(sock)
        (home / ".netrc").unlink()
        (home / ".aws").rmdir()
        assert inside("echo ran").strip() == "ran"


# -- a snapshot sandbox -----------------------------------------------------------------

SYSTEM_TOPS = ("/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32")
SYSTEM_FILES = ("/etc/alternatives", "/etc/ld.so.cache", "/etc/passwd", "/etc/group",
                "/etc/localtime")


def test_a_snapshot_sandbox_holds_the_system_and_nothing_else() -> None:
    top = set(inside("ls -A /", live=False).split())
    assert top <= {t.lstrip("/") for t in SYSTEM_TOPS} | {"etc", "proc", "dev"}, top
    for path in SYSTEM_TOPS:
        if os.path.islink(path):  # merged-usr: the same link inside
            assert inside(f"readlink {path}", live=False).strip() == os.readlink(path)
        elif os.path.isdir(path):
            assert inside(f"test -d {path} && echo dir", live=False).strip() == "dir", path
    for path in SYSTEM_FILES:
        if os.path.lexists(path):
            assert inside(f"test -e {path} && echo there", live=False).strip() == "there", path


# -- where credentials are looked for ----------------------------------------------------

NAMES = ["a", "ab", "a-b", "X", "x", "Xa", "X-y"]  # siblings sharing a prefix; a trailing X


@given(d=st.lists(st.sampled_from(NAMES), max_size=3),
       p=st.lists(st.sampled_from(NAMES), max_size=4))
@example(d=["a", "X"], p=["a", "b"])
def test_within_any_is_component_wise(d: list[str], p: list[str]) -> None:
    # resolved paths, as every caller passes (realpath, or the fixed lists): "/" included
    top, path = "/" + "/".join(d), "/" + "/".join(p)
    expect = PurePosixPath(path) == PurePosixPath(top) or PurePosixPath(top) in PurePosixPath(
        path).parents
    assert _kernel.within_any(path, [top]) == expect


def test_credentials_found_later_are_masked_after_the_lists_refresh(
        home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [1000.0]
    monkeypatch.setattr(_kernel, "time", types.SimpleNamespace(monotonic=lambda: clock[0]))
    _fresh()
    assert inside("echo ran").strip() == "ran"  # the lists are made, without what follows
    host = Host(root=Root("/", allow=(str(tmp_path),)), sandbox="kernel")
    (tmp_path / "notes.txt").write_text("an ordinary file\n")
    assert call(host, ["cat", str(tmp_path / "notes.txt")]).ok
    (home / ".netrc").write_text(f"{SECRET}\n")
    os.link(home / ".netrc", tmp_path / "innocent.txt")
    with daemon_socket() as sock:
        clock[0] += _kernel._MASK_TTL_S + 1
        assert SECRET not in inside(f"cat {home}/.netrc")
        assert "ConnectionRefusedError" in _connect(sock)
        r = call(host, ["cat", str(tmp_path / "innocent.txt")])
        assert not r.ok and "hard link" in r.error


def test_homes_are_passwd_and_every_directory_in_home(no_userspace: None) -> None:
    # A home no passwd entry names (an NFS or LDAP user): still masked. No monkeypatching of
    # the home list: the kernel layer's own look at the host.
    home = Path(f"/home/agentkit-reach-{uuid.uuid4().hex[:8]}")
    try:
        home.mkdir()
    except OSError as exc:
        pytest.skip(f"cannot make a directory in /home here: {exc.strerror}")
    try:
        (home / ".netrc").write_text(f"{SECRET}\n")
        _fresh()
        argv = ["cat", str(home / ".netrc")]
        assert SECRET in _attack_output(False, argv)
        assert SECRET not in _attack_output(True, argv)
    finally:
        subprocess.run(["rm", "-rf", str(home)], check=True)
        _fresh()


@pytest.mark.parametrize("target", ["/nonexistent-agentkit-target", "/"])
def test_a_credential_link_that_dangles_or_names_the_root_is_no_mask(home: Path,
                                                                     target: str) -> None:
    (home / ".ssh").symlink_to(target)
    (home / ".netrc").write_text(f"{SECRET}\n")
    out = inside(f"echo ran; cat /etc/hostname; cat {home}/.netrc")
    assert out.startswith("ran\n") and Path("/etc/hostname").read_text() in out
    assert SECRET not in out  # the other masks still stand


def test_a_home_under_tmp_whose_credential_links_out_is_masked(
        monkeypatch: pytest.MonkeyPatch, no_userspace: None) -> None:
    # /tmp is emptied, so the home's own names need no mask; the link's target outside /tmp
    # does (a mount lands on a link's target: docs/security.md, masking by resolved path)
    keys = Path.home() / f".agentkit-keys-{uuid.uuid4().hex[:8]}"
    scratch_home = Path(f"/tmp/agentkit-reach-home-{uuid.uuid4().hex[:8]}")
    keys.mkdir()
    scratch_home.mkdir()
    try:
        (keys / "id_ed25519").write_text(f"{SECRET}\n")
        (scratch_home / ".ssh").symlink_to(keys)
        monkeypatch.setattr(_kernel, "_homes", lambda: [str(scratch_home)])
        _fresh()
        argv = ["cat", str(keys / "id_ed25519")]
        assert SECRET in _attack_output(False, argv)
        assert SECRET not in _attack_output(True, argv)
    finally:
        subprocess.run(["rm", "-rf", str(keys), str(scratch_home)], check=True)
        _fresh()


# -- how a credential directory is walked (hard links are compared by inode) -------------

def _refused(allowed: Path, name: str) -> bool:
    host = Host(root=Root("/", allow=(str(allowed),)), sandbox="kernel")
    r = call(host, ["cat", str(allowed / name)])
    assert r.ok or "hard link" in r.error, r.error
    return not r.ok


def test_a_nested_credential_file_is_refused_under_another_name(home: Path,
                                                                tmp_path: Path) -> None:
    adc = home / ".config/gcloud/legacy_credentials/someone@example.com/adc.json"
    adc.parent.mkdir(parents=True)
    adc.write_text('{"private_key": "x"}\n')
    os.link(adc, tmp_path / "innocent.json")
    assert _refused(tmp_path, "innocent.json")


def test_a_link_in_a_credential_directory_is_not_followed(home: Path, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("an ordinary file\n")
    (home / ".aws").mkdir()
    (home / ".aws" / "elsewhere").symlink_to(tmp_path)
    assert not _refused(tmp_path, "notes.txt")


def test_a_deep_or_huge_credential_directory_costs_a_bounded_walk(home: Path,
                                                                  tmp_path: Path) -> None:
    deep = home / ".aws" / "a" / "b" / "c" / "d" / "e" / "f" / "g" / "h"
    deep.mkdir(parents=True)
    (deep / "credentials").write_text("deep\n")
    many = home / ".gnupg"
    many.mkdir()
    for i in range(5200):
        (many / f"k{i}").touch()
    (tmp_path / "notes.txt").write_text("an ordinary file\n")
    (home / ".aws" / "credentials").write_text("shallow\n")
    os.link(home / ".aws" / "credentials", tmp_path / "innocent.txt")
    assert not _refused(tmp_path, "notes.txt")
    assert _refused(tmp_path, "innocent.txt")


# -- the mode in force, in words ---------------------------------------------------------

def test_the_mode_and_its_reason(monkeypatch: pytest.MonkeyPatch,
                                 caplog: pytest.LogCaptureFixture) -> None:
    # README, "Security and speed" and the exit-code notes: the kernel mode means a read-only
    # root, no network, credential paths not mounted; without bubblewrap agentkit warns
    # `SANDBOX: commands run allowlist-only` once, points at `agentkit doctor`, and
    # AGENTKIT_SANDBOX=kernel refuses instead.
    off = _kernel.layer("allowlist")
    assert off.mode == "allowlist-only" and "off" in off.detail
    assert _kernel.in_force("allowlist") == "allowlist-only"
    on = _kernel.layer("auto")
    assert on.mode == "kernel" and _kernel.BWRAP in on.detail
    for words in ("read-only root", "no network", "credential paths not mounted"):
        assert re.search(rf"\b{words}\b", on.detail), words
    assert _kernel.in_force("kernel") == "kernel"
    missing = "/nonexistent/agentkit-bwrap"
    monkeypatch.setattr(_kernel, "BWRAP", missing)
    monkeypatch.setattr(_kernel, "_warned", set())
    with caplog.at_level(logging.WARNING, logger="agentkit.sandbox"):
        fallback = _kernel.layer("auto")
        assert _kernel.in_force("auto") == "allowlist-only"
    assert fallback.mode == "allowlist-only" and missing in fallback.detail
    [said] = [r.getMessage() for r in caplog.records]
    assert said.startswith("SANDBOX: commands run allowlist-only") and missing in said
    assert "agentkit doctor" in said and re.search(r"\bAGENTKIT_SANDBOX=kernel\b", said)
    with pytest.raises(_kernel.KernelUnavailable) as refused:
        _kernel.layer("kernel")
    assert missing in str(refused.value)
    assert re.search(r"\binstall bubblewrap\b", str(refused.value))
    assert re.search(r"\bAGENTKIT_SANDBOX=auto\b", str(refused.value))
    assert _kernel.in_force("kernel") == "refused"
