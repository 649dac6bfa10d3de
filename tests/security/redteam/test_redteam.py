"""The red team's quick subset under the kernel layer, as a ratchet.

A success is a planted secret or canary in a tool's output, trace or report, a write or a
process outside the harness's own changes, or a hang or traceback (see harness.py). The
successes still open are listed in ``known_open.txt`` (most are secrets in formats the
redactor does not know, inside files the sandbox may read; docs/security.md, "Independent red
team"): an attempt that succeeds and is not listed fails this test, so no fixed hole comes
back and no new one goes unnoticed. A listed one that no longer succeeds is reported, to be
taken off the list. The full set, in both modes, is ``python -m tests.security.redteam``.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from agentkit._sandbox._kernel import KernelUnavailable, layer

from . import harness

KNOWN = Path(__file__).with_name("known_open.txt")


def _kernel_missing() -> str | None:
    if shutil.which("git") is None:
        return "git is not installed"
    try:
        layer("kernel")
    except KernelUnavailable as exc:
        return str(exc)
    return None


def key(category: str, desc: str) -> str:
    """An attempt's name without what changes from run to run (the arena's path, pids)."""
    desc = re.sub(r"/[^\s\"']*agentkit-redteam-[A-Za-z0-9_]+", "", desc)
    return f"{category} | {re.sub(r'[0-9]{3,}', 'N', desc)}"


def known() -> set[str]:
    return {ln.strip() for ln in KNOWN.read_text().splitlines()
            if ln.strip() and not ln.startswith("#")}


@pytest.mark.skipif(_kernel_missing() is not None, reason=str(_kernel_missing()))
@pytest.mark.skipif(
    os.geteuid() != 0 and not os.access("/proc/self/ns/user", os.R_OK),
    reason="user namespaces are not readable here",
)
@pytest.mark.timeout(300)
def test_quick_subset_has_no_kernel_success_beyond_the_known_open_ones(
        capsys: pytest.CaptureFixture[str]) -> None:
    results, took = harness.run(quick=True, modes=("kernel",))
    assert len(results) > 100, "the quick subset ran too few attempts"
    # a hang or a slow answer on a loaded machine is timing, not a hole, and so is a
    # traceback in a race attempt (its tries fork while the harness's swap threads run):
    # the full run reports those; here only what was read, written or left behind counts
    def real(desc: str, found: list[str]) -> list[str]:
        timing = ("hang", "slow:", "traceback") if "[race" in desc else ("hang", "slow:")
        return [f for f in found if not f.startswith(timing)]

    wins = {key(cat, desc): "; ".join(kept)[:300]
            for cat, _mode, desc, _st, found, _dt in results if (kept := real(desc, found))}
    listed = known()
    new = {k: v for k, v in wins.items() if k not in listed}
    fixed = sorted(listed - set(wins))
    if fixed:
        with capsys.disabled():
            print(f"\nred team: {len(fixed)} known-open attempts no longer succeed; take them "
                  f"off {KNOWN.name}:\n" + "\n".join(fixed))
    shown = "\n".join(f"{k[:240]} | {v}" for k, v in sorted(new.items()))
    assert not new, (f"{len(new)} of {len(results)} attempts succeeded with the kernel layer "
                     f"and are not known-open ({took:.0f}s):\n{shown}")
