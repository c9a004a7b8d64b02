"""Stream shapes real servers send that the recordings do not all hold:
multi-line ``data:`` events, CR line ends, U+2028 in a JSON string, refusals,
call arguments streamed as progress, freeform (custom tool) calls, hosted web
searches with their sources and citations — served byte for byte by the fake
(``Reply.raw_sse``) to the real SDK, read by a real agent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio

from agentls.agent.settings import Settings
from agentls.testing.fake_model import FakeModel, Reply

from .support import WAIT, running_agent


def sse(*events: dict[str, Any], ending: bytes = b"\n") -> bytes:
    """Events framed as OpenAI frames them (``event:``/``data:``, blank line)."""
    out = b""
    for event in events:
        out += f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()
    return out.replace(b"\n", ending) if ending != b"\n" else out


def completed(*output: dict[str, Any]) -> dict[str, Any]:
    usage = {"input_tokens": 12, "output_tokens": 3, "total_tokens": 15}
    return {
        "type": "response.completed",
        "response": {"id": "resp_1", "status": "completed", "output": list(output), "usage": usage},
    }


def message(text: str, **part: Any) -> dict[str, Any]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": [], **part}],
    }


def delta(text: str) -> dict[str, Any]:
    return {"type": "response.output_text.delta", "output_index": 0, "delta": text}


def done(item: dict[str, Any], index: int = 0) -> dict[str, Any]:
    return {"type": "response.output_item.done", "output_index": index, "item": item}


def added(item: dict[str, Any], index: int = 0) -> dict[str, Any]:
    return {"type": "response.output_item.added", "output_index": index, "item": item}


async def test_multi_line_data_and_cr_line_ends(tmp_path: Path) -> None:
    # One event's JSON over two ``data:`` lines (joined with LF by SSE rules),
    # then a stream whose lines end in CR alone.
    split = b'event: response.output_text.delta\ndata: {"type":"response.output_text.delta",\n'
    split += b'data: "delta":"two lines "}\n\n'
    first = split + sse(delta("joined"), done(message("two lines joined")), completed())
    second = sse(delta("cr only"), done(message("cr only")), completed(), ending=b"\r")
    async with (
        FakeModel(Reply.raw_sse(first), Reply.raw_sse(second)) as fake,
        running_agent(fake.base_url, tmp_path) as (agent, log),
    ):
        with anyio.fail_after(WAIT):
            assert (await agent.prompt("one")).final_message == "two lines joined"
            assert (await agent.prompt("two")).final_message == "cr only"
        await log.wait_finished(2)
        assert "".join(e.text for e in log.of("message.delta")) == "two lines joinedcr only"


async def test_a_line_separator_inside_a_string_does_not_split_the_line(tmp_path: Path) -> None:
    text = "before\u2028middle\u2029after\x85end"
    raw = sse(delta(text), done(message(text)), completed())
    raw = raw.replace(json.dumps(text)[1:-1].encode(), text.encode())  # unescaped, as allowed
    assert "\u2028".encode() in raw
    async with (
        FakeModel(Reply.raw_sse(raw)) as fake,
        running_agent(fake.base_url, tmp_path) as (agent, log),
    ):
        with anyio.fail_after(WAIT):
            assert (await agent.prompt("go")).final_message == text
        await log.wait_finished(1)
        assert "".join(e.text for e in log.of("message.delta")) == text


async def test_a_refusal_is_an_answer_the_user_reads(tmp_path: Path) -> None:
    refusal = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "refusal", "refusal": "I can't help with that."}],
    }
    raw = sse(
        added({**refusal, "content": []}),
        {"type": "response.refusal.delta", "output_index": 0, "delta": "I can't "},
        {"type": "response.refusal.delta", "output_index": 0, "delta": "help with that."},
        done(refusal),
        completed(),
    )
    async with (
        FakeModel(Reply.raw_sse(raw), Reply.text("fine")) as fake,
        running_agent(fake.base_url, tmp_path) as (agent, log),
    ):
        with anyio.fail_after(WAIT):
            outcome = await agent.prompt("do something bad")
            assert outcome.final_message == "I can't help with that."
        await log.wait_finished(1)
        assert [e.text for e in log.of("message.refusal")] == ["I can't help with that."]
        assert "".join(e.text for e in log.of("message.delta")) == "I can't help with that."
        # The refusal stays in the conversation, as the model said it.
        with anyio.fail_after(WAIT):
            await agent.prompt("something else")
        sent = fake.requests[1].body["input"]
        assert sent[1]["content"] == refusal["content"] and "id" not in sent[1]


async def test_call_arguments_streaming_show_as_progress(tmp_path: Path) -> None:
    patch = "*** Begin Patch\n*** Add File: big.txt\n" + "+line\n" * 900 + "*** End Patch\n"
    async with (
        FakeModel(
            Reply.tool_call("apply_patch", {"patch": patch}, chunks=50), Reply.text("done")
        ) as fake,
        running_agent(fake.base_url, tmp_path) as (agent, log),
    ):
        with anyio.fail_after(WAIT):
            await agent.prompt("write it")
        await log.wait_finished(1)
    preparing = log.of("tool.preparing")
    # Said when the call starts, and again as its arguments grow (every 2 KiB).
    assert [e.title for e in preparing] == ["Writing a patch…"] * len(preparing)
    assert preparing[0].chars == 0 and len(preparing) >= 3
    assert [e.chars for e in preparing] == sorted(e.chars for e in preparing)
    kinds = log.kinds(1)
    assert kinds.index("tool.preparing") < kinds.index("tool.started")
    assert (tmp_path / "big.txt").read_text() == "line\n" * 900


async def test_a_freeform_call_of_our_tool_is_run_and_answered(tmp_path: Path) -> None:
    patch = "*** Begin Patch\n*** Add File: free.txt\n+freeform\n*** End Patch"
    call = {
        "id": "ctc_1",
        "type": "custom_tool_call",
        "status": "completed",
        "call_id": "call_free",
        "name": "apply_patch",
        "input": patch,
    }
    raw = sse(
        added({**call, "input": ""}),
        {"type": "response.custom_tool_call_input.delta", "output_index": 0, "delta": patch},
        done(call),
        completed(),
    )
    async with (
        FakeModel(Reply.raw_sse(raw), Reply.text("ok")) as fake,
        running_agent(fake.base_url, tmp_path) as (agent, log),
    ):
        with anyio.fail_after(WAIT):
            await agent.prompt("edit")
        await log.wait_finished(1)
    assert (tmp_path / "free.txt").read_text() == "freeform\n"
    output = fake.requests[1].body["input"][-1]
    assert output["type"] == "custom_tool_call_output" and output["call_id"] == "call_free"
    assert [e.title for e in log.of("tool.preparing")] == ["Writing a patch…"]


async def test_web_search_is_offered_shown_with_sources_and_cited(tmp_path: Path) -> None:
    search = {
        "id": "ws_1",
        "type": "web_search_call",
        "status": "completed",
        "action": {
            "type": "search",
            "query": "agentls release",
            "sources": [
                {"type": "url", "url": "https://example.com/a", "title": "A"},
                {"type": "url", "url": "https://example.com/b"},
            ],
        },
    }
    note = {
        "type": "url_citation",
        "url": "https://example.com/a",
        "title": "A",
        "start_index": 0,
        "end_index": 5,
    }
    answer = message("Found it.", annotations=[note])
    raw = sse(
        added({**search, "status": "in_progress"}),
        {"type": "response.web_search_call.searching", "output_index": 0},
        done(search),
        delta("Found it."),
        done(answer, 1),
        completed(),
    )
    settings = Settings(web_search=True)
    async with (
        FakeModel(Reply.raw_sse(raw), Reply.text("again")) as fake,
        running_agent(fake.base_url, tmp_path, settings=settings) as (agent, log),
    ):
        with anyio.fail_after(WAIT):
            await agent.prompt("search")
            await agent.prompt("more")
        await log.wait_finished(2)
    body = fake.requests[0].body
    assert {"type": "web_search"} in body["tools"]
    assert "web_search_call.action.sources" in body["include"]
    assert [e.title for e in log.of("tool.preparing")] == ["Searching the web…"]
    started = log.of("tool.started")[0]
    assert (started.tool, started.title) == ("web_search", "Searched the web: agentls release")
    finished = log.of("tool.finished")[0]
    assert finished.sources == [
        {"url": "https://example.com/a", "title": "A"},
        {"url": "https://example.com/b"},
    ]
    assert "https://example.com/b" in log.tool_text()
    citation = log.of("message.citations")[0].citations[0]
    assert (citation.url, citation.title, citation.start_index) == ("https://example.com/a", "A", 0)
    # The search goes back to the model (without its id); nothing needs answering.
    sent = fake.requests[1].body["input"]
    assert {k: v for k, v in search.items() if k != "id"} in sent


async def test_web_search_is_off_by_default(tmp_path: Path) -> None:
    async with (
        FakeModel(Reply.text("hi")) as fake,
        running_agent(fake.base_url, tmp_path) as (agent, _),
    ):
        with anyio.fail_after(WAIT):
            await agent.prompt("hello")
    body = fake.requests[0].body
    assert all(tool.get("type") == "function" for tool in body["tools"])
    assert "web_search_call.action.sources" not in body.get("include", [])


async def test_hosted_items_we_never_offered_do_not_go_back(tmp_path: Path) -> None:
    interpreter = {
        "id": "ci_1",
        "type": "code_interpreter_call",
        "status": "completed",
        "code": "1+1",
        "container_id": "c",
        "outputs": [],
    }
    raw = sse(done(interpreter), delta("2"), done(message("2"), 1), completed())
    async with (
        FakeModel(Reply.raw_sse(raw), Reply.text("ok")) as fake,
        running_agent(fake.base_url, tmp_path) as (agent, _),
    ):
        with anyio.fail_after(WAIT):
            await agent.prompt("add")
            await agent.prompt("again")
    types = [item["type"] for item in fake.requests[1].body["input"]]
    assert types == ["message", "message", "message"]
