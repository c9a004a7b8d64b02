"""The fake Responses API, driven through the real ``openai`` SDK over real HTTP."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path

import httpx2
import openai
import pytest
from openai.types.responses import ResponseStreamEvent

from agentls.testing.fake_model import (
    FakeModel,
    RecordedRequest,
    Reply,
    TokenUsage,
    load_script,
    run_in_thread,
)

from .support import TIMEOUT, serving_cli

TEXT_EVENTS = [
    "response.created",
    "response.in_progress",
    "response.output_item.added",
    "response.content_part.added",
    "response.output_text.delta",
    "response.output_text.delta",
    "response.output_text.done",
    "response.content_part.done",
    "response.output_item.done",
    "response.completed",
]


async def create_stream(
    client: openai.AsyncOpenAI,
    input: str = "hello",
    *,
    instructions: str | openai.Omit = openai.omit,
) -> openai.AsyncStream[ResponseStreamEvent]:
    async with asyncio.timeout(TIMEOUT):
        return await client.responses.create(
            model="gpt-test", input=input, instructions=instructions, stream=True
        )


async def collect(stream: openai.AsyncStream[ResponseStreamEvent]) -> list[ResponseStreamEvent]:
    async with asyncio.timeout(TIMEOUT):
        return [event async for event in stream]


async def stream_events(
    client: openai.AsyncOpenAI,
    input: str = "hello",
    *,
    instructions: str | openai.Omit = openai.omit,
) -> list[ResponseStreamEvent]:
    return await collect(await create_stream(client, input, instructions=instructions))


def types(events: Sequence[ResponseStreamEvent]) -> list[str]:
    return [event.type for event in events]


# ------------------------------------------------------------------ typed stream


async def test_text_reply_through_the_typed_stream(
    fake: FakeModel, client: openai.AsyncOpenAI
) -> None:
    fake.script(Reply.text("Hello world"))

    events = await stream_events(client, instructions="be brief")

    assert types(events) == TEXT_EVENTS
    assert [event.sequence_number for event in events] == list(range(len(events)))
    deltas = [e.delta for e in events if e.type == "response.output_text.delta"]
    assert deltas == ["Hello", " world"]
    final = events[-1]
    assert final.type == "response.completed"
    assert final.response.status == "completed"
    assert final.response.output_text == "Hello world"
    assert final.response.instructions == "be brief"
    assert final.response.model == "gpt-test"
    message = final.response.output[0]
    assert message.type == "message" and message.id == "msg_1" and message.role == "assistant"

    (request,) = fake.requests
    assert request.path == "/v1/responses"
    assert request.method == "POST"
    assert request.body["input"] == "hello"
    assert request.body["stream"] is True
    assert request.headers["authorization"] == "Bearer test"
    assert request.headers["content-type"] == "application/json"
    await request.wait_done(TIMEOUT)
    assert request.completed and not request.aborted and request.status == 200
    assert request.t_first_delta_ns is not None
    assert request.t_first_delta_ns >= request.t_arrival_ns


async def test_reasoning_then_tool_call(fake: FakeModel, client: openai.AsyncOpenAI) -> None:
    fake.script(
        Reply.reasoning("Look around first.", encrypted_content="opaque-1")
        + Reply.tool_call("exec_command", {"cmd": "ls -la"})
    )

    events = await stream_events(client)

    assert types(events) == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.reasoning_summary_part.added",
        "response.reasoning_summary_text.delta",
        "response.reasoning_summary_text.delta",
        "response.reasoning_summary_text.delta",
        "response.reasoning_summary_text.done",
        "response.reasoning_summary_part.done",
        "response.output_item.done",
        "response.output_item.added",
        *["response.function_call_arguments.delta"] * 3,
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.completed",
    ]
    summary = "".join(e.delta for e in events if e.type == "response.reasoning_summary_text.delta")
    assert summary == "Look around first."
    arguments = "".join(
        e.delta for e in events if e.type == "response.function_call_arguments.delta"
    )
    assert json.loads(arguments) == {"cmd": "ls -la"}

    final = events[-1]
    assert final.type == "response.completed"
    reasoning, call = final.response.output
    assert reasoning.type == "reasoning"
    assert reasoning.id == "rs_1"
    assert reasoning.encrypted_content == "opaque-1"
    assert [s.text for s in reasoning.summary] == ["Look around first."]
    assert call.type == "function_call"
    assert (call.id, call.call_id, call.name) == ("fc_1", "call_1", "exec_command")
    assert json.loads(call.arguments) == {"cmd": "ls -la"}


async def test_several_items_and_ids(fake: FakeModel, client: openai.AsyncOpenAI) -> None:
    fake.script(
        Reply.items(
            Reply.text("Running two commands.", phase="commentary"),
            Reply.tool_call("exec_command", {"cmd": "pwd"}, call_id="call_pwd"),
            Reply.tool_call("exec_command", '{"cmd": "ls"}'),
        ),
        Reply.tool_call("read_file", {"path": "a.txt"}),
    )

    first = await stream_events(client)
    second = await stream_events(client)

    final = first[-1]
    assert final.type == "response.completed"
    output = final.response.output
    assert [item.type for item in output] == ["message", "function_call", "function_call"]
    assert [item.id for item in output] == ["msg_1", "fc_1", "fc_2"]
    assert output[0].type == "message" and output[0].phase == "commentary"
    calls = [item for item in output if item.type == "function_call"]
    assert [c.call_id for c in calls] == ["call_pwd", "call_1"]
    assert calls[1].arguments == '{"cmd": "ls"}'
    added = [e for e in first if e.type == "response.output_item.added"]
    assert [e.output_index for e in added] == [0, 1, 2]

    last = second[-1]
    assert last.type == "response.completed"
    assert last.response.id == "resp_2"
    assert [(i.id, i.call_id) for i in last.response.output if i.type == "function_call"] == [
        ("fc_3", "call_2")
    ]


async def test_usage(fake: FakeModel, client: openai.AsyncOpenAI) -> None:
    fake.script(
        Reply.text(
            "ok",
            usage=TokenUsage(
                input_tokens=1200, output_tokens=80, reasoning_tokens=64, cached_tokens=1024
            ),
        ),
        Reply.text("ok", usage={"input_tokens": 7, "output_tokens": 3}),
        Reply.text("ok"),
    )

    usages = []
    for _ in range(3):
        final = (await stream_events(client))[-1]
        assert final.type == "response.completed"
        assert final.response.usage is not None
        usages.append(final.response.usage)

    custom, partial, default = usages
    assert custom.input_tokens == 1200
    assert custom.input_tokens_details.cached_tokens == 1024
    assert custom.output_tokens == 80
    assert custom.output_tokens_details.reasoning_tokens == 64
    assert custom.total_tokens == 1280
    assert (partial.input_tokens, partial.output_tokens, partial.total_tokens) == (7, 3, 10)
    assert default.input_tokens > 0 and default.output_tokens > 0
    assert default.total_tokens == default.input_tokens + default.output_tokens


async def test_text_chunking(fake: FakeModel, client: openai.AsyncOpenAI) -> None:
    fake.script(
        Reply.text("abcdefghij", chunks=3),
        Reply.text("one two", chunks=["o", "ne t", "wo"]),
    )

    for expected in (["abcd", "efg", "hij"], ["o", "ne t", "wo"]):
        events = await stream_events(client)
        assert [e.delta for e in events if e.type == "response.output_text.delta"] == expected

    with pytest.raises(ValueError, match="do not add up"):
        Reply.text("abc", chunks=["a", "b"])


# --------------------------------------------------------------------- raw lines


async def test_raw_sse_lines(fake: FakeModel, client: openai.AsyncOpenAI) -> None:
    fake.script(Reply.text("Hi there") + Reply.tool_call("exec_command", {"cmd": "ls"}))

    lines: list[str] = []
    async with asyncio.timeout(TIMEOUT):
        async with client.responses.with_streaming_response.create(
            model="gpt-test", input="hello", stream=True
        ) as response:
            assert response.headers["content-type"].startswith("text/event-stream")
            assert response.http_response.headers["transfer-encoding"] == "chunked"
            lines = [line async for line in response.iter_lines()]

    # Every event is "event: <type>", "data: <json>", "" -- the format OpenAI sends.
    assert len(lines) % 3 == 0
    payloads = []
    for i in range(0, len(lines), 3):
        event_line, data_line, blank = lines[i : i + 3]
        assert event_line.startswith("event: ")
        assert data_line.startswith("data: ")
        assert blank == ""
        payload = json.loads(data_line.removeprefix("data: "))
        assert payload["type"] == event_line.removeprefix("event: ")
        payloads.append(payload)
    assert [p["sequence_number"] for p in payloads] == list(range(len(payloads)))
    assert payloads[0]["type"] == "response.created"
    assert payloads[-1]["type"] == "response.completed"
    text = "".join(p["delta"] for p in payloads if p["type"] == "response.output_text.delta")
    assert text == "Hi there"


async def test_keep_alive_reuses_the_connection(
    fake: FakeModel, client: openai.AsyncOpenAI
) -> None:
    fake.script(Reply.text("first"), Reply.text("second"))

    one = await stream_events(client, input="question one")
    two = await stream_events(client, input="question two")

    assert one[-1].type == "response.completed" and one[-1].response.output_text == "first"
    assert two[-1].type == "response.completed" and two[-1].response.output_text == "second"
    first, second = await fake.wait_for_requests(2, timeout=TIMEOUT)
    assert first.body["input"] == "question one"
    assert second.body["input"] == "question two"
    assert first.connection == second.connection
    assert first.completed and second.completed


async def test_non_streaming_request_gets_the_whole_response(
    fake: FakeModel, client: openai.AsyncOpenAI
) -> None:
    fake.script(Reply.text("plain answer"))

    async with asyncio.timeout(TIMEOUT):
        response = await client.responses.create(model="gpt-test", input="hello")

    assert response.output_text == "plain answer"
    assert response.usage is not None


# ---------------------------------------------------------------------- failures


async def test_rate_limit_with_retry_after(fake: FakeModel, client: openai.AsyncOpenAI) -> None:
    fake.script(Reply.http_error(429, retry_after=1, message="Slow down."))

    with pytest.raises(openai.RateLimitError) as caught:
        await create_stream(client)

    err = caught.value
    assert err.status_code == 429
    assert err.response.headers["retry-after"] == "1"
    assert err.code == "rate_limit_exceeded"
    assert err.body == {
        "message": "Slow down.",
        "type": "requests",
        "param": None,
        "code": "rate_limit_exceeded",
    }
    assert fake.requests[0].status == 429


@pytest.mark.parametrize(
    ("status", "error"),
    [
        (400, openai.BadRequestError),
        (401, openai.AuthenticationError),
        (500, openai.InternalServerError),
        (502, openai.InternalServerError),
        (503, openai.InternalServerError),
    ],
)
async def test_http_errors(
    fake: FakeModel, client: openai.AsyncOpenAI, status: int, error: type[openai.APIStatusError]
) -> None:
    fake.script(Reply.http_error(status, code="some_code"), Reply.text("after the error"))

    with pytest.raises(error) as caught:
        await create_stream(client)
    assert caught.value.status_code == status
    assert caught.value.code == "some_code"
    # The connection stays usable after an error response.
    events = await stream_events(client)
    assert events[-1].type == "response.completed"


async def test_retries_honour_retry_after(fake: FakeModel) -> None:
    fake.script(Reply.http_error(503, retry_after_ms=10), Reply.text("recovered"))

    async with openai.AsyncOpenAI(api_key="test", base_url=fake.base_url, max_retries=1) as sdk:
        events = await stream_events(sdk)

    assert events[-1].type == "response.completed"
    assert events[-1].response.output_text == "recovered"
    assert [r.status for r in fake.requests] == [503, 200]


async def test_cut_stream_ends_without_completed(
    fake: FakeModel, client: openai.AsyncOpenAI
) -> None:
    fake.script(Reply.cut(after=5))

    stream = await create_stream(client)
    seen: list[str] = []
    with pytest.raises(openai.APIConnectionError):
        async with asyncio.timeout(TIMEOUT):
            async for event in stream:
                seen.append(event.type)

    assert seen == TEXT_EVENTS[:5]
    request = await fake.requests[0].wait_done(TIMEOUT)
    assert not request.completed and not request.aborted


async def test_stall_hits_the_client_read_timeout(fake: FakeModel) -> None:
    fake.script(Reply.stall(after=3))

    async with openai.AsyncOpenAI(
        api_key="test",
        base_url=fake.base_url,
        max_retries=0,
        timeout=httpx2.Timeout(TIMEOUT, read=0.3),
    ) as sdk:
        stream = await create_stream(sdk)
        seen: list[str] = []
        with pytest.raises(openai.APITimeoutError):
            async with asyncio.timeout(TIMEOUT):
                async for event in stream:
                    seen.append(event.type)

    assert seen == TEXT_EVENTS[:3]
    # The client gave up and closed the connection: the fake records the abort.
    request = await fake.requests[0].wait_done(TIMEOUT)
    assert request.aborted and not request.completed


async def test_hang_sends_only_response_created(fake: FakeModel) -> None:
    fake.script(Reply.hang())

    async with openai.AsyncOpenAI(
        api_key="test",
        base_url=fake.base_url,
        max_retries=0,
        timeout=httpx2.Timeout(TIMEOUT, read=0.2),
    ) as sdk:
        stream = await create_stream(sdk)
        seen: list[str] = []
        with pytest.raises(openai.APITimeoutError):
            async with asyncio.timeout(TIMEOUT):
                async for event in stream:
                    seen.append(event.type)

    assert seen == ["response.created"]


async def test_malformed_event(fake: FakeModel, client: openai.AsyncOpenAI) -> None:
    fake.script(Reply.malformed(after=4))

    stream = await create_stream(client)
    seen: list[str] = []
    with pytest.raises(json.JSONDecodeError):
        async with asyncio.timeout(TIMEOUT):
            async for event in stream:
                seen.append(event.type)
    assert seen == TEXT_EVENTS[:4]


async def test_error_event(fake: FakeModel, client: openai.AsyncOpenAI) -> None:
    fake.script(Reply.error_event("The model is overloaded.", code="server_is_overloaded"))

    events = await stream_events(client)

    assert types(events) == ["response.created", "response.in_progress", "error"]
    error = events[-1]
    assert error.type == "error"
    assert (error.code, error.message, error.param) == (
        "server_is_overloaded",
        "The model is overloaded.",
        None,
    )
    assert error.sequence_number == 2


async def test_failed_response(fake: FakeModel, client: openai.AsyncOpenAI) -> None:
    fake.script(
        Reply.failed("Rate limited mid-way.", code="rate_limit_exceeded"),
        Reply.failed(of=Reply.tool_call("a", {}) + Reply.text("never finished"), after=6),
    )

    events = await stream_events(client)
    assert types(events) == ["response.created", "response.in_progress", "response.failed"]
    failed = events[-1]
    assert failed.type == "response.failed"
    assert failed.response.status == "failed"
    assert failed.response.error is not None
    assert failed.response.error.code == "rate_limit_exceeded"
    assert failed.response.error.message == "Rate limited mid-way."

    events = await stream_events(client)
    failed = events[-1]
    assert failed.type == "response.failed"
    # Only the items finished before the failure are in the output.
    assert [item.type for item in failed.response.output] == ["function_call"]


async def test_incomplete_response(fake: FakeModel, client: openai.AsyncOpenAI) -> None:
    fake.script(Reply.incomplete("max_output_tokens", of=Reply.text("Cut short")))

    events = await stream_events(client)

    final = events[-1]
    assert final.type == "response.incomplete"
    assert final.response.status == "incomplete"
    assert final.response.incomplete_details is not None
    assert final.response.incomplete_details.reason == "max_output_tokens"
    assert final.response.output_text == "Cut short"


async def test_script_exhausted_is_a_readable_500(
    fake: FakeModel, client: openai.AsyncOpenAI
) -> None:
    with pytest.raises(openai.InternalServerError, match="script exhausted"):
        await create_stream(client)
    assert fake.requests[0].error is not None


async def test_unknown_path_is_a_404(fake: FakeModel) -> None:
    async with httpx2.AsyncClient(timeout=TIMEOUT) as http:
        response = await http.get(f"{fake.base_url}/embeddings")
        no_v1 = await http.post(
            f"{fake.url}/responses", json={"model": "m", "input": "x", "stream": True}
        )
    assert response.status_code == 404
    assert response.json()["error"]["type"] == "invalid_request_error"
    # Base URLs without /v1 work too (here the script is empty: a 500 that says so).
    assert no_v1.status_code == 500
    assert no_v1.json()["error"]["code"] == "fake_script_exhausted"
    assert [r.path for r in fake.requests] == ["/v1/embeddings", "/responses"]


async def test_models_are_listed_to_a_request_with_a_key(
    fake: FakeModel, client: openai.AsyncOpenAI
) -> None:
    listed = [model.id async for model in client.models.list()]
    assert "gpt-5.1-codex" in listed and "test-model" in listed
    async with httpx2.AsyncClient(timeout=TIMEOUT) as http:
        no_key = await http.get(f"{fake.base_url}/models")
    assert no_key.status_code == 401
    assert no_key.json()["error"]["message"].startswith("You didn't provide an API key.")
    assert [(r.method, r.status) for r in fake.requests] == [("GET", 200), ("GET", 401)]


# ------------------------------------------------------------------- scripting


async def test_on_request_handler(fake: FakeModel, client: openai.AsyncOpenAI) -> None:
    fake.script(Reply.text("scripted first"))

    @fake.on_request
    async def answer(request: RecordedRequest) -> Reply:
        return Reply.text(f"you said {request.body['input']}")

    first = await stream_events(client, input="one")
    second = await stream_events(client, input="two")

    assert first[-1].type == "response.completed"
    assert first[-1].response.output_text == "scripted first"
    assert second[-1].type == "response.completed"
    assert second[-1].response.output_text == "you said two"

    fake.on_request(lambda request: Reply.text("sync handler"))
    third = await stream_events(client)
    assert third[-1].type == "response.completed"
    assert third[-1].response.output_text == "sync handler"


async def test_wait_for_requests_times_out(fake: FakeModel) -> None:
    with pytest.raises(TimeoutError, match="1 request"):
        await fake.wait_for_requests(1, timeout=0.05)
    with pytest.raises(TimeoutError):
        await fake.wait_for_change(timeout=0.05)


async def test_wait_for_change(fake: FakeModel, client: openai.AsyncOpenAI) -> None:
    gate = fake.gate()
    fake.script(Reply.text("hi", hold=gate))

    arrival = asyncio.ensure_future(fake.wait_for_change(timeout=TIMEOUT))
    stream = await create_stream(client)
    await arrival  # the request arrived
    assert len(fake.requests) == 1 and not fake.requests[0].done

    end = asyncio.ensure_future(fake.wait_for_change(timeout=TIMEOUT))
    gate.release()
    events = await collect(stream)
    await end
    assert events[-1].type == "response.completed"
    await fake.wait_until(lambda: fake.requests[0].done, timeout=TIMEOUT)
    assert fake.requests[0].completed


async def test_delay_first_delays_the_first_delta(
    fake: FakeModel, client: openai.AsyncOpenAI
) -> None:
    fake.script(Reply.text("slow start", delay_first=0.2, delay=0.01))

    events = await stream_events(client)

    assert events[-1].type == "response.completed"
    request = fake.requests[0]
    assert request.t_first_delta_ns is not None
    assert request.t_first_delta_ns - request.t_arrival_ns >= 200_000_000


def test_script_from_json(tmp_path: Path) -> None:
    path = tmp_path / "script.json"
    path.write_text(
        json.dumps(
            [
                "plain text",
                {"text": "hi", "chunks": 2, "usage": {"input_tokens": 3, "output_tokens": 1}},
                {"tool_call": {"name": "exec_command", "arguments": {"cmd": "ls"}}},
                {"items": [{"reasoning": "hmm"}, {"tool_call": {"name": "f", "arguments": "{}"}}]},
                {"http_error": 429, "retry_after": 1},
                {"cut": 5},
                {"error_event": "boom", "code": "server_error"},
                {"hang": True},
            ]
        )
    )

    replies = load_script(path)

    assert replies[0] == Reply.text("plain text")
    assert replies[1] == Reply.text("hi", chunks=2, usage=TokenUsage(3, 1))
    assert replies[2] == Reply.tool_call("exec_command", {"cmd": "ls"})
    assert replies[3] == Reply.reasoning("hmm") + Reply.tool_call("f", "{}")
    assert replies[4] == Reply.http_error(429, retry_after=1)
    assert replies[5] == Reply.cut(after=5)
    assert replies[6] == Reply.error_event("boom", code="server_error")
    assert replies[7] == Reply.hang()
    with pytest.raises(ValueError, match="unknown keys"):
        Reply.from_json({"text": "hi", "chunk": 2})


# ------------------------------------------------------------------- holding


async def test_hold_until_the_gate_is_released(fake: FakeModel, client: openai.AsyncOpenAI) -> None:
    gate = fake.gate()
    fake.script(Reply.text("one two three", hold=gate, hold_after=3))

    stream = await create_stream(client)
    received: list[tuple[int, bool]] = []

    async def consume() -> None:
        async for event in stream:
            received.append((event.sequence_number, gate.released))

    consumer = asyncio.create_task(consume())
    await gate.wait_reached(TIMEOUT)
    assert gate.reached and not gate.released
    assert not consumer.done()
    assert not fake.requests[0].completed

    gate.release()
    async with asyncio.timeout(TIMEOUT):
        await consumer

    # Events up to the hold point may arrive any time; everything after it only
    # once the gate was released.
    assert [n for n, _ in received] == list(range(11))
    assert all(released for n, released in received if n >= 4)
    assert fake.requests[0].completed


async def test_client_abort_of_a_held_stream_is_recorded(
    fake: FakeModel, client: openai.AsyncOpenAI
) -> None:
    gate = fake.gate()
    fake.script(Reply.text("never sent", hold=gate), Reply.text("next"))

    stream = await create_stream(client)
    async with asyncio.timeout(TIMEOUT):
        first = await anext(aiter(stream))
    assert first.type == "response.created"
    await gate.wait_reached(TIMEOUT)

    await stream.close()

    await fake.wait_until(lambda: fake.requests[0].aborted, timeout=TIMEOUT)
    request = fake.requests[0]
    assert request.done and not request.completed
    assert request.t_first_delta_ns is None
    # The fake carries on serving.
    events = await stream_events(client)
    assert events[-1].type == "response.completed"


async def test_stop_ends_hanging_streams() -> None:
    async with FakeModel(Reply.hang()) as model:
        async with openai.AsyncOpenAI(
            api_key="test", base_url=model.base_url, max_retries=0
        ) as sdk:
            stream = await create_stream(sdk)
            async with asyncio.timeout(TIMEOUT):
                first = await anext(aiter(stream))
                assert first.type == "response.created"
                await model.stop()
                with pytest.raises(openai.APIConnectionError):
                    async for _ in stream:
                        pass
        assert model.errors == []
        assert not model.requests[0].completed


# ------------------------------------------------------------------- throughput


async def test_twenty_thousand_deltas_arrive_in_order(
    fake: FakeModel, client: openai.AsyncOpenAI
) -> None:
    chunks = [f"{i}," for i in range(20_000)]
    fake.script(Reply.text("".join(chunks), chunks=chunks))

    deltas: list[str] = []
    last_type = ""
    async with asyncio.timeout(30):
        async with client.responses.with_streaming_response.create(
            model="gpt-test", input="go", stream=True
        ) as response:
            async for line in response.iter_lines():
                if line.startswith("data: "):
                    payload = json.loads(line[6:])
                    last_type = payload["type"]
                    if last_type == "response.output_text.delta":
                        deltas.append(payload["delta"])

    assert deltas == chunks
    assert "".join(deltas) == "".join(chunks)
    assert last_type == "response.completed"


async def test_many_deltas_are_written_fast(fake: FakeModel) -> None:
    fake.script(Reply.many_deltas(20_000))
    body = json.dumps({"model": "m", "input": "go", "stream": True}).encode()
    reader, writer = await asyncio.open_connection("127.0.0.1", fake.port)
    try:
        writer.write(
            b"POST /v1/responses HTTP/1.1\r\nhost: test\r\ncontent-type: application/json\r\n"
            b"content-length: %d\r\n\r\n%b" % (len(body), body)
        )
        data = bytearray()
        async with asyncio.timeout(TIMEOUT):
            while not data.endswith(b"\r\n0\r\n\r\n"):
                chunk = await reader.read(1 << 20)
                assert chunk, "connection closed early"
                data += chunk
    finally:
        writer.close()

    request = await fake.requests[0].wait_done(TIMEOUT)
    assert request.completed
    assert request.t_first_delta_ns is not None and request.t_done_ns is not None
    assert request.t_done_ns - request.t_first_delta_ns < 1_000_000_000
    assert data.count(b'"delta":"x"') == 20_000


# -------------------------------------------------------------- other ways to run


def test_run_in_thread_with_the_sync_client() -> None:
    with run_in_thread(Reply.text("from a thread")) as fake:
        fake.script(Reply.tool_call("exec_command", {"cmd": "ls"}, call_id="c1"))
        with openai.OpenAI(
            api_key="test", base_url=fake.base_url, max_retries=0, timeout=TIMEOUT
        ) as sdk:
            texts = []
            for _ in range(2):
                stream = sdk.responses.create(model="gpt-test", input="hi", stream=True)
                final = list(stream)[-1]
                assert final.type == "response.completed"
                texts.append(final.response.output)
        requests = fake.wait_for_requests(2, timeout=TIMEOUT)
    assert len(requests) == 2
    assert texts[0][0].type == "message"
    assert texts[1][0].type == "function_call" and texts[1][0].call_id == "c1"


async def test_standalone_server(tmp_path: Path) -> None:
    script = tmp_path / "replies.json"
    script.write_text(json.dumps([{"text": "hi from the cli"}, {"http_error": 429}]))
    async with serving_cli("--script", str(script)) as base_url:
        assert base_url.endswith("/v1")
        async with openai.AsyncOpenAI(api_key="test", base_url=base_url, max_retries=0) as sdk:
            events = await stream_events(sdk)
            assert events[-1].type == "response.completed"
            assert events[-1].response.output_text == "hi from the cli"
            with pytest.raises(openai.RateLimitError):
                await create_stream(sdk)


async def test_client_leaving_a_fast_stream_is_recorded(
    fake: FakeModel, client: openai.AsyncOpenAI
) -> None:
    # Far more than the socket buffers hold, so the fake is still writing.
    fake.script(Reply.many_deltas(200_000), Reply.text("still serving"))

    stream = await create_stream(client)
    async with asyncio.timeout(TIMEOUT):
        async for event in stream:
            if event.type == "response.output_text.delta":
                break
    await stream.close()

    request = await fake.requests[0].wait_done(TIMEOUT)
    assert request.aborted and not request.completed
    events = await stream_events(client)
    assert events[-1].type == "response.completed"
