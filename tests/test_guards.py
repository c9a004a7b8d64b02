"""A turn stops by itself, readably, when the model loops: after too many
model requests, or when it repeats one tool call with the same arguments."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from agentls.agent.errors import TurnFailed
from agentls.testing.fake_model import FakeModel, RecordedRequest, Reply

from .support import WAIT, running_agent


async def test_a_turn_stops_after_the_request_limit(tmp_path: Path) -> None:
    counter = iter(range(1000))

    def model(request: RecordedRequest) -> Reply:
        return Reply.tool_call("exec_command", {"cmd": f"echo {next(counter)}"})

    options = {"max_requests_per_turn": 4}
    async with (
        FakeModel(on_request=model) as fake,
        running_agent(fake.base_url, tmp_path, agent_options=options) as (agent, log),
    ):
        with anyio.fail_after(WAIT), pytest.raises(TurnFailed) as caught:
            await agent.prompt("never stop")
        finished = await log.wait_finished(1)
    assert len(fake.requests) == 4
    assert "reached 4 model requests" in str(caught.value)
    assert finished.status == "failed" and finished.error == str(caught.value)
    # Every call was answered: the conversation goes on from here.
    items = agent.history.items()
    calls = [i["call_id"] for i in items if i["type"] == "function_call"]
    outputs = [i["call_id"] for i in items if i["type"] == "function_call_output"]
    assert calls == outputs and len(calls) == 4


async def test_the_same_call_five_times_in_a_row_stops_the_turn(tmp_path: Path) -> None:
    def model(request: RecordedRequest) -> Reply:
        return Reply.tool_call("exec_command", {"cmd": "echo again >> runs.txt"})

    async with (
        FakeModel(on_request=model) as fake,
        running_agent(fake.base_url, tmp_path) as (agent, log),
    ):
        with anyio.fail_after(WAIT), pytest.raises(TurnFailed) as caught:
            await agent.prompt("loop")
        await log.wait_finished(1)
    assert "the same arguments 5 times in a row" in str(caught.value)
    assert len(fake.requests) == 5
    # Four ran; the fifth was answered with why it did not.
    assert (tmp_path / "runs.txt").read_text() == "again\n" * 4
    outputs = [i["output"] for i in agent.history.items() if i["type"] == "function_call_output"]
    assert len(outputs) == 5 and outputs[-1] == str(caught.value)
    assert outputs[-1].startswith("Stopped: the model called exec_command")


async def test_different_calls_do_not_count_as_repeats(tmp_path: Path) -> None:
    replies = [Reply.tool_call("exec_command", {"cmd": f"echo {n % 2}"}) for n in range(8)]
    async with (
        FakeModel(*replies, Reply.text("done")) as fake,
        running_agent(fake.base_url, tmp_path) as (agent, _),
    ):
        with anyio.fail_after(WAIT):
            assert (await agent.prompt("alternate")).final_message == "done"
