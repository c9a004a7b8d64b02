"""Long sessions never dead-end: the context meter, automatic compaction, a
request the model finds too long compacted and sent again, the mechanical
trim — against the strict fake with a small context window, which refuses
(as the real API does) every request that does not fit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from agentls.agent.compaction import SUMMARY_INSTRUCTIONS, SUMMARY_PREFIX, is_summary
from agentls.agent.errors import TurnFailed
from agentls.testing.fake_model import FakeModel, RecordedRequest, Reply, estimate_input_tokens

from .support import WAIT, running_agent

PRINT_6K = "python3 -c \"print('x' * 6000)\""


def texts(body: dict[str, Any]) -> list[str]:
    """The user messages of a request, in order."""
    return [
        part["text"]
        for item in body["input"]
        if item.get("type") == "message" and item.get("role") == "user"
        for part in item["content"]
    ]


def long_session_model(request: RecordedRequest) -> Reply:
    """A model that runs one large command per prompt, then answers; and
    summarises when asked to."""
    body = request.body
    if body["instructions"] == SUMMARY_INSTRUCTIONS:
        asked = [t for t in texts(body) if t.startswith("report")]
        return Reply.text(f"Summary: printed {len(asked)} reports so far, all fine.")
    last = body["input"][-1]
    if last["type"] == "function_call_output" or is_summary(last):
        return Reply.text("Printed it.")
    return Reply.tool_call("exec_command", {"cmd": PRINT_6K})


async def test_thirty_turns_with_large_outputs_in_a_small_window(tmp_path: Path) -> None:
    window = 12_000
    prompts = [f"report {n}: print the big file and tell me when done" for n in range(1, 31)]
    options = {"context_window": window}
    async with (
        FakeModel(on_request=long_session_model, context_window=window) as fake,
        running_agent(fake.base_url, tmp_path, agent_options=options) as (agent, log),
    ):
        for prompt in prompts:
            with anyio.fail_after(WAIT * 3):
                outcome = await agent.prompt(prompt)
            assert outcome.final_message == "Printed it."
            assert outcome.context is not None and outcome.context.window == window
        await log.wait_finished(30)
    statuses = [e.status for e in log.of("turn.finished")]
    assert statuses == ["completed"] * 30
    # Every request fitted: the fake refused none (it would have, with a 400).
    assert all(r.refusal is None for r in fake.requests)
    assert all(estimate_input_tokens(r.body) <= window for r in fake.requests)
    compactions = log.of("compaction.finished")
    assert len(compactions) >= 3
    assert all(c.mode == "summary" and c.after_tokens < c.before_tokens for c in compactions)
    assert all(c.before_tokens > window * 0.85 for c in compactions)
    # The user's own words survive every compaction, the first prompt included.
    last = fake.requests[-1].body
    assert [t for t in texts(last) if not t.startswith(SUMMARY_PREFIX)] == prompts
    assert sum(t.startswith(SUMMARY_PREFIX) for t in texts(last)) == 1
    # The meter: every usage event says how full the window is.
    usage = log.of("usage")
    assert usage and all(e.context.window == window for e in usage)
    assert all(0 < e.context.tokens <= window for e in usage)


async def test_the_meter_agrees_with_the_server(tmp_path: Path) -> None:
    """The estimate of the next request is what the (fake) server then counts."""
    async with (
        FakeModel(
            Reply.tool_call("exec_command", {"cmd": "echo hi"}),
            Reply.text("done"),
            Reply.text("more"),
        ) as fake,
        running_agent(fake.base_url, tmp_path) as (agent, _),
    ):
        with anyio.fail_after(WAIT):
            first = await agent.prompt("one")
            assert first.context is not None
            predicted = agent.context_size().tokens
            await agent.prompt("two")
    sent = fake.requests[2].body
    assert first.context.tokens == predicted
    # "two" was added after the prediction; everything else was counted exactly.
    from agentls.agent.context import estimate_tokens

    assert estimate_input_tokens(sent) == predicted + estimate_tokens(sent["input"][-1])


async def test_too_long_for_the_model_compacts_and_retries_once(tmp_path: Path) -> None:
    """Auto-compaction off: the server's own context_length_exceeded (in the
    stream, as the real API sends it) triggers the compaction."""
    window = 6_000
    big = "y" * 12_000
    options = {"context_window": window, "auto_compact": 0.0}
    async with FakeModel(context_window=window) as fake:
        fake.script(
            Reply.tool_call("exec_command", {"cmd": f"echo {big}"}),
            Reply.text("Summary: printed many y."),
            Reply.text("Done."),
        )
        async with running_agent(fake.base_url, tmp_path, agent_options=options) as (agent, log):
            with anyio.fail_after(WAIT):
                outcome = await agent.prompt("print ys")
            await log.wait_finished(1)
    assert outcome.final_message == "Done."
    refused = [r for r in fake.requests if r.refusal is not None]
    assert len(refused) == 1 and refused[0].refusal is not None
    assert refused[0].refusal.code == "context_length_exceeded"
    assert [e.reason for e in log.of("compaction.started")] == ["overflow"]
    assert texts(fake.requests[-1].body)[0] == "print ys"


async def test_a_400_context_length_exceeded_also_compacts(tmp_path: Path) -> None:
    too_long = Reply.http_error(
        400,
        message="Your input exceeds the context window of this model.",
        code="context_length_exceeded",
        param="input",
    )
    async with (
        FakeModel(too_long, Reply.text("Summary: nothing yet."), Reply.text("ok")) as fake,
        running_agent(fake.base_url, tmp_path) as (agent, log),
    ):
        with anyio.fail_after(WAIT):
            assert (await agent.prompt("hello")).final_message == "ok"
    assert [e.reason for e in log.of("compaction.started")] == ["overflow"]
    assert fake.requests[1].body["instructions"] == SUMMARY_INSTRUCTIONS


async def test_still_too_long_after_compacting_ends_the_turn_readably(tmp_path: Path) -> None:
    def too_long() -> Reply:
        return Reply.http_error(400, message="Too long.", code="context_length_exceeded")

    async with (
        FakeModel(too_long(), Reply.text("Summary."), too_long()) as fake,
        running_agent(fake.base_url, tmp_path) as (agent, _),
    ):
        with anyio.fail_after(WAIT), pytest.raises(TurnFailed) as caught:
            await agent.prompt("hello")
    assert "still does not fit" in str(caught.value) and len(fake.requests) == 3


async def test_when_no_summary_can_be_had_old_outputs_are_cut(tmp_path: Path) -> None:
    window = 7_000
    options = {"context_window": window}

    def model(request: RecordedRequest) -> Reply:
        if request.body["instructions"] == SUMMARY_INSTRUCTIONS:
            return Reply.http_error(503)  # no summary, whatever the retries
        return long_session_model(request)

    async with (
        FakeModel(on_request=model, context_window=window) as fake,
        running_agent(fake.base_url, tmp_path, agent_options=options) as (agent, log),
    ):
        with anyio.fail_after(WAIT * 2):
            for n in range(4):
                assert (await agent.prompt(f"report {n}")).final_message == "Printed it."
        await log.wait_finished(4)
    finished = log.of("compaction.finished")
    assert finished and all(c.mode == "trim" for c in finished)
    assert all(c.after_tokens <= window * 0.85 / 2 for c in finished)
    last = fake.requests[-1].body
    assert texts(last) == [f"report {n}" for n in range(4)]
    outputs_sent = [i["output"] for i in last["input"] if i["type"] == "function_call_output"]
    assert any("bytes cut to fit the context window" in o for o in outputs_sent)
    assert all(r.refusal is None for r in fake.requests)


async def test_steers_survive_compaction_word_for_word(tmp_path: Path) -> None:
    gate_reply = Reply.tool_call("exec_command", {"cmd": "python3 -c \"print('x' * 12000)\""})
    async with FakeModel(context_window=5_000) as fake:
        gate = fake.gate()
        fake.script(
            gate_reply.with_hold(gate, after=2),
            Reply.text("Summary: printed once."),
            Reply.text("All done."),
        )
        options = {"context_window": 5_000}
        async with running_agent(fake.base_url, tmp_path, agent_options=options) as (agent, log):
            turn = agent.prompt("print it")
            with anyio.fail_after(WAIT):
                await gate.wait_reached()
                turn.control.steer("and mind the tabs")
                gate.release()
                await turn
    steered = texts(fake.requests[-1].body)
    assert steered[:2] == ["print it", "and mind the tabs"]
    assert [c.mode for c in log.of("compaction.finished")] == ["summary"]
