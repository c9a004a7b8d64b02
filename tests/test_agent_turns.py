"""Agent core: turns, FIFO, steering, settings, events — through the real SDK
against the fake Responses server over HTTP."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from agentls.agent.errors import (
    AgentStopped,
    InvalidRequest,
    SteerQueueFull,
    TurnFailed,
    TurnNotSteerable,
)
from agentls.agent.settings import SettingChange
from agentls.testing.fake_model import FakeModel, Reply

from .support import WAIT, running_agent


def user_texts(body: dict[str, Any]) -> list[str]:
    return [
        part["text"]
        for item in body["input"]
        if item.get("type") == "message" and item.get("role") == "user"
        for part in item["content"]
    ]


def kinds_of(body: dict[str, Any]) -> list[str]:
    return [item["type"] for item in body["input"]]


async def test_turn_streams_and_completes(tmp_path: Path) -> None:
    async with FakeModel() as fake, running_agent(fake.base_url, tmp_path) as (agent, log):
        fake.script(
            Reply.text("Hello there, world", usage={"input_tokens": 11, "output_tokens": 3})
        )
        with anyio.fail_after(WAIT):
            outcome = await agent.prompt("hi")
        assert outcome.final_message == "Hello there, world"
        assert outcome.usage.input_tokens == 11 and outcome.usage.output_tokens == 3
        assert agent.history.items()[-1]["type"] == "message"
        await log.wait_finished(1)
        deltas = "".join(e.text for e in log.of("message.delta"))
        assert deltas == "Hello there, world"
        assert log.kinds()[0] == "turn.started" and log.kinds()[-1] == "turn.finished"
        assert [e.seq for e in log.events] == list(range(1, len(log.events) + 1))
        body = fake.requests[0].body
        assert body["stream"] is True and body["store"] is False
        assert body["parallel_tool_calls"] is False
        assert body["include"] == ["reasoning.encrypted_content"]
        assert body["reasoning"]["effort"] == "medium"
        assert "service_tier" not in body
        assert {tool["name"] for tool in body["tools"]} == {
            "exec_command",
            "apply_patch",
            "read_file",
            "update_plan",
            "start_process",
            "read_process_output",
            "stop_process",
        }
        assert user_texts(body) == ["hi"]


async def test_turns_run_fifo_with_one_terminal_event_each(tmp_path: Path) -> None:
    async with FakeModel() as fake, running_agent(fake.base_url, tmp_path) as (agent, log):
        gate = fake.gate()
        fake.script(Reply.text("one", hold=gate), Reply.text("two"), Reply.text("three"))
        turns = [agent.prompt(text) for text in ("first", "second", "third")]
        await gate.wait_reached(timeout=WAIT)
        assert len(fake.requests) == 1, "only one turn runs at a time"
        gate.release()
        with anyio.fail_after(WAIT):
            results = [await turn for turn in turns]
        assert [r.final_message for r in results] == ["one", "two", "three"]
        await log.wait_finished(turns[-1].id)
        finished = log.of("turn.finished")
        assert [e.turn_id for e in finished] == [t.id for t in turns]
        assert all(e.status == "completed" for e in finished)
        # Each request carries the whole conversation so far.
        assert user_texts(fake.requests[2].body) == ["first", "second", "third"]


async def test_empty_prompt_is_invalid(tmp_path: Path) -> None:
    async with FakeModel() as fake, running_agent(fake.base_url, tmp_path) as (agent, _):
        with pytest.raises(InvalidRequest):
            agent.prompt("   ")


async def test_dropping_a_handle_does_not_cancel_the_turn(tmp_path: Path) -> None:
    async with FakeModel() as fake, running_agent(fake.base_url, tmp_path) as (agent, log):
        fake.script(Reply.text("done anyway"))
        agent.prompt("fire and forget")  # handle dropped at once
        event = await log.wait_kind("turn.finished")
        assert event.status == "completed" and event.final_message == "done anyway"


async def test_tool_calls_run_in_order_and_loop_until_answer(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("alpha\nbeta\n")
    async with FakeModel() as fake, running_agent(fake.base_url, tmp_path) as (agent, log):
        fake.script(
            Reply.tool_call("read_file", {"path": "notes.txt"}, call_id="call_read"),
            Reply.tool_call("exec_command", {"cmd": "echo ran"}, call_id="call_exec"),
            Reply.text("All done."),
        )
        with anyio.fail_after(WAIT):
            outcome = await agent.prompt("look around")
        assert outcome.final_message == "All done."
        assert len(fake.requests) == 3
        last = fake.requests[2].body["input"]
        outputs = {i["call_id"]: i["output"] for i in last if i["type"] == "function_call_output"}
        assert outputs["call_read"] == "1\talpha\n2\tbeta"
        assert "ran" in outputs["call_exec"] and "Exit code: 0" in outputs["call_exec"]
        started = log.of("tool.started")
        assert [(e.tool, e.title) for e in started] == [
            ("read_file", "Reading notes.txt"),
            ("exec_command", "Running `echo ran`"),
        ]
        await log.wait_finished(1)
        assert [e.status for e in log.of("tool.finished")] == ["completed", "completed"]
        assert any("ran" in e.text for e in log.of("tool.output"))


async def test_tool_errors_are_outputs_not_crashes(tmp_path: Path) -> None:
    async with FakeModel() as fake, running_agent(fake.base_url, tmp_path) as (agent, log):
        fake.script(
            Reply.tool_call("read_file", {"path": "../../etc/passwd"}, call_id="c1"),
            Reply.tool_call("no_such_tool", {}, call_id="c2"),
            Reply.text("ok"),
        )
        with anyio.fail_after(WAIT):
            outcome = await agent.prompt("try bad things")
        assert outcome.final_message == "ok"
        outputs = [
            i["output"]
            for i in fake.requests[2].body["input"]
            if i["type"] == "function_call_output"
        ]
        assert "outside the workspace" in outputs[0]
        assert "unknown tool" in outputs[1]
        await log.wait_finished(1)
        assert [e.status for e in log.of("tool.finished")] == ["failed", "failed"]


async def test_reasoning_items_are_replayed_unchanged(tmp_path: Path) -> None:
    async with FakeModel() as fake, running_agent(fake.base_url, tmp_path) as (agent, log):
        fake.script(
            Reply.items(
                Reply.reasoning("Let me think", encrypted_content="opaque-blob-123"),
                Reply.tool_call("exec_command", {"cmd": "true"}, call_id="c1"),
            ),
            Reply.text("done"),
        )
        with anyio.fail_after(WAIT):
            await agent.prompt("think")
        second_input = fake.requests[1].body["input"]
        reasoning = [i for i in second_input if i["type"] == "reasoning"]
        assert len(reasoning) == 1
        # The item the model streamed (summary and encrypted content), without
        # its id: with store false the API would look the id up and not find it.
        assert reasoning[0]["encrypted_content"] == "opaque-blob-123"
        assert "id" not in reasoning[0]
        assert reasoning[0]["summary"] == [{"type": "summary_text", "text": "Let me think"}]
        assert reasoning[0] == agent.history.items()[1]
        await log.wait_finished(1)
        assert "".join(e.text for e in log.of("reasoning.delta")) == "Let me think"


async def test_steer_during_tool_call_arrives_after_its_output(tmp_path: Path) -> None:
    async with FakeModel() as fake, running_agent(fake.base_url, tmp_path) as (agent, log):
        fifo = tmp_path / "release"
        fifo.touch()
        fake.script(
            Reply.tool_call(
                "exec_command",
                {"cmd": "echo waiting; while [ -e release ]; do sleep 0.01; done"},
                call_id="call_wait",
            ),
            Reply.text("steered answer"),
        )
        turn = agent.prompt("start")
        await log.wait_kind("tool.output")
        turn.control.steer("also check the docs")
        admitted = await log.wait_kind("steer.admitted")
        assert admitted.text == "also check the docs"
        fifo.unlink()  # let the command finish
        with anyio.fail_after(WAIT):
            outcome = await turn
        assert outcome.final_message == "steered answer"
        kinds = kinds_of(fake.requests[1].body)
        items = fake.requests[1].body["input"]
        output_at = kinds.index("function_call_output")
        steer_at = max(i for i, item in enumerate(items) if item.get("role") == "user")
        assert steer_at > output_at, "the steer follows the output of the call in progress"
        assert user_texts(fake.requests[1].body) == ["start", "also check the docs"]
        applied = await log.wait_kind("steer.applied")
        assert applied.text == "also check the docs"


async def test_final_answer_with_pending_steer_keeps_going(tmp_path: Path) -> None:
    async with FakeModel() as fake, running_agent(fake.base_url, tmp_path) as (agent, _):
        gate = fake.gate()
        fake.script(Reply.text("premature answer", hold=gate), Reply.text("answer with steer"))
        turn = agent.prompt("question")
        await gate.wait_reached(timeout=WAIT)
        turn.control.steer("wait, one more thing")
        gate.release()
        with anyio.fail_after(WAIT):
            outcome = await turn
        assert outcome.final_message == "answer with steer"
        assert len(fake.requests) == 2
        second = fake.requests[1].body["input"]
        assert [i["type"] for i in second][-2:] == ["message", "message"]
        assert second[-2]["role"] == "assistant" and second[-1]["role"] == "user"
        assert user_texts(fake.requests[1].body)[-1] == "wait, one more thing"


async def test_ninth_steer_is_refused(tmp_path: Path) -> None:
    async with FakeModel() as fake, running_agent(fake.base_url, tmp_path) as (agent, _):
        gate = fake.gate()
        fake.script(Reply.text("a", hold=gate), Reply.text("b"))
        turn = agent.prompt("go")
        await gate.wait_reached(timeout=WAIT)
        for n in range(8):
            turn.control.steer(f"steer {n}")
        with pytest.raises(SteerQueueFull):
            turn.control.steer("one too many")
        gate.release()
        with anyio.fail_after(WAIT):
            await turn
        assert user_texts(fake.requests[1].body)[1:] == [f"steer {n}" for n in range(8)]


async def test_only_the_running_turn_takes_a_steer(tmp_path: Path) -> None:
    async with FakeModel() as fake, running_agent(fake.base_url, tmp_path) as (agent, _):
        gate = fake.gate()
        fake.script(Reply.text("a", hold=gate), Reply.text("b"))
        first = agent.prompt("first")
        queued = agent.prompt("second")
        await gate.wait_reached(timeout=WAIT)
        with pytest.raises(TurnNotSteerable):
            queued.control.steer("not yet")
        gate.release()
        with anyio.fail_after(WAIT):
            await first
            await queued
        with pytest.raises(TurnNotSteerable):
            first.control.steer("too late")


async def test_effort_and_fast_mode_apply_from_the_next_request(tmp_path: Path) -> None:
    async with FakeModel() as fake, running_agent(fake.base_url, tmp_path) as (agent, _):
        gate = fake.gate()
        fake.script(
            Reply.tool_call("exec_command", {"cmd": "true"}, call_id="c", hold=gate),
            Reply.text("done"),
        )
        turn = agent.prompt("go")
        await gate.wait_reached(timeout=WAIT)
        agent.change_setting(SettingChange("effort", "high"))
        agent.change_setting(SettingChange("fast_mode", True))
        gate.release()
        with anyio.fail_after(WAIT):
            await turn
        first, second = (r.body for r in fake.requests)
        assert first["reasoning"]["effort"] == "medium" and "service_tier" not in first
        assert second["reasoning"]["effort"] == "high"
        assert second["service_tier"] == "priority"
        with pytest.raises(ValueError):
            agent.change_setting(SettingChange("effort", "extreme"))


async def test_model_failure_fails_the_turn_and_keeps_the_conversation(tmp_path: Path) -> None:
    async with FakeModel() as fake, running_agent(fake.base_url, tmp_path) as (agent, log):
        fake.script(Reply.http_error(401, message="bad key"), Reply.text("recovered"))
        with anyio.fail_after(WAIT), pytest.raises(TurnFailed, match="OPENAI_API_KEY"):
            await agent.prompt("first")
        assert len(fake.requests) == 1, "auth errors are not retried"
        finished = await log.wait_kind("turn.finished")
        assert finished.status == "failed" and "401" in (finished.error or "")
        with anyio.fail_after(WAIT):
            outcome = await agent.prompt("second")
        assert outcome.final_message == "recovered"
        assert user_texts(fake.requests[1].body) == ["first", "second"]


async def test_shutdown_is_idempotent_and_stops_everything(tmp_path: Path) -> None:
    async with FakeModel() as fake, running_agent(fake.base_url, tmp_path) as (agent, log):
        fake.script(Reply.hang())
        running = agent.prompt("hang")
        queued = agent.prompt("queued")
        await fake.wait_for_requests(1, timeout=WAIT)
        with anyio.fail_after(WAIT):
            await agent.shutdown()
            await agent.shutdown()
        for turn in (running, queued):
            assert turn.done()
        with pytest.raises(AgentStopped):
            agent.prompt("after")
        with pytest.raises(AgentStopped):
            agent.change_setting(SettingChange("effort", "low"))
        with pytest.raises(AgentStopped):
            agent.fork()
        with anyio.fail_after(WAIT):
            await log.closed.wait()
        statuses = [(e.turn_id, e.status) for e in log.of("turn.finished")]
        assert statuses == [(running.id, "cancelled"), (queued.id, "cancelled")]
