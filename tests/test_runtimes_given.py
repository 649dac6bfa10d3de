"""The directories the user pointed agentkit at (``_hostmodel/runtimes/_given.py``).

Expected, written before running (README, ``agentkit snapshot --manifests``): a snapshot taken
with ``--manifests DIR`` records DIR and copies it, so reading that snapshot later looks in DIR
again without the flag being given a second time; a directory given now is looked in too; a
directory named both ways is looked in once. A live host has no recorded directories.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agentkit import Host
from agentkit._hostmodel.runtimes._given import manifest_dirs
from agentkit._sandbox._context import RecipeContext
from agentkit._sandbox._sandbox import Sandbox
from agentkit._types import TaskSpec

from .runtimes_snap import snapshot


def _dirs(host: Host) -> tuple[str, ...]:
    ctx = RecipeContext(Sandbox(host, task_id="t"), TaskSpec(id="t", title="t", objective="o"))
    return manifest_dirs(ctx)


@pytest.mark.parametrize(("recorded", "given", "expected"), [
    (["/data/k8s"], (), ("/data/k8s",)),  # the snapshot's own, without the flag again
    ([], ("/srv/more",), ("/srv/more",)),
    (["/data/k8s", "/data/compose"], ("/srv/more", "/data/k8s"),
     ("/srv/more", "/data/k8s", "/data/compose")),  # named twice: looked in once
    ([], (), ()),
])
def test_recorded_and_given_directories(tmp_path: Path, recorded: list[str],
                                        given: tuple[str, ...],
                                        expected: tuple[str, ...]) -> None:
    root = snapshot(tmp_path, {}, manifest_dirs=recorded).root.path
    assert _dirs(Host.at(root, manifest_dirs=given)) == expected


def test_a_live_host_has_only_the_given_directories() -> None:
    assert _dirs(Host.at("/", manifest_dirs=("/srv/more",))) == ("/srv/more",)
