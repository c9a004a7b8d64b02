"""An agent's event stream: ordered, ``seq`` without gaps, one consumer.

Text deltas (answer, reasoning, tool output) that arrive while the consumer
has not yet taken the previous one of the same kind, turn and tool call are
appended to it instead of queued as events of their own. A fast model's
burst of thousands of tiny deltas then costs one event, not thousands —
nothing is reordered or lost, and a consumer that keeps up still gets every
delta as it comes.
"""

from __future__ import annotations

from collections import deque

import anyio

from agentls.agent.events import AgentEvent, ReasoningDelta, TextDelta, ToolOutput

TextEvent = TextDelta | ReasoningDelta | ToolOutput


class EventStream:
    __slots__ = ("_closed", "_parts", "_queue", "_seq", "_waiter")

    def __init__(self) -> None:
        self._queue: deque[AgentEvent] = deque()
        # The texts of the last queued event while it is a delta still open to merging.
        self._parts: list[str] | None = None
        self._closed = False
        self._seq = 0
        self._waiter: anyio.Event | None = None

    # --- the agent's side --------------------------------------------------------------

    def send(self, event: AgentEvent) -> None:
        if self._closed:
            return
        self._seal()
        self._seq += 1
        event.seq = self._seq
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
                return
        event: TextEvent
        if kind is ToolOutput:
            event = ToolOutput(turn_id=turn_id, call_id=call_id or "", text=text)
        else:
            event = kind(turn_id=turn_id, text=text)  # type: ignore[call-arg]
        self.send(event)
        self._parts = [text]

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
