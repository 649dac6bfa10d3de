"""Where model servers run: each runtime finds its servers and describes them the same way
(argv, environment with the source of each setting, state, model, GPUs)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from . import _compose, _containers, _kubernetes, _processes, _quadlet, _systemd

if TYPE_CHECKING:
    from ..._sandbox._context import RecipeContext
    from .._model import HostModel, Server


class Runtime(Protocol):
    async def discover(self, ctx: RecipeContext, model: HostModel) -> list[Server]: ...


# Compose files after the containers they may describe; processes last: a process started
# by a unit or container found before is attached to it.
RUNTIMES: tuple[Runtime, ...] = (_systemd, _quadlet, _containers, _compose, _kubernetes,
                                 _processes)
