"""Building the host model: the model servers every runtime shows (systemd units, containers,
Kubernetes workloads, plain processes), merged where two runtimes show the same server, their
NCCL settings resolved, and which one serves the current deployment.

Everything is read through the task's sandbox tools (so it is cited, cached across the run's
tasks and replayable); nothing here touches the host directly.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._model import HostModel
from ._nccl import resolve_nccl
from ._select import select_current
from .runtimes import RUNTIMES

if TYPE_CHECKING:
    from .._sandbox._context import RecipeContext


async def build_host_model(ctx: RecipeContext) -> HostModel:
    """The model servers on the host and which one is current (or why that is ambiguous)."""
    model = HostModel()
    for runtime in RUNTIMES:
        model.servers += await runtime.discover(ctx, model)
    for s in model.servers:
        await resolve_nccl(ctx, s)
    select_current(model, str(ctx.spec.inputs.get("question", "")))
    return model
