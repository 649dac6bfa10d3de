"""Recipe function: where NCCL tuning went when it does not reach the serving process."""

from __future__ import annotations

from typing import Any

from .._hostmodel import Server
from .._hostmodel._misplaced import misplaced_nccl
from ._recipe import RecipeContext, recipe_function


@recipe_function("nccl_elsewhere")
async def nccl_elsewhere(ctx: RecipeContext) -> list[dict[str, Any]]:
    """NCCL settings put where they never reach the serving process (/etc/environment, the
    profile and bashrc files, ExecStartPre=, a start script's unexported variable), each
    with why; looked for only when some tuning is missing. Needs: nccl_settings."""
    ctx.need("nccl_settings", "nccl_settings")
    server: Server = ctx.vars["server"]
    missing = (not server.tuning or bool(ctx.facts["nccl_not_carried"].value)
               or bool(server.shell_only) or bool(ctx.facts["nccl_unknown"].value))
    rows = await misplaced_nccl(ctx, server) if missing else []
    ctx.fact("nccl_elsewhere", rows, [r["evidence_id"] for r in rows if r["evidence_id"]])
    return rows
