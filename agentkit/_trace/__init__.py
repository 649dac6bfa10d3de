"""The trace: a run recorded as JSON lines (``_write``), read back whatever state the file
is in (``_read``), and shown as text (``_show``), a timeline (``_timeline``) or an HTML
report (``_report``). Replaying a trace reruns the orchestrator, so it lives above it, in
``agentkit._replay``.

The writer is re-exported here: everything that records (the sandbox, the model client,
the orchestrator, the fleet) only needs :class:`Trace`.
"""

from ._write import TRACE_FORMAT, TRACE_VERSION, Trace

__all__ = ["TRACE_FORMAT", "TRACE_VERSION", "Trace"]
