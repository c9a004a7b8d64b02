"""An agent's event stream: ordered, ``seq`` without gaps, one consumer.

Text deltas (answer, reasoning, tool output) that arrive while the consumer
has not yet taken the previous one of the same kind, turn and tool call are
appended to it instead of queued as events of their own. A fast model's
burst of thousands of tiny deltas then costs one event, not thousands —
nothing is reordered or lost, and a consumer that keeps up still gets every
delta as it comes.

The first event after a quiet moment — the first delta of an answer, most
often — goes to the consumer's ``direct`` hook at once, from the sender,
when the consumer is waiting and nothing is queued: no wake-up of the
consumer's task, which would first wait for the sender to reach its next
``await`` (for a model stream, deep in the HTTP client). Events that follow
within ``QUIET`` queue and merge as above.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable

import anyio

from agentls.agent.events import AgentEvent, ReasoningDelta, TextDelta, ToolOutput

log = logging.getLogger(__name__)

TextEvent = TextDelta | ReasoningDelta | ToolOutput
# Seconds without an event after which the next one goes to ``direct`` at once
# (the editor side coalesces deltas in windows of this length too).
QUIET = 0.020


class EventStream:
    __slots__ = ("_closed", "_last", "_parts", "_queue", "_seq", "_waiter", "direct")

    def __init__(self) -> None:
        self._queue: deque[AgentEvent] = deque()
        # The texts of the last queued event while it is a delta still open to merging.
        self._parts: list[str] | None = None
        self._closed = False
        self._seq = 0
        self._waiter: anyio.Event | None = None
        # When the last event was sent (time.monotonic()).
        self._last = 0.0
        # The consumer's hook for an event after a quiet moment (see above).
        self.direct: Callable[[AgentEvent], None] | None = None

    # --- the agent's side --------------------------------------------------------------

    def send(self, event: AgentEvent) -> None:
        if self._closed:
            return
        self._seal()
        self._seq += 1
        event.seq = self._seq
        now = time.monotonic()
        quiet, self._last = now - self._last >= QUIET, now
        if quiet and self._waiter is not None and not self._queue and self.direct is not None:
            try:
                self.direct(event)
            except Exception:  # the consumer's bug must not fail the agent's turn
                log.exception("the event consumer failed on %r", event)
            return
        self._queue.append(event)
        self._wake()

    def send_text(
        self, kind: type[TextEvent], turn_id: int, text: str, call_id: str | None = None
    ) -> None:
        """Queue a delta, or append its text to the queued delta it continues.

        Takes the fields rather than an event: on the merging path (most
        deltas of a fast stream) no event object is made at all.
        """
        if self._closed:
            return
        parts = self._parts
        if parts is not None:
            tail = self._queue[-1]
            if (
                type(tail) is kind
                and tail.turn_id == turn_id
                and (call_id is None or tail.call_id == call_id)  # type: ignore[union-attr]
            ):
                parts.append(text)
                self._last = time.monotonic()
                return
        event: TextEvent
        if kind is ToolOutput:
            event = ToolOutput(turn_id=turn_id, call_id=call_id or "", text=text)
        else:
            event = kind(turn_id=turn_id, text=text)  # type: ignore[call-arg]
        self.send(event)
        # Open to merging while it waits in the queue (not once handed over).
        self._parts = [text] if self._queue else None

    def _seal(self) -> None:
        parts = self._parts
        if parts is not None:
            if len(parts) > 1:
                tail = self._queue[-1]
                assert isinstance(tail, TextDelta | ReasoningDelta | ToolOutput)
                tail.text = "".join(parts)
            self._parts = None

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            waiter.set()

    def close(self) -> None:
        self._closed = True
        self._wake()

    # --- the consumer's side --------------------------------------------------------------

    def receive_nowait(self) -> AgentEvent:
        queue = self._queue
        if queue:
            if len(queue) == 1:
                self._seal()  # taken: later deltas start an event of their own
            return queue.popleft()
        if self._closed:
            raise anyio.EndOfStream
        raise anyio.WouldBlock

    async def receive(self) -> AgentEvent:
        while True:
            try:
                return self.receive_nowait()
            except anyio.WouldBlock:
                self._waiter = waiter = anyio.Event()
                await waiter.wait()

    def __aiter__(self) -> EventStream:
        return self

    async def __anext__(self) -> AgentEvent:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None
