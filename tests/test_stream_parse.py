"""The SSE line parser, including its fast path for text deltas, against
json.loads on awkward strings."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import anyio
import pytest

from agentls.model.errors import ModelError
from agentls.model.stream import batched, read_response
from agentls.model.types import QuietSink, Retry

AWKWARD = [
    "plain",
    'quote " inside',
    'a key-like "delta":"x" inside',
    "escapes \\ \n \t \r \b \f",
    "unicode é ü 中文 🎉",
    "",
    "\u2028 separators \u2029",
]


class Sink(QuietSink):
    def __init__(self) -> None:
        self.text: list[str] = []
        self.reasoning: list[str] = []

    def text_delta(self, text: str) -> None:
        self.text.append(text)

    def reasoning_delta(self, text: str) -> None:
        self.reasoning.append(text)

    def retrying(self, retry: Retry) -> None:
        raise AssertionError("no retries here")


async def lines(events: list[dict[str, object] | str]) -> AsyncIterator[str]:
    for event in events:
        payload = event if isinstance(event, str) else json.dumps(event)
        yield "event: x"
        yield f"data: {payload}"
        yield ""


def completed() -> dict[str, object]:
    return {"type": "response.completed", "response": {"id": "r", "output": [], "usage": {}}}


@pytest.mark.parametrize("ascii_only", [True, False])
async def test_text_deltas_decode_exactly(ascii_only: bool) -> None:
    events: list[dict[str, object] | str] = []
    for text in AWKWARD:
        event = {
            "type": "response.output_text.delta",
            "item_id": "m",
            "output_index": 0,
            "content_index": 0,
            "delta": text,
            "sequence_number": 1,
        }
        events.append(json.dumps(event, ensure_ascii=ascii_only, separators=(",", ":")))
    # Another field order, as another server might send it.
    events.append(json.dumps({"delta": "reordered", "type": "response.output_text.delta"}))
    events.append(completed())
    sink = Sink()
    await read_response(lines(events), sink)
    assert sink.text == [*AWKWARD, "reordered"]


async def test_a_broken_delta_is_a_stream_error() -> None:
    broken = '{"type":"response.output_text.delta","delta":"unterminated'
    with pytest.raises(ModelError, match="malformed"):
        await read_response(lines([broken, completed()]), Sink())


async def test_a_stream_without_completion_is_an_error() -> None:
    delta: dict[str, object] = {"type": "response.output_text.delta", "delta": "x"}
    with pytest.raises(ModelError, match="ended before the response was complete"):
        await read_response(lines([delta]), Sink())


async def test_a_background_stream_is_read_in_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    """``batched`` passes every line on, in order, and pauses only once it has
    caught up with the network, not after every line."""
    pauses: list[int] = []  # how many lines had come when the reader paused
    seen: list[str] = []

    async def pause(seconds: float) -> None:
        assert seconds == 0.25
        pauses.append(len(seen))

    monkeypatch.setattr(anyio, "sleep", pause)

    async def network() -> AsyncIterator[str]:
        for burst in range(3):
            await asyncio.sleep(0.005)  # nothing buffered: the reader waits
            for n in range(20):  # then a burst that needs no waiting
                yield f"{burst}.{n}"

    async for line in batched(network(), 0.25):
        seen.append(line)
    assert seen == [f"{b}.{n}" for b in range(3) for n in range(20)]
    # After the first line of each burst (it had to wait); a line of a burst
    # only on the rare occasion the machine stalled in the middle of it.
    assert {1, 21, 41} <= set(pauses)
    assert len(pauses) < 15
