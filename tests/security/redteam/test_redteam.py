"""The red team's quick subset under the kernel layer: no attempt may succeed.

A success is a planted secret or canary in a tool's output, trace or report, a write or a
process outside the harness's own changes, or a hang or traceback (see harness.py). The full
set, in both modes, is ``python -m tests.security.redteam``; docs/redteam-round2.md has the
results.
"""

from __future__ import annotations

import os
import shutil

import pytest

from agentkit._sandbox._kernel import KernelUnavailable, layer

from . import harness


def _kernel_missing() -> str | None:
    if shutil.which("git") is None:
        return "git is not installed"
    try:
        layer("kernel")
    except KernelUnavailable as exc:
        return str(exc)
    return None


@pytest.mark.skipif(_kernel_missing() is not None, reason=str(_kernel_missing()))
@pytest.mark.skipif(
    os.geteuid() != 0 and not os.access("/proc/self/ns/user", os.R_OK),
    reason="user namespaces are not readable here",
)
@pytest.mark.timeout(300)
def test_quick_subset_has_no_kernel_success() -> None:
    results, took = harness.run(quick=True, modes=("kernel",))
    assert len(results) > 100, "the quick subset ran too few attempts"
    wins = [r for r in results if r[4]]
    shown = "\n".join(
        f"{cat} | {desc[:220]} | {'; '.join(found)[:300]}"
        for cat, _mode, desc, _st, found, _dt in wins
    )
    assert not wins, (
        f"{len(wins)} of {len(results)} attempts succeeded with the kernel "
        f"layer ({took:.0f}s):\n{shown}"
    )
