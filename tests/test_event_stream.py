"""An agent's event stream: in order, seq without gaps, deltas merged while
the consumer is behind — and the first event after a quiet moment handed to
the consumer at once, without waiting for its task to wake."""

from __future__ import annotations

import anyio

from agentls.agent import stream as streams
from agentls.agent.events import AgentEvent, TextDelta, ToolStarted
from agentls.agent.stream import EventStream

from .support import WAIT


async def test_a_waiting_consumer_gets_the_first_event_of_a_burst_at_once() -> None:
    events = EventStream()
    direct: list[AgentEvent] = []
    queued: list[AgentEvent] = []
    got = anyio.Event()
    events.direct = direct.append
    async with anyio.create_task_group() as group:

        async def consume() -> None:
            async for event in events:
                queued.append(event)
                got.set()

        group.start_soon(consume)
        await anyio.wait_all_tasks_blocked()  # the consumer waits now
        events.send_text(TextDelta, 1, "Hel")
        assert [e.text for e in direct] == ["Hel"]  # type: ignore[attr-defined]
        # The rest of the burst queues (and merges) as before.
        events.send_text(TextDelta, 1, "lo ")
        events.send_text(TextDelta, 1, "world")
        with anyio.fail_after(WAIT):
            await got.wait()
        assert [e.text for e in queued] == ["lo world"]  # type: ignore[attr-defined]
        assert [e.seq for e in [*direct, *queued]] == [1, 2]
        events.close()


async def test_within_the_quiet_window_events_queue() -> None:
    events = EventStream()
    direct: list[AgentEvent] = []
    events.direct = direct.append
    events._waiter = anyio.Event()  # a consumer waiting, nothing queued
    events.send(ToolStarted(turn_id=1, call_id="a", tool="t", title="t", arguments={}))
    events.send(ToolStarted(turn_id=1, call_id="b", tool="t", title="t", arguments={}))
    assert [e.call_id for e in direct] == ["a"]  # type: ignore[attr-defined]
    # "b" came within QUIET: queued, and the consumer woken for it.
    assert events.receive_nowait().call_id == "b"  # type: ignore[attr-defined]
    events._waiter = anyio.Event()
    events._last -= streams.QUIET  # as if QUIET had passed since "b"
    events.send(ToolStarted(turn_id=1, call_id="c", tool="t", title="t", arguments={}))
    assert [e.call_id for e in direct] == ["a", "c"]  # type: ignore[attr-defined]


async def test_a_consumer_that_fails_never_fails_the_sender() -> None:
    events = EventStream()

    def broken(event: AgentEvent) -> None:
        raise RuntimeError("consumer bug")

    events.direct = broken
    events._waiter = anyio.Event()
    events.send_text(TextDelta, 1, "x")  # logged, not raised
    assert events._seq == 1
