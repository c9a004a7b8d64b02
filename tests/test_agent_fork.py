"""Fork, spawn, snapshot and resume."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from agentls.agent.agent import Agent
from agentls.agent.errors import InvalidSnapshot
from agentls.agent.settings import SettingChange
from agentls.testing.fake_model import FakeModel, Reply

from .support import WAIT, EventLog, running_agent


def texts(body: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for item in body["input"]:
        if item["type"] == "message":
            out.extend(part.get("text", "") for part in item["content"])
    return out


async def test_fork_shares_history_and_excludes_partial_output(tmp_path: Path) -> None:
    async with FakeModel() as fake, running_agent(fake.base_url, tmp_path) as (agent, log):
        gate = fake.gate()
        fake.script(
            Reply.text("first answer"),
            Reply.tool_call("exec_command", {"cmd": "true"}, call_id="c1"),
            Reply.text("half written", hold=gate, hold_after=6),
        )
        with anyio.fail_after(WAIT):
            await agent.prompt("one")
        turn = agent.prompt("two")
        await gate.wait_reached(timeout=WAIT)
        await log.wait_kind("message.delta")
        fork = agent.fork()
        # The fork has the committed steps (the tool call with its output) but
        # neither the half-streamed text nor an unanswered call.
        items = fork.history.items()
        assert [i["type"] for i in items] == [
            "message",
            "message",
            "message",
            "function_call",
            "function_call_output",
        ]
        assert "half written" not in json.dumps(items)
        assert agent.history.shares_with(fork.history) == len(items)
        assert fork.settings == agent.settings and fork.settings is not agent.settings
        fork_log = EventLog()
        async with anyio.create_task_group() as group:
            group.start_soon(fork_log.pump, fork)
            fake.script(Reply.text("fork answer"))
            with anyio.fail_after(WAIT):
                outcome = await fork.prompt("on the fork")
            assert outcome.final_message == "fork answer"
            assert texts(fake.requests[-1].body) == ["one", "first answer", "two", "on the fork"]
            await fork_log.wait_finished(outcome.turn_id)
            assert fork_log.of("turn.finished")[0].final_message == "fork answer"
            assert "fork answer" not in json.dumps(agent.history.items())
            with anyio.fail_after(WAIT):
                await fork.shutdown()
        gate.release()
        with anyio.fail_after(WAIT):
            await turn


async def test_fork_settings_are_independent(tmp_path: Path) -> None:
    async with FakeModel() as fake, running_agent(fake.base_url, tmp_path) as (agent, _):
        agent.change_setting(SettingChange("effort", "low"))
        fork = agent.fork()
        fork.change_setting(SettingChange("effort", "xhigh"))
        assert agent.settings.effort == "low" and fork.settings.effort == "xhigh"
        with anyio.fail_after(WAIT):
            await fork.shutdown()


async def test_spawn_is_clean(tmp_path: Path) -> None:
    async with FakeModel() as fake, running_agent(fake.base_url, tmp_path) as (agent, _):
        fake.script(Reply.text("parent answer"), Reply.text("sibling answer"))
        agent.change_setting(SettingChange("fast_mode", True))
        with anyio.fail_after(WAIT):
            await agent.prompt("parent prompt")
        sibling = agent.spawn()
        assert len(sibling.history) == 0
        assert sibling.settings.fast_mode is True
        assert sibling.workspace.root == agent.workspace.root
        with anyio.fail_after(WAIT):
            await sibling.prompt("clean prompt")
            await sibling.shutdown()
        assert texts(fake.requests[1].body) == ["clean prompt"]
        assert fake.requests[1].body["service_tier"] == "priority"


async def test_snapshot_round_trip(tmp_path: Path) -> None:
    async with FakeModel() as fake, running_agent(fake.base_url, tmp_path) as (agent, _):
        fake.script(
            Reply.tool_call("exec_command", {"cmd": "true"}, call_id="c1"),
            Reply.text("answer"),
            Reply.text("resumed answer"),
        )
        agent.change_setting(SettingChange("effort", "high"))
        with anyio.fail_after(WAIT):
            outcome = await agent.prompt("remember this")
        snapshot = json.loads(json.dumps(agent.snapshot()))  # survives JSON
        assert snapshot["items"] == agent.history.items()
        assert outcome.final_message == "answer"
        async with anyio.create_task_group() as group:
            resumed = Agent.resume(group, agent._model, agent.config, snapshot)
            assert resumed.settings.effort == "high"
            assert resumed.history.items() == agent.history.items()
            with anyio.fail_after(WAIT):
                await resumed.prompt("and continue")
                await resumed.shutdown()
        assert texts(fake.requests[2].body) == ["remember this", "answer", "and continue"]


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda s: "nonsense", "must be a JSON object"),
        (lambda s: {**s, "format": "other"}, "not an agentls snapshot"),
        (lambda s: {**s, "version": 99}, "unsupported snapshot version"),
        (lambda s: {**s, "effort": "max"}, "effort"),
        (lambda s: {**s, "fastMode": "yes"}, "fastMode"),
        (lambda s: {**s, "items": {}}, "items must be a list"),
        (lambda s: {**s, "items": [42]}, "item 0 is not an object"),
        (lambda s: {**s, "items": s["items"][:2]}, "has no output"),
        (
            lambda s: {
                **s,
                "items": [{"type": "function_call_output", "call_id": "x", "output": ""}],
            },
            "never made",
        ),
    ],
)
async def test_bad_snapshots_are_rejected_clearly(
    tmp_path: Path, mutate: Any, message: str
) -> None:
    async with FakeModel() as fake, running_agent(fake.base_url, tmp_path) as (agent, _):
        fake.script(
            Reply.tool_call("exec_command", {"cmd": "true"}, call_id="c1"), Reply.text("ok")
        )
        with anyio.fail_after(WAIT):
            await agent.prompt("go")
        async with anyio.create_task_group() as group:
            with pytest.raises(InvalidSnapshot, match=message):
                Agent.resume(group, agent._model, agent.config, mutate(agent.snapshot()))
