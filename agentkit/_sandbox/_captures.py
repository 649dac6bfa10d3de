"""Captured command and NVML outputs stored in a snapshot (``<root>/.agentkit/``).

A snapshot is a directory that stands for a host's ``/``: the files an investigation reads,
copied as they were, plus what a directory cannot hold (command output, NVML readings) under
``.agentkit/``, described by ``.agentkit/snapshot.json``::

    {"format": "agentkit-snapshot", "version": 1, "host": "gpu-07",
     "captured_at": "2026-11-20T14:02:11Z",
     "commands": [{"argv": ["nvidia-smi", "topo", "-m"],
                   "stdout": "commands/nvidia-smi-topo-m.txt", "exit_code": 0}],
     "nvml": "nvml.json"}
"""

from __future__ import annotations

import os
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .._bounded import loads_json
from ._paths import PathRefused, Root, read_bytes
from ._redact._decode import to_text

CAPTURE_DIR = ".agentkit"
MANIFEST = f"{CAPTURE_DIR}/snapshot.json"
_MAX_CAPTURE = 8 << 20


class CapturedCommand(BaseModel):
    # validated only inside a Manifest, whose schema holds this one's: not built alone
    model_config = ConfigDict(extra="forbid", defer_build=True)
    argv: list[str]
    stdout: str
    stderr: str | None = None
    exit_code: int = 0


class Manifest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    format: Literal["agentkit-snapshot"] = "agentkit-snapshot"
    version: int = 1
    host: str = ""
    captured_at: str = ""
    commands: list[CapturedCommand] = Field(default_factory=list)
    nvml: str | None = None
    processes: str | None = None  # serving processes (argv, filtered env, owner), JSON
    manifest_dirs: list[str] = Field(default_factory=list)  # given with --manifests


class SnapshotError(Exception):
    pass


def load_manifest(root: Root) -> Manifest | None:
    """The root's manifest, or None when the root is not a snapshot."""
    path = os.path.join(root.path, MANIFEST)
    if not os.path.lexists(path):
        return None
    # Through the path guard like any file (a manifest that is a link out of the root, a FIFO
    # or a device is refused), and errors never echo the content: it may not be a manifest.
    try:
        data, size, _ = read_bytes(Root(root.path), "/" + MANIFEST, _MAX_CAPTURE)
        if size > len(data):
            raise ValueError(f"larger than {_MAX_CAPTURE} bytes")
        return Manifest.model_validate(loads_json(data))
    except ValidationError as exc:
        where = "; ".join(".".join(str(p) for p in e["loc"]) or "(top)" for e in exc.errors())
        problem = f"{exc.error_count()} invalid field(s): {where}"
    except (OSError, ValueError, PathRefused) as exc:
        problem = str(exc) if isinstance(exc, PathRefused) else type(exc).__name__
    raise SnapshotError(
        f"{path} is not a valid snapshot manifest ({problem}). Recreate it with "
        "`agentkit snapshot`, or remove it to treat the directory as plain files.")


def read_capture(root: Root, rel: str) -> str:
    """Text of a capture file, relative to ``.agentkit/``, read through the path guard."""
    capture_root = Root(os.path.join(root.path, CAPTURE_DIR))
    try:
        data, _, _ = read_bytes(capture_root, "/" + rel, _MAX_CAPTURE)
    except PathRefused as exc:
        raise SnapshotError(f"snapshot capture {rel!r} unreadable: {exc}") from None
    return to_text(data)  # decoded (UTF-16/32, NULs, escapes) before it is redacted


def find_command(manifest: Manifest, argv: list[str]) -> CapturedCommand | None:
    for cmd in manifest.commands:
        if cmd.argv == argv:
            return cmd
    return None


def load_nvml(root: Root, manifest: Manifest) -> dict[str, Any] | None:
    if not manifest.nvml:
        return None
    try:
        data = loads_json(read_capture(root, manifest.nvml))
    except ValueError as exc:
        raise SnapshotError(f"snapshot NVML capture {manifest.nvml!r} is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise SnapshotError(f"snapshot NVML capture {manifest.nvml!r} must be a JSON object")
    return data
