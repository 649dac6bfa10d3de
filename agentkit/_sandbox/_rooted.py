"""Commands on a snapshot, rooted in the snapshot's own files: a file reader's operands
resolved inside the root through the path guard. (``kubectl kustomize DIR``, the one kubectl
verb the sandbox runs, builds from a redacted copy on any root: _kustomize.py.)"""

from __future__ import annotations

import os

from ._captures import find_command
from ._paths import PathRefused, read_bytes
from ._programs import Checked
from ._tool import ToolContext, ToolError

# Programs that only read the files they are given: on a snapshot they run on the snapshot's
# files, so an investigation that reads with `cat` or `grep` works there as on the live host.
FILE_READERS = frozenset({"cat", "head", "tail", "wc", "grep", "sha256sum", "md5sum"})


def is_kustomize(checked: Checked) -> bool:
    return checked.argv[:2] == ["kubectl", "kustomize"]


def program_of(checked: Checked) -> str:
    """The name the kernel layer's needs are looked up by: kustomize reads files only."""
    return "kustomize" if is_kustomize(checked) else checked.argv[0]


def is_captured(ctx: ToolContext, argv: list[str]) -> bool:
    """Whether a snapshot holds this command's captured output (which then answers it)."""
    manifest = ctx.host.snapshot
    return not ctx.host.is_live and manifest is not None and \
        find_command(manifest, argv) is not None


def on_snapshot(ctx: ToolContext, argv: list[str], checked: Checked) -> Checked | None:
    """The command rooted in the snapshot, or None where its captured output answers (or,
    not captured, the error saying so)."""
    if is_captured(ctx, argv) or checked.argv[0] not in FILE_READERS or not checked.paths:
        return None
    return _into_root(ctx, checked)  # a file reader runs on the snapshot's files


def _into_root(ctx: ToolContext, checked: Checked) -> Checked:
    """The same command with each path operand resolved inside the root (through the path
    guard: links followed in-root, policy applied) and given as the real file's path.
    Operands must be regular files, so a recursive flag has nothing to recurse into."""
    mapped: dict[str, str] = {}
    for operand in checked.paths:
        host_path = operand if operand.startswith("/") else "/" + operand
        try:
            _, _, canonical = read_bytes(ctx.host.root, host_path, 0)
        except PathRefused as exc:
            raise ToolError(f"refused: {exc}") from None
        mapped[operand] = os.path.join(ctx.host.root.path, canonical.lstrip("/"))
    argv = [checked.argv[0], *(mapped.get(a, a) for a in checked.argv[1:])]
    return Checked(argv, paths=[], env=checked.env, shown_as={v: k for k, v in mapped.items()})
