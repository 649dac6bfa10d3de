"""The host under investigation: a root directory standing for ``/``, and how to reach it.

One ``Host`` is shared read-only by every subagent of a run; each subagent gets its own
sandbox on top of it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from ._captures import Manifest, load_manifest
from ._kernel import SETTINGS, Setting
from ._paths import Root

# Only binaries from these directories ever run: a planted ./git or a PATH entry cannot.
TRUSTED_BIN_DIRS = ("/usr/bin", "/bin", "/usr/sbin", "/sbin")


@dataclass
class Host:
    """Where ``/`` is, and the limits for touching it.

    >>> Host.at("/").is_live  # a snapshot directory instead: False, commands are captured
    True
    """

    root: Root
    trusted_bin_dirs: tuple[str, ...] = TRUSTED_BIN_DIRS
    command_timeout_s: float = 20.0
    output_limit: int = 256 * 1024
    read_limit: int = 512 * 1024
    # host paths of directories with Kubernetes manifests or Compose files, read besides the
    # usual places (a deployment repository checked out anywhere)
    manifest_dirs: tuple[str, ...] = ()
    nvml_reader: Callable[[], dict[str, Any]] | None = field(default=None, repr=False)
    # Commands under the kernel sandbox (bubblewrap): "auto" uses it where it works and warns
    # once where it does not, "kernel" refuses commands without it, "allowlist" never uses it.
    sandbox: Setting = field(
        default_factory=lambda: sandbox_setting(os.environ.get("AGENTKIT_SANDBOX")))

    @classmethod
    def at(cls, root: str | os.PathLike[str] = "/", **kwargs: Any) -> Host:
        path = os.path.abspath(os.fspath(root))
        if not os.path.isdir(path):
            raise FileNotFoundError(
                f"--root {os.fspath(root)!r} is not a directory: give the host's / or a "
                "snapshot made with `agentkit snapshot`"
            )
        return cls(root=Root(path), **kwargs)

    @property
    def is_live(self) -> bool:
        """True when the root is the real ``/`` (commands run for real)."""
        return self.root.is_live

    @cached_property
    def snapshot(self) -> Manifest | None:
        return None if self.is_live else load_manifest(self.root)


def sandbox_setting(value: str | None) -> Setting:
    """The sandbox setting named by ``value`` (``AGENTKIT_SANDBOX``); unset is auto."""
    if not value:
        return "auto"
    for s in SETTINGS:
        if value == s:
            return s
    raise ValueError(f"AGENTKIT_SANDBOX={value!r} is not one of {', '.join(SETTINGS)}")
