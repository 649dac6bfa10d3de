"""What the user pointed agentkit at, beyond the usual places."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..._sandbox._context import RecipeContext


def manifest_dirs(ctx: RecipeContext) -> tuple[str, ...]:
    """Directories of Kubernetes manifests or Compose files given with ``--manifests`` (or
    recorded in the snapshot that was taken with them)."""
    host = ctx.box.host
    snap = host.snapshot
    return tuple(dict.fromkeys([*host.manifest_dirs, *(snap.manifest_dirs if snap else [])]))
