"""Running one program: resource limits (no file may be written, no core, CPU and address
space capped), its own process group killed at the deadline or when its output passes the
cap, and both pipes read without blocking. ``run_command`` (``_commands``) decides what may
run and with which operands; this module only runs it.
"""

from __future__ import annotations

import contextlib
import os
import resource
import selectors
import signal
import subprocess
import time
from collections.abc import Callable
from typing import Any

from ._redact._decode import to_text

_STDERR_LIMIT = 16 * 1024

_AS_LIMIT = 4 << 30
_PRLIMIT = "/usr/bin/prlimit"


def _limits(cpu_s: int) -> None:  # runs in the child between fork and exec
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s))
    resource.setrlimit(resource.RLIMIT_AS, (_AS_LIMIT, _AS_LIMIT))


def _limited(argv: list[str], cpu_s: int) -> tuple[list[str], Any]:
    """argv run under resource limits. util-linux's prlimit sets them and execs the program,
    which avoids Python code between fork and exec (a ``preexec_fn`` can deadlock the child
    when other threads hold locks at fork time); without prlimit, fall back to preexec_fn."""
    if os.access(_PRLIMIT, os.X_OK):
        return [_PRLIMIT, "--fsize=0", "--core=0", f"--cpu={cpu_s}", f"--as={_AS_LIMIT}",
                "--", *argv], None
    return argv, lambda: _limits(cpu_s)


def _run(argv: list[str], env: dict[str, str], timeout: float, cap: int, cwd: str,
         boxed: Callable[[list[str]], list[str]] | None = None
         ) -> tuple[str, str, int, bool, bool]:
    """Run argv under the limits (and, given ``boxed``, inside the kernel sandbox, which sets
    its own environment and directory; the limits then apply inside it, or are inherited)."""
    argv, preexec = _limited(argv, int(timeout) + 2)
    if boxed is not None:
        argv, env, cwd = boxed(argv), {}, "/"
    proc = subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env=env, cwd=cwd, start_new_session=True, close_fds=True, preexec_fn=preexec,
    )
    bufs: dict[int, bytearray] = {}
    sel = selectors.DefaultSelector()
    assert proc.stdout and proc.stderr
    for stream, limit in ((proc.stdout, cap), (proc.stderr, _STDERR_LIMIT)):
        os.set_blocking(stream.fileno(), False)
        sel.register(stream, selectors.EVENT_READ, limit)
        bufs[stream.fileno()] = bytearray()
    deadline = time.monotonic() + timeout
    timed_out = truncated = False
    try:
        while sel.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                timed_out = True
                break
            for key, _ in sel.select(min(left, 0.5)):
                chunk = os.read(key.fd, 65536)
                buf = bufs[key.fd]
                if not chunk:
                    sel.unregister(key.fileobj)
                    continue
                buf.extend(chunk)
                if len(buf) > key.data:
                    del buf[key.data:]
                    if key.fileobj is proc.stdout:
                        truncated = True
                    sel.unregister(key.fileobj)
            if truncated:
                break
        if not timed_out and not truncated:
            # Both pipes closed, but the leader may still be exiting: let it finish before
            # the group kill, or a normal exit would read as killed (-9).
            try:
                proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                timed_out = True  # it closed its output but kept running
    finally:
        sel.close()
        _kill_group(proc)  # always: backgrounded children die with the group
    code = proc.wait()
    # decoded to text (UTF-16/32, NULs, escapes) before anything redacts it
    dec = (to_text(bytes(bufs[proc.stdout.fileno()])),
           to_text(bytes(bufs[proc.stderr.fileno()])))
    proc.stdout.close()
    proc.stderr.close()
    return dec[0], dec[1], code, timed_out, truncated


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    # The whole group: a program's children die with it, even after the leader exited.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
