"""Strict mode: the fake refuses what the real Responses API refuses, in its words."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx2
import openai
import pytest
from openai.types.responses import response_create_params

from agentls.testing.fake_model import (
    RESPONSES_CREATE_PARAMS,
    FakeModel,
    RecordedRequest,
    Reply,
    estimate_input_tokens,
)

from .support import TIMEOUT, create, sdk, serving_cli, user

PAIRING_ERROR = {"type": "invalid_request_error", "param": "input", "code": None}
OVERFLOW_ERROR = {
    "message": "Your input exceeds the context window of this model. "
    "Please adjust your input and try again.",
    "type": "invalid_request_error",
    "param": "input",
    "code": "context_length_exceeded",
}


def call(kind: str, call_id: str) -> dict[str, Any]:
    """A client-side call item of ``kind`` as a client sends it back."""
    if kind == "function_call":
        return {"type": kind, "call_id": call_id, "name": "exec_command", "arguments": "{}"}
    if kind == "custom_tool_call":
        return {"type": kind, "call_id": call_id, "name": "apply_patch", "input": "*** Begin"}
    if kind == "shell_call":
        commands = {"commands": ["ls"]}
        return {"type": kind, "id": "sh_1", "call_id": call_id, "action": commands}
    if kind == "local_shell_call":
        exec_ = {"type": "exec", "command": ["ls"], "env": {}}
        return {"type": kind, "id": "lsh_1", "call_id": call_id, "action": exec_}
    assert kind == "apply_patch_call"
    operation = {"type": "delete_file", "path": "a.txt"}
    return {"type": kind, "call_id": call_id, "operation": operation, "status": "completed"}


def output(kind: str, call_id: str) -> dict[str, Any]:
    """The output item that answers a ``kind`` call."""
    if kind == "local_shell_call":  # its output names the call by ``id``
        return {"type": "local_shell_call_output", "id": call_id, "output": "a.txt"}
    if kind == "shell_call":
        result = [{"stdout": "", "stderr": "", "outcome": {"type": "exit", "exit_code": 0}}]
        return {"type": "shell_call_output", "call_id": call_id, "output": result}
    if kind == "apply_patch_call":
        return {"type": "apply_patch_call_output", "call_id": call_id, "status": "completed"}
    return {"type": f"{kind}_output", "call_id": call_id, "output": "done"}


CALLS = {
    "function_call": "function call",
    "custom_tool_call": "custom tool call",
    "shell_call": "shell call",
    "local_shell_call": "local shell call",
    "apply_patch_call": "apply patch call",
}


def refused(request: RecordedRequest, status: int, code: str | None = None) -> None:
    assert request.refused and request.refusal is not None
    assert (request.status, request.refusal.status, request.refusal.code) == (status, status, code)
    assert request.completed and request.reply is None


# ------------------------------------------------------------- tool call pairing


@pytest.mark.parametrize("kind", list(CALLS))
async def test_a_call_without_its_output_is_refused(
    fake: FakeModel, client: openai.AsyncOpenAI, kind: str
) -> None:
    fake.script(Reply.text("kept for the next request"))

    with pytest.raises(openai.BadRequestError) as caught:
        await create(client, [user("go"), call(kind, "call_a")])

    assert caught.value.status_code == 400
    assert caught.value.body == {
        **PAIRING_ERROR,
        "message": f"No tool output found for {CALLS[kind]} call_a.",
    }
    refused(fake.requests[0], 400)
    # The refusal took no scripted reply: the next, valid, request gets it.
    assert fake.pending == 1
    answer = await create(client, [user("go"), call(kind, "call_a"), output(kind, "call_a")])
    assert answer.output_text == "kept for the next request"
    assert not fake.requests[1].refused


@pytest.mark.parametrize("kind", list(CALLS))
async def test_an_output_without_its_call_is_refused(
    fake: FakeModel, client: openai.AsyncOpenAI, kind: str
) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        await create(client, [user("go"), call(kind, "call_a"), output(kind, "call_b")])

    # The call comes first in input, so it is what the fake reports.
    assert caught.value.body == {
        **PAIRING_ERROR,
        "message": f"No tool output found for {CALLS[kind]} call_a.",
    }
    with pytest.raises(openai.BadRequestError) as caught:
        await create(client, [user("go"), output(kind, "call_b")])
    assert caught.value.body == {
        **PAIRING_ERROR,
        "message": f"No tool call found for {CALLS[kind]} output with call_id call_b.",
    }
    assert [r.status for r in fake.requests] == [400, 400]
    assert fake.pending == 0


async def test_an_output_answers_only_a_call_of_its_own_kind(
    fake: FakeModel, client: openai.AsyncOpenAI
) -> None:
    with pytest.raises(openai.BadRequestError, match="No tool output found for function call c1"):
        await create(client, [call("function_call", "c1"), output("custom_tool_call", "c1")])


async def test_the_tool_loop_of_a_real_client_passes(
    fake: FakeModel, client: openai.AsyncOpenAI
) -> None:
    """What a client does after a tool call -- send back the call (as the SDK
    gives it, less its id: ``store`` is false) and its output -- is accepted,
    hosted calls needing no output."""
    fake.script(Reply.reasoning("think") + Reply.tool_call("exec_command", {"cmd": "ls"}))
    fake.script(Reply.text("done"))
    history: list[dict[str, Any]] = [user("go")]
    first = await create(client, history, store=False, include=["reasoning.encrypted_content"])
    history += [item.model_dump(exclude_none=True, exclude={"id"}) for item in first.output]
    history.append(output("function_call", "call_1"))
    history.append({"type": "web_search_call", "status": "completed"})

    second = await create(client, history, store=False)

    assert second.output_text == "done"
    assert not any(r.refused for r in fake.requests)


async def test_an_output_of_a_stored_call_is_accepted(
    fake: FakeModel, client: openai.AsyncOpenAI
) -> None:
    """With ``previous_response_id`` the call may be stored server-side."""
    fake.script(Reply.text("ok"))
    answer = await create(
        client, [output("function_call", "call_1")], previous_response_id="resp_1"
    )
    assert answer.output_text == "ok"
    with pytest.raises(openai.BadRequestError, match="No tool output found for function call c2"):
        await create(client, [call("function_call", "c2")], previous_response_id="resp_1")


# ------------------------------------------------------------------- parameters


async def test_an_unknown_parameter_is_refused(fake: FakeModel, client: openai.AsyncOpenAI) -> None:
    fake.script(Reply.text("ok"))
    with pytest.raises(openai.BadRequestError) as caught:
        await create(client, [user("go")], extra_body={"temperatur": 0.5})

    assert caught.value.body == {
        "message": "Unknown parameter: 'temperatur'.",
        "type": "invalid_request_error",
        "param": "temperatur",
        "code": "unknown_parameter",
    }
    assert caught.value.code == "unknown_parameter"
    refused(fake.requests[0], 400, "unknown_parameter")
    assert fake.pending == 1


async def test_every_documented_parameter_is_accepted(
    fake: FakeModel, client: openai.AsyncOpenAI
) -> None:
    fake.script(Reply.text("ok"))
    answer = await create(
        client,
        [user("go")],
        instructions="be brief",
        tools=[{"type": "function", "name": "f", "parameters": {}, "strict": False}],
        tool_choice="auto",
        parallel_tool_calls=False,
        reasoning={"effort": "low", "summary": "auto"},
        store=False,
        include=["reasoning.encrypted_content"],
        prompt_cache_key="pane-1",
        service_tier="priority",
        metadata={"k": "v"},
        text={"format": {"type": "text"}},
        max_output_tokens=100,
        truncation="disabled",
        user="u",
        safety_identifier="s",
        temperature=1.0,
        top_p=1.0,
        max_tool_calls=3,
        top_logprobs=0,
        background=False,
    )
    assert answer.output_text == "ok"


def test_the_parameters_are_the_sdks() -> None:
    """The fake accepts exactly what ``responses.create`` sends (stream included);
    this fails when an SDK upgrade adds or drops one, to be mirrored in strict.py."""
    streaming = response_create_params.ResponseCreateParamsStreaming
    sdk_params = streaming.__required_keys__ | streaming.__optional_keys__
    assert sdk_params == RESPONSES_CREATE_PARAMS


# ---------------------------------------------------------------- stored item ids


async def test_stored_item_ids_are_refused_by_default() -> None:
    items = [user("go"), {"type": "reasoning", "id": "rs_1", "summary": []}]
    async with FakeModel(Reply.text("ok")) as fake, sdk(fake) as client:
        with pytest.raises(openai.NotFoundError) as caught:
            await create(client, items, store=False)
        assert caught.value.status_code == 404
        assert caught.value.body == {
            "message": "Item with id 'rs_1' not found. Items are not persisted when `store` is "
            "set to false. Try again with `store` set to true, or remove this item from your "
            "input.",
            "type": "invalid_request_error",
            "param": "input",
            "code": None,
        }
        refused(fake.requests[0], 404)
        # With store on (the API's default) an id names a stored item: accepted.
        assert (await create(client, items)).output_text == "ok"
        # A local shell call's output names its call by ``id``: not a stored item.
        fake.script(Reply.text("ok"))
        shell = [call("local_shell_call", "c1"), output("local_shell_call", "c1")]
        shell[0].pop("id")
        assert (await create(client, shell, store=False)).output_text == "ok"
        assert fake.errors == []


async def test_stored_item_ids_are_accepted_when_the_check_is_off() -> None:
    items = [user("go"), {"type": "reasoning", "id": "rs_1", "summary": []}]
    async with (
        FakeModel(Reply.text("ok"), reject_stored_item_ids=False) as fake,
        sdk(fake) as client,
    ):
        assert (await create(client, items, store=False)).output_text == "ok"


# ------------------------------------------------------------------ strict off


async def test_strict_off_accepts_odd_requests() -> None:
    async with FakeModel(strict=False) as fake, sdk(fake) as client:
        fake.script(Reply.text("one"), Reply.text("two"))
        first = await create(client, [call("function_call", "c1")], extra_body={"odd": True})
        second = await create(client, [output("custom_tool_call", "c2")])
        assert (first.output_text, second.output_text) == ("one", "two")
        assert not any(r.refused for r in fake.requests)
        assert fake.errors == []


# ------------------------------------------------------------- context window


async def test_input_over_the_context_window_is_refused() -> None:
    items = [user("x" * 100)]
    window = estimate_input_tokens({"input": items})
    async with FakeModel(context_window=window) as fake, sdk(fake) as client:
        fake.script(Reply.text("fits"))
        assert (await create(client, items)).output_text == "fits"  # exactly the window: fine

        with pytest.raises(openai.BadRequestError) as caught:
            await create(client, items, instructions="one more token")
        assert caught.value.body == OVERFLOW_ERROR
        refused(fake.requests[1], 400, "context_length_exceeded")
        assert fake.errors == []


async def test_a_streamed_request_over_the_window_fails_in_the_stream() -> None:
    """As the real API does: the stream starts, then an ``error`` event (its
    error nested) and ``response.failed`` -- the SDK raises at the error."""
    async with FakeModel(Reply.text("never"), context_window=1) as fake, sdk(fake) as client:
        async with asyncio.timeout(TIMEOUT):
            stream = await client.responses.create(model="m", input="too long", stream=True)
            seen: list[str] = []
            with pytest.raises(openai.APIError) as caught:
                async for event in stream:
                    seen.append(event.type)
        assert seen == ["response.created", "response.in_progress"]
        assert caught.value.code == "context_length_exceeded"
        assert caught.value.body == OVERFLOW_ERROR

        async with httpx2.AsyncClient(timeout=TIMEOUT) as http:
            body = {"model": "m", "input": "too long", "stream": True}
            response = await http.post(f"{fake.base_url}/responses", json=body)
        events = [
            json.loads(line.removeprefix("data: "))
            for line in response.text.splitlines()
            if line.startswith("data: ")
        ]
        assert [e["type"] for e in events] == [
            "response.created",
            "response.in_progress",
            "error",
            "response.failed",
        ]
        assert [e["sequence_number"] for e in events] == [0, 1, 2, 3]
        failed = events[-1]["response"]
        assert failed["status"] == "failed" and failed["usage"] is None
        assert failed["error"]["code"] == "context_length_exceeded"
        assert [r.status for r in fake.requests] == [200, 200]
        assert all(r.refusal and r.refusal.code == "context_length_exceeded" for r in fake.requests)
        assert fake.pending == 1


# ----------------------------------------------------------------- command line


async def test_cli_flags(tmp_path: Path) -> None:
    script = tmp_path / "replies.json"
    script.write_text(json.dumps(["one", "two"]))
    async with (
        serving_cli("--script", str(script), "--context-window", "3") as base_url,
        httpx2.AsyncClient(timeout=TIMEOUT) as http,
    ):
        small = await http.post(f"{base_url}/responses", json={"input": "abc"})
        large = await http.post(f"{base_url}/responses", json={"input": "abcd" * 4})
        unknown = await http.post(f"{base_url}/responses", json={"inptu": "x"})
    assert small.status_code == 200 and small.json()["output"][0]["content"][0]["text"] == "one"
    assert large.json()["error"]["code"] == "context_length_exceeded"
    assert unknown.json()["error"]["code"] == "unknown_parameter"

    stored_item = {"type": "reasoning", "id": "rs_9", "summary": []}
    async with (
        serving_cli("--script", str(script), "--no-strict", "--reject-stored-item-ids") as base_url,
        httpx2.AsyncClient(timeout=TIMEOUT) as http,
    ):
        odd = await http.post(f"{base_url}/responses", json={"inptu": "x"})
        stored = await http.post(
            f"{base_url}/responses", json={"store": False, "input": [stored_item]}
        )
    assert odd.status_code == 200
    assert stored.status_code == 404 and "'rs_9' not found" in stored.json()["error"]["message"]
