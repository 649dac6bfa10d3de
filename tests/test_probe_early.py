"""The kernel layer's probe started early (``_kernel.probe_early``, the CLI's) gives
:func:`layer` the same answer as the probe it runs itself, and waits for it."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from agentkit._sandbox import _kernel


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    _kernel._probe.cache_clear()
    _kernel._early.clear()
    yield
    _kernel._probe.cache_clear()
    _kernel._early.clear()


@pytest.mark.parametrize("bwrap", ["/nonexistent/bwrap", "/bin/false", _kernel.BWRAP])
def test_the_early_probe_gives_layer_its_own_answer(bwrap: str) -> None:
    if not os.path.exists(bwrap) and bwrap == _kernel.BWRAP:
        pytest.skip("bubblewrap is not installed here")
    alone = _kernel.layer("auto", bwrap)
    _kernel._probe.cache_clear()
    _kernel.probe_early("auto", bwrap)
    thread = _kernel._early[bwrap]
    early = _kernel.layer("auto", bwrap)
    assert not thread.is_alive()
    assert early == alone
    assert _kernel._probe.cache_info().misses == 1  # one probe, the early one


def test_allowlist_starts_no_probe() -> None:
    _kernel.probe_early("allowlist")
    assert _kernel._early == {}
    assert _kernel.layer("allowlist").mode == "allowlist-only"


def test_kernel_required_still_refuses_when_the_early_probe_failed() -> None:
    _kernel.probe_early("kernel", "/nonexistent/bwrap")
    with pytest.raises(_kernel.KernelUnavailable):
        _kernel.layer("kernel", "/nonexistent/bwrap")
