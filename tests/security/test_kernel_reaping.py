"""No bubblewrap process outlives a command, even for a moment, as a zombie.

bubblewrap's monitor exits as soon as its init inside the new pid namespace reports the
command's exit status, without waiting for that init (bubblewrap 0.8: the status comes over an
eventfd). The init is then an orphan: the kernel hands it to the nearest subreaper or to pid 1,
and where pid 1 does not reap (a container whose first process is agentkit itself, or a shell
that never waits) a ``[bwrap] <defunct>`` stays in agentkit's process group, one per command
and one for the probe (issue 26). Run without that init (``--as-pid-1``), the command is the
namespace's first process and the monitor's own child, which it waits for.

To see it wherever the host's pid 1 reaps, the check runs in a process that makes itself a
child subreaper (prctl(2) PR_SET_CHILD_SUBREAPER): every orphan of its descendants becomes its
own child, so an orphaned init shows up among its children, and it never reaps one itself.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentkit._sandbox import _kernel

pytestmark = pytest.mark.skipif(
    _kernel._probe(_kernel.BWRAP) is not None or not sys.platform.startswith("linux"),
    reason=f"the kernel layer cannot run here: {_kernel._probe(_kernel.BWRAP)}")

ROOT = Path(__file__).resolve().parents[2]

_CHILD = r"""
import ctypes, json, os, sys, time, anyio
libc = ctypes.CDLL(None, use_errno=True)
assert libc.prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
from agentkit import Host, Sandbox
from agentkit._sandbox import _kernel
from agentkit._sandbox._paths import Root
assert _kernel._probe(_kernel.BWRAP) is None
box = Sandbox(Host(root=Root("/"), sandbox="kernel", command_timeout_s=10), task_id="t")
for argv in (["uname", "-a"], ["cat", "/etc/hostname"], ["ls", "/"]):
    assert anyio.run(box.call, "run_command", {"argv": argv}).ok
time.sleep(0.5)  # an orphan is reparented as its parent exits: give it time to arrive
kids = []
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        with open(f"/proc/{pid}/stat") as f:
            name, rest = f.read().rsplit(")", 1)
    except OSError:
        continue
    if int(rest.split()[1]) == os.getpid():
        kids.append(f"{pid} {name.split('(', 1)[1]} {rest.split()[0]}")
print(json.dumps(kids))
"""


def test_no_bwrap_process_is_left_unreaped() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True,
                          env=env, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []
