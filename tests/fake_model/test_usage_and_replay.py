"""The fake's token estimate (the usage it reports) and raw replay of recorded streams."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import httpx2
import openai
import pytest

from agentls.testing.fake_model import (
    FakeModel,
    Reply,
    TokenUsage,
    estimate_input_tokens,
    estimate_tokens,
)

from .support import TIMEOUT, final_event, user

# Recorded real streams, read in place (never copied into the repository):
# ../shared/conformance relative to the repository root.
RECORDINGS = Path(__file__).resolve().parents[3] / "shared" / "conformance" / "responses_streams"


# ----------------------------------------------------------------------- tokens


def test_the_estimate() -> None:
    assert [estimate_tokens(t) for t in ("", "abcd", "abcde", "é" * 2, "é" * 3)] == [0, 1, 2, 1, 2]
    item = {"role": "user", "content": "héllo"}
    compact = json.dumps(item, ensure_ascii=False, separators=(",", ":"))
    assert estimate_tokens(item) == -(-len(compact.encode()) // 4)
    tool = {"type": "function", "name": "f"}
    body = {"model": "m", "instructions": "abcdefgh", "input": [item, item], "tools": [tool]}
    assert estimate_input_tokens(body) == 2 + 2 * estimate_tokens(item) + estimate_tokens(tool)
    assert estimate_input_tokens({"input": "abcdefghi"}) == 3
    assert estimate_input_tokens({"model": "m"}) == 0


async def test_usage_reports_the_estimate(fake: FakeModel, client: openai.AsyncOpenAI) -> None:
    """``input_tokens`` is the estimate of what was sent, so "last input_tokens +
    the estimate of each item added since" is what the fake reports next."""
    fake.script(
        Reply.tool_call("exec_command", {"cmd": "ls"}),
        Reply.text("All done here."),
        Reply.text("scripted", usage=TokenUsage(input_tokens=3, output_tokens=2)),
    )
    history: list[dict[str, Any]] = [user("list the files")]
    first = await final_event(client, history)
    assert first.type == "response.completed" and first.response.usage is not None
    assert first.response.usage.input_tokens == estimate_input_tokens(fake.requests[0].body)
    assert first.response.usage.output_tokens == estimate_tokens('{"cmd": "ls"}')

    added = [item.model_dump(exclude_none=True) for item in first.response.output]
    added.append({"type": "function_call_output", "call_id": "call_1", "output": "a.txt"})
    second = await final_event(client, history + added)
    assert second.type == "response.completed" and second.response.usage is not None
    usage = second.response.usage
    assert usage.input_tokens == first.response.usage.input_tokens + sum(
        estimate_tokens(item) for item in added
    )
    assert usage.output_tokens == estimate_tokens("All done here.")
    assert usage.total_tokens == usage.input_tokens + usage.output_tokens
    assert usage.output_tokens_details.reasoning_tokens == 0

    third = await final_event(client, history)
    assert third.type == "response.completed" and third.response.usage is not None
    assert (third.response.usage.input_tokens, third.response.usage.output_tokens) == (3, 2)


async def test_reasoning_counts_as_output(fake: FakeModel, client: openai.AsyncOpenAI) -> None:
    fake.script(Reply.reasoning("Twelve chars") + Reply.text("ok"))
    final = await final_event(client, [user("go")])
    assert final.type == "response.completed" and final.response.usage is not None
    assert final.response.usage.output_tokens_details.reasoning_tokens == 3
    assert final.response.usage.output_tokens == 3 + 1


# ------------------------------------------------------------------- raw replay


SYNTHETIC = (
    b'event: response.created\ndata: {"type":"response.created","sequence_number":0}\n\n'
    b": a comment\n\n"
    b'data: {"type":"response.output_text.delta","delta":"hi"}\r\n\r\n'
    b"data: [DONE]\n\n"
)


async def test_raw_sse_is_served_byte_for_byte(fake: FakeModel) -> None:
    fake.script(Reply.raw_sse(SYNTHETIC))
    async with httpx2.AsyncClient(timeout=TIMEOUT) as http:
        # The recording is served as it is, even to a request for a JSON answer.
        response = await http.post(f"{fake.base_url}/responses", json={"model": "m", "input": "x"})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.content == SYNTHETIC
    request = await fake.requests[0].wait_done(TIMEOUT)
    assert request.completed and request.t_first_delta_ns is not None


def test_a_raw_reply_takes_no_options() -> None:
    raw = Reply.raw_sse(SYNTHETIC)
    with pytest.raises(ValueError, match="raw SSE"):
        raw.with_usage({"input_tokens": 1})
    with pytest.raises(ValueError, match="raw SSE"):
        Reply.cut(of=raw)
    with pytest.raises(ValueError, match="combines plain replies"):
        Reply.items(raw, Reply.text("x"))
    with pytest.raises(TypeError):
        Reply.raw_sse("text")  # type: ignore[arg-type]


async def test_a_recorded_stream_replays_through_the_sdk(
    fake: FakeModel, client: openai.AsyncOpenAI
) -> None:
    recording = RECORDINGS / "streams" / "01_text_after_function_call" / "0.sse"
    if not recording.is_file():
        print(f"skipped: {recording} not present (../shared/conformance)", file=sys.stderr)
        pytest.skip("the recorded streams (../shared/conformance) are not present")
    data = recording.read_bytes()
    fake.script(Reply.raw_sse(data))

    async with (
        asyncio.timeout(TIMEOUT),
        client.responses.with_streaming_response.create(
            model="gpt-test", input="hello", stream=True
        ) as response,
    ):
        body = await response.read()
    assert body == data
    fake.script(Reply.raw_sse(data))
    # The SDK's typed events, validated leniently as in production (a recording
    # may carry fields newer than this SDK's models).
    lenient = openai.AsyncOpenAI(api_key="t", base_url=fake.base_url, max_retries=0)
    async with lenient, asyncio.timeout(TIMEOUT):
        stream = await lenient.responses.create(model="gpt-test", input="hello", stream=True)
        events = [event async for event in stream]
    assert events and events[-1].type in ("response.completed", "response.incomplete")
