"""Exceptions shared across layers."""

from __future__ import annotations


class RunAborted(Exception):
    """Stops the whole run instead of failing one task (e.g. a replay that diverged).

    Tools, subagents and the orchestrator let it through where they would otherwise turn an
    exception into a failed call or a failed task.
    """


class TaskIncomplete(Exception):
    """Stops one task, not the run: what it needs next does not exist (a replayed call past
    the end of an interrupted trace). Tools let it through, so a recipe cannot mistake it
    for an optional read that found nothing."""
