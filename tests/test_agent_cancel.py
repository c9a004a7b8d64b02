"""Cancellation: queued, mid-stream, mid-tool, races — the turn really stops."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from agentls.agent.errors import TurnCancelled, TurnNotCancellable
from agentls.testing.fake_model import FakeModel, Reply

from .support import WAIT, pid_alive, pids_in, running_agent


def outputs_of(body: dict[str, Any]) -> dict[str, str]:
    return {i["call_id"]: i["output"] for i in body["input"] if i["type"] == "function_call_output"}


async def test_cancel_of_a_queued_turn_keeps_order(tmp_path: Path) -> None:
    async with FakeModel() as fake, running_agent(fake.base_url, tmp_path) as (agent, log):
        gate = fake.gate()
        fake.script(Reply.text("one", hold=gate), Reply.text("three"))
        first, second, third = (agent.prompt(t) for t in ("first", "second", "third"))
        await gate.wait_reached(timeout=WAIT)
        with anyio.fail_after(WAIT):
            receipt = await second.control.cancel()  # returns at once: it never ran
        assert receipt.turn_id == second.id and receipt.killed_processes == 0
        with pytest.raises(TurnCancelled):
            await second
        assert not first.done()
        gate.release()
        with anyio.fail_after(WAIT):
            assert (await first).final_message == "one"
            assert (await third).final_message == "three"
        await log.wait_finished(third.id)
        finished = [(e.turn_id, e.status) for e in log.of("turn.finished")]
        assert finished == [
            (first.id, "completed"),
            (second.id, "cancelled"),
            (third.id, "completed"),
        ]
        assert "turn.started" not in log.kinds(second.id)
        assert len(fake.requests) == 2, "the cancelled turn never called the model"
        texts = [
            i["content"][0]["text"]
            for i in fake.requests[1].body["input"]
            if i.get("role") == "user"
        ]
        assert texts == ["first", "third"]


async def test_cancel_mid_stream_drops_partial_text_and_keeps_the_prompt(tmp_path: Path) -> None:
    async with FakeModel() as fake, running_agent(fake.base_url, tmp_path) as (agent, log):
        gate = fake.gate()
        fake.script(
            Reply.text("partial words that never finish", hold=gate, hold_after=6),
            Reply.text("fresh answer"),
        )
        turn = agent.prompt("question one")
        await gate.wait_reached(timeout=WAIT)
        await log.wait_kind("message.delta")
        with anyio.fail_after(WAIT):
            receipt = await turn.control.cancel()
        assert receipt.aborted_tool_calls == ()
        with pytest.raises(TurnCancelled):
            await turn
        finished = await log.wait_kind("turn.finished")
        assert finished.status == "cancelled" and finished.receipt == receipt
        await fake.requests[0].wait_done(timeout=WAIT)
        assert fake.requests[0].aborted, "the HTTP stream was aborted"
        with anyio.fail_after(WAIT):
            await agent.prompt("question two")
        items = fake.requests[1].body["input"]
        assert [i["type"] for i in items] == ["message", "message"]
        assert all(i["role"] == "user" for i in items), "no partial assistant text was kept"


async def test_cancel_mid_tool_kills_the_tree_and_answers_the_call(tmp_path: Path) -> None:
    # Unsandboxed: the pids the command prints are real (tests/test_sandbox.py: sandboxed).
    async with (
        FakeModel() as fake,
        running_agent(fake.base_url, tmp_path, unsandboxed=True) as (agent, log),
    ):
        cmd = (
            "sleep 300 & echo pid=$!; "
            "sh -c 'sleep 300 & echo pid=$!; wait' & "
            "setsid sh -c 'sleep 300 & echo pid=$!; wait' & "
            "wait"
        )
        fake.script(
            Reply.items(
                Reply.tool_call("exec_command", {"cmd": cmd}, call_id="call_sleep"),
                Reply.tool_call("read_file", {"path": "x"}, call_id="call_after"),
            ),
            Reply.text("next turn answer"),
        )
        turn = agent.prompt("run it")
        await log.wait_for(lambda _: log.tool_text().count("pid=") >= 3)
        pids = pids_in(log.tool_text())
        assert all(pid_alive(pid) for pid in pids)
        with anyio.fail_after(WAIT):
            receipt = await turn.control.cancel()
        # Only now does cancel return: every process of the turn is dead.
        assert not [pid for pid in pids if pid_alive(pid)]
        assert receipt.surviving_processes == 0
        assert receipt.killed_processes >= 4  # bash, its sleeps and subshells
        assert [(c.call_id, c.tool) for c in receipt.aborted_tool_calls] == [
            ("call_sleep", "exec_command"),
            ("call_after", "read_file"),
        ]
        cancelled = [e for e in log.of("tool.finished") if e.call_id == "call_sleep"]
        assert cancelled[0].status == "cancelled"
        with anyio.fail_after(WAIT):
            await agent.prompt("and now?")
        body = fake.requests[1].body
        assert outputs_of(body) == {
            "call_sleep": "aborted by user",
            "call_after": "aborted by user",
        }
        types = [i["type"] for i in body["input"]]
        assert types == [
            "message",
            "function_call",
            "function_call",
            "function_call_output",
            "function_call_output",
            "message",
        ]


async def test_cancel_that_loses_the_race_gives_not_cancellable(tmp_path: Path) -> None:
    async with FakeModel() as fake, running_agent(fake.base_url, tmp_path) as (agent, _):
        fake.script(Reply.text("finished first"))
        turn = agent.prompt("quick")
        with anyio.fail_after(WAIT):
            outcome = await turn
        with pytest.raises(TurnNotCancellable):
            await turn.control.cancel()
        assert outcome.final_message == "finished first"


async def test_next_turn_starts_armed_after_interrupt(tmp_path: Path) -> None:
    async with FakeModel() as fake, running_agent(fake.base_url, tmp_path) as (agent, _):
        fake.script(Reply.hang(), Reply.text("second ok"))
        first = agent.prompt("one")
        await fake.wait_for_requests(1, timeout=WAIT)
        agent.interrupt.interrupt()
        with anyio.fail_after(WAIT), pytest.raises(TurnCancelled):
            await first
        assert not agent.interrupt.is_interrupted()
        with anyio.fail_after(WAIT):
            assert (await agent.prompt("two")).final_message == "second ok"


async def test_cancel_keeps_completed_steps_and_pending_steers(tmp_path: Path) -> None:
    async with FakeModel() as fake, running_agent(fake.base_url, tmp_path) as (agent, _):
        fake.script(
            Reply.tool_call("exec_command", {"cmd": "echo step1"}, call_id="c1"),
            Reply.hang(),
            Reply.text("after"),
        )
        turn = agent.prompt("multi step")
        await fake.wait_for_requests(2, timeout=WAIT)
        turn.control.steer("keep me")
        with anyio.fail_after(WAIT):
            await turn.control.cancel()
        with anyio.fail_after(WAIT):
            await agent.prompt("next")
        body = fake.requests[2].body
        assert "c1" in outputs_of(body), "the completed step stays"
        users = [i["content"][0]["text"] for i in body["input"] if i.get("role") == "user"]
        assert users == ["multi step", "keep me", "next"], "a pending steer is never lost"
