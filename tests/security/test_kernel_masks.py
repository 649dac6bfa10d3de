"""Each credential path the kernel layer masks, held by the kernel layer alone.

The allowlist and the path guard refuse every one of these names too, so a mask removed from
`_kernel.py` went unnoticed (issue 26: a planted bug deleting `~/.ssh` from the masks survived
every test). Here every userspace check is off (`no_userspace`: any argv runs, paths taken as
given, no copies, no output redaction) and, for each mask, a secret is planted at that path
alone and read with `cat`: first with the kernel layer off, where the secret must show (so
the test can fail), then through bubblewrap, where it must not.

Two parametrizations: the masks as the code lists them (a new mask is tested the day it is
added) and a list written by hand from docs/security.md ("credential paths not mounted"), so
deleting a mask from the code fails the hand-written case for it.

Host-wide paths (/etc/shadow, /run/secrets, ...) cannot be planted on a real host without
root and without disturbing it: the system lists are moved under a scratch prefix in the
test's home (outside /tmp, which the sandbox empties anyway), the same relative paths, so
what is exercised is the mask each entry produces, not the host's own files. Expected facts,
from the semantics: a directory covered by an empty tmpfs holds no file, so `cat` of a file
in it fails; a file covered by a bind mount of /dev/null reads as empty.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentkit._sandbox import _kernel
from tests.security.test_kernel_layer import (  # noqa: F401  (no_userspace: a fixture)
    _attack_output,
    as_kernel_home,
    no_userspace,
)

pytestmark = [pytest.mark.skipif(
    _kernel._probe(_kernel.BWRAP) is not None,
    reason=f"the kernel layer cannot run here: {_kernel._probe(_kernel.BWRAP)}"),
    pytest.mark.usefixtures("no_userspace")]

# Plain words: output redaction (still on in the Sandbox) must not be what hides it.
SECRET = "planted by the mask test, seven lemons"

# Masks that are directories on a real host: the secret is a file inside. Every other mask
# is planted as the file itself.
DIRECTORIES = {
    ".ssh", ".aws", ".azure", ".config/gcloud", ".docker", ".kube", ".config/gh", ".gnupg",
    ".config/rclone", ".password-store", ".local/share/keyrings", "/etc/ssl/private",
    "/etc/kubernetes/pki", "/run/secrets", "/var/run/secrets",
    "/var/lib/kubelet/pods/*/volumes/kubernetes.io~secret", "/var/lib/kubelet/pki",
    "/var/lib/docker/containers", "/var/lib/docker/swarm", "/etc/wireguard",
    "/etc/NetworkManager/system-connections", "/var/lib/containers",
}

# Written from docs/security.md, "credential paths not mounted", not from the code.
DOCUMENTED_HOME = [
    ".ssh", ".aws", ".azure", ".config/gcloud", ".docker", ".kube", ".netrc", ".pgpass",
    ".vault-token", ".git-credentials", ".cache/huggingface/token", ".huggingface/token",
    ".gnupg", ".npmrc", ".pypirc", ".bash_history", ".zsh_history",
]
DOCUMENTED_SYSTEM = [
    "/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-",
    "/etc/ssh/ssh_host_ed25519_key", "/etc/ssh/ssh_host_rsa_key", "/etc/ssl/private",
    "/etc/kubernetes/pki", "/etc/kubernetes/admin.conf",
    "/var/lib/kubelet/pods/0f3c/volumes/kubernetes.io~secret", "/run/secrets",
    "/var/lib/docker/containers", "/etc/wireguard", "/etc/NetworkManager/system-connections",
]

CODE_HOME = list(_kernel._HOME_SECRETS)
CODE_SYSTEM = [*_kernel._SYSTEM_SECRETS, *_kernel._KUBECONFIGS, *_kernel._PODMAN_STORAGE]


@pytest.fixture
def planted(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A scratch directory outside /tmp: ``home/`` is the only home the kernel layer knows,
    ``sys/`` stands for ``/`` under every host-wide mask."""
    base = Path.home() / f".agentkit-masks-{uuid.uuid4().hex[:8]}"
    (base / "home").mkdir(parents=True)
    for name in ("_SYSTEM_SECRETS", "_KUBECONFIGS", "_PODMAN_STORAGE"):
        moved = tuple(f"{base}/sys{p}" for p in getattr(_kernel, name))
        monkeypatch.setattr(_kernel, name, moved)
    with as_kernel_home(monkeypatch, base / "home", base):
        yield base


def _plant(at: Path, is_dir: bool) -> Path:
    """The secret at ``at`` (a file), or in a file inside it (a directory); the file read."""
    target = at / "credentials" if is_dir else at
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(f"{SECRET}\n")
    return target


def _is_dir(mask: str) -> bool:
    return mask.replace("0f3c", "*") in DIRECTORIES


def _held(target: Path, argv: list[str] | None = None) -> None:
    argv = argv or ["cat", str(target)]
    assert SECRET in _attack_output(False, argv), "planted where cat cannot read it"
    assert SECRET not in _attack_output(True, argv)


@pytest.mark.parametrize("mask", CODE_HOME, ids=CODE_HOME)
def test_every_home_mask_in_the_code_holds_alone(planted: Path,
                                                 mask: str) -> None:
    _held(_plant(planted / "home" / mask, _is_dir(mask)))


@pytest.mark.parametrize("mask", CODE_SYSTEM, ids=CODE_SYSTEM)
def test_every_host_wide_mask_in_the_code_holds_alone(planted: Path,
                                                      mask: str) -> None:
    concrete = mask.replace("*", "ed25519_" if "ssh_host" in mask else "0f3c")
    _held(_plant(Path(f"{planted}/sys{concrete}"), _is_dir(mask)))


@pytest.mark.parametrize("mask", DOCUMENTED_HOME, ids=DOCUMENTED_HOME)
def test_every_documented_home_credential_is_masked(planted: Path,
                                                    mask: str) -> None:
    _held(_plant(planted / "home" / mask, _is_dir(mask)))


@pytest.mark.parametrize("path", DOCUMENTED_SYSTEM, ids=DOCUMENTED_SYSTEM)
def test_every_documented_host_wide_credential_is_masked(planted: Path,
                                                         path: str) -> None:
    _held(_plant(Path(f"{planted}/sys{path}"), _is_dir(path)))


@pytest.mark.parametrize("scratch", ["/tmp", "/var/tmp", "/run/user", "/dev/shm"])
def test_scratch_directories_are_empty_inside(scratch: str) -> None:
    # Not masks but emptied (a tmpfs, or a fresh /dev): another user's files left there.
    # A command's own operands there are mounted back, so the file is named inside a shell
    # script, which no userspace check (all off here) looks into.
    if not Path(scratch).is_dir():
        pytest.skip(f"{scratch} does not exist here")
    target = Path(scratch) / f"agentkit-scratch-{uuid.uuid4().hex[:8]}"
    try:
        try:
            target.write_text(f"{SECRET}\n")
        except PermissionError:
            pytest.skip(f"{scratch} is not writable by this user")
        _held(target, ["sh", "-c", f"cat {target}"])
    finally:
        target.unlink(missing_ok=True)
