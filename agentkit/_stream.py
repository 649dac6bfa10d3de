"""``Orchestrator.stream()``: progress events of one run, that a caller may leave at any point.

The run goes on in a task of its own, started outside the caller's task (asyncio: a task of
the loop; trio: a system task), so the caller's task never holds a task group or a cancel
scope of the run's across a ``yield``: leaving early by ``break``, an exception or a
cancellation cancels nothing of the caller's, under either backend. Leaving cancels the run;
its spans end as cancelled. Two spellings:

    async with orch.stream(q) as events:   # the run is over (spans closed) when this exits
        async for event in events: ...

    async for event in orch.stream(q): ... # a plain ``break`` cancels the run as the stream
                                           # is dropped; ``Orchestrator.aclose`` waits for it

``contextlib.aclosing(orch.stream(q))`` works too.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

import anyio

from ._backend import on_asyncio
from ._events import Event, EventTranslator

if TYPE_CHECKING:
    from ._trace import Trace


class Investigator(Protocol):
    """What a stream needs of the orchestrator (one host's or a fleet's), said here so that
    this module sits below both without importing either."""

    @property
    def trace(self) -> Trace: ...

    @property
    def _live(self) -> set[anyio.Event]: ...  # the runs of streams left early, until ended

    async def investigate(self, question: str, *, tasks: Sequence[str] | None = None,
                          limits: Any = None) -> Any: ...

_GRACE_S = 30.0  # how long leaving waits for the run to close its spans



class RunStream:
    """The events of one investigation; see the module docstring."""

    def __init__(self, orch: Investigator, question: str, tasks: Sequence[str] | None,
                 limits: Any) -> None:
        self._orch = orch
        self._args = (question, tasks, limits)
        self._send, self._receive = anyio.create_memory_object_stream[Event](math.inf)
        self._scope: anyio.CancelScope | None = None
        self._done: anyio.Event | None = None
        self._failure: Exception | None = None
        self._stopped = False
        self._task: Any = None  # asyncio keeps only weak references to its tasks

    # -- the run, in its own task -------------------------------------------------------

    def _start(self) -> None:
        if self._done is not None:
            return
        self._done = anyio.Event()
        self._orch._live.add(self._done)  # aclose() waits for runs still ending
        if on_asyncio():
            self._task = asyncio.get_running_loop().create_task(self._run())
        else:
            import trio

            trio.lowlevel.spawn_system_task(self._run, context=contextvars.copy_context())

    async def _run(self) -> None:
        translate = EventTranslator()

        def on_event(ev: dict[str, Any]) -> None:
            out = translate(ev)
            if out is not None:
                with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                    self._send.send_nowait(out)  # the consumer may have stopped listening

        orch = self._orch
        orch.trace.listen(on_event)
        try:
            with anyio.CancelScope() as scope:
                self._scope = scope
                if self._stopped:
                    scope.cancel()
                question, tasks, limits = self._args
                try:
                    await orch.investigate(question, tasks=tasks, limits=limits)
                except Exception as exc:  # handed to the consumer at the end of the events
                    self._failure = exc
        finally:
            orch.trace.unlisten(on_event)
            self._send.close()
            assert self._done is not None
            self._done.set()
            orch._live.discard(self._done)

    # -- the consumer's side ---------------------------------------------------------------

    def _stop(self) -> None:
        """Cancel the run (from any task of the loop, or a finalizer); it ends on its own."""
        self._stopped = True
        if self._scope is not None:
            self._scope.cancel()
        self._receive.close()

    def __aiter__(self) -> RunStream:
        return self

    async def __anext__(self) -> Event:
        self._start()
        try:
            return await self._receive.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            pass
        except BaseException:  # cancelled while waiting for the next event: stop the run
            self._stop()
            raise
        assert self._done is not None
        await self._done.wait()
        if self._failure is not None and not self._stopped:
            raise self._failure
        raise StopAsyncIteration

    async def aclose(self) -> None:
        """Stop the run and wait (shielded, bounded) until its spans are closed."""
        self._stop()
        if self._done is None:
            return
        with anyio.CancelScope(shield=True), anyio.move_on_after(_GRACE_S):
            await self._done.wait()

    async def __aenter__(self) -> RunStream:
        self._start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __del__(self) -> None:
        # dropped unfinished (a plain ``break`` out of ``async for``): stop the run
        if self._done is not None and not self._done.is_set():
            with contextlib.suppress(Exception):
                self._stop()
