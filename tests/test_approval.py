"""The approval policy: the editor is asked before commands and patches, and
its answer — or the turn's cancellation — decides."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types as lsp

from agentls.agent.approval import read_only
from agentls.testing.fake_model import FakeModelThread, Reply

from .lsp_support import AgentClient, initialize, server_config
from .support import WAIT


@pytest.fixture
def answers() -> list[Any]:
    """What the fake editor answers, in order (a dict for agent/requestApproval,
    a title for window/showMessageRequest, or "hold" to never answer)."""
    return []


@pytest.fixture
def asked() -> list[Any]:
    return []


def _answering(client: AgentClient, answers: list[Any], asked: list[Any]) -> None:
    async def request_approval(params: Any) -> Any:
        asked.append(params)
        client.poke()
        answer = answers.pop(0)
        if answer == "hold":
            await asyncio.Event().wait()  # until the server withdraws the question
        return answer

    async def show_message_request(params: lsp.ShowMessageRequestParams) -> Any:
        asked.append(params)
        client.poke()
        title = answers.pop(0)
        return next(a for a in params.actions or [] if a.title == title)

    client.feature("agent/requestApproval")(request_approval)
    client.feature(lsp.WINDOW_SHOW_MESSAGE_REQUEST)(show_message_request)


@pytest_lsp.fixture(config=server_config())
async def native(
    lsp_client: AgentClient,
    fake: FakeModelThread,
    workspace: Path,
    answers: list[Any],
    asked: list[Any],
) -> AsyncIterator[None]:
    """A client that speaks agent/requestApproval; policy "always"."""
    _answering(lsp_client, answers, asked)
    await initialize(
        lsp_client,
        workspace,
        fake.base_url,
        approval="always",
        experimental={"agentls": {"requestApproval": True}},
    )
    yield
    if not lsp_client.stopped:
        await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=server_config())
async def plain(
    lsp_client: AgentClient,
    fake: FakeModelThread,
    workspace: Path,
    answers: list[Any],
    asked: list[Any],
) -> AsyncIterator[None]:
    """A plain LSP client (no agent/requestApproval); policy "on-request"."""
    _answering(lsp_client, answers, asked)
    await initialize(lsp_client, workspace, fake.base_url, approval="on-request")
    yield
    if not lsp_client.stopped:
        await lsp_client.shutdown_session()


def outputs(fake: FakeModelThread) -> list[str]:
    return [
        i["output"] for i in fake.requests[-1].body["input"] if i["type"] == "function_call_output"
    ]


async def test_allowed_command_runs(
    native: AgentClient,
    fake: FakeModelThread,
    workspace: Path,
    answers: list[Any],
    asked: list[Any],
) -> None:
    answers.append({"decision": "allow"})
    fake.script(
        Reply.tool_call("exec_command", {"cmd": "touch made.txt"}, call_id="c1"), Reply.text("done")
    )
    result = await native.call("agent/submit", {"prompt": "make a file"})
    assert result["status"] == "completed"
    assert (workspace / "made.txt").exists()
    (question,) = asked
    assert question["tool"] == "exec_command" and question["command"] == "touch made.txt"
    assert question["pane"] == "main" and question["callId"] == "c1"
    assert question["title"] == "Running `touch made.txt`"


async def test_denied_command_is_an_output_the_model_sees(
    native: AgentClient, fake: FakeModelThread, workspace: Path, answers: list[Any]
) -> None:
    answers.append({"decision": "deny", "reason": "not on my machine"})
    fake.script(Reply.tool_call("exec_command", {"cmd": "touch made.txt"}), Reply.text("ok"))
    result = await native.call("agent/submit", {"prompt": "make a file"})
    assert result["status"] == "completed"
    assert not (workspace / "made.txt").exists()
    (output,) = outputs(fake)
    assert "denied" in output and "not on my machine" in output
    finished = await native.event("tool.finished")
    assert finished["status"] == "failed"


async def test_allow_for_the_session_remembers_the_program(
    native: AgentClient, fake: FakeModelThread, answers: list[Any], asked: list[Any]
) -> None:
    answers.extend([{"decision": "allowSession"}, {"decision": "allow"}])
    fake.script(
        Reply.tool_call("exec_command", {"cmd": "echo one"}),
        Reply.tool_call("exec_command", {"cmd": "echo two"}),
        Reply.tool_call(
            "apply_patch", {"patch": "*** Begin Patch\n*** Add File: a.txt\n+a\n*** End Patch"}
        ),
        Reply.text("done"),
    )
    await native.call("agent/submit", {"prompt": "go"})
    assert [q["tool"] for q in asked] == ["exec_command", "apply_patch"]
    assert asked[1]["paths"] == ["a.txt"] and "Add File: a.txt" in asked[1]["patch"]


async def test_cancelling_the_turn_withdraws_the_question(
    native: AgentClient,
    fake: FakeModelThread,
    workspace: Path,
    answers: list[Any],
    asked: list[Any],
) -> None:
    answers.append("hold")
    fake.script(Reply.tool_call("exec_command", {"cmd": "touch never.txt"}, call_id="c9"))
    msg_id, future = native.request("agent/submit", {"prompt": "go"})
    await native.until(lambda: asked)
    native.cancel(msg_id)
    result = await asyncio.wait_for(asyncio.wrap_future(future), WAIT)
    assert result["status"] == "cancelled"
    assert result["receipt"]["abortedToolCalls"] == [{"callId": "c9", "tool": "exec_command"}]
    await native.until(lambda: native.withdrawn)
    assert str(native.withdrawn[0]).startswith("agentls-approval-")
    assert not (workspace / "never.txt").exists()


async def test_plain_clients_are_asked_with_show_message_request(
    plain: AgentClient,
    fake: FakeModelThread,
    workspace: Path,
    answers: list[Any],
    asked: list[Any],
) -> None:
    answers.append("Deny")
    fake.script(
        Reply.tool_call("exec_command", {"cmd": "ls -la && git status"}),  # read-only: not asked
        Reply.tool_call("exec_command", {"cmd": "rm -rf build"}),
        Reply.text("ok"),
    )
    await plain.call("agent/submit", {"prompt": "go"})
    (question,) = asked
    assert "rm -rf build" in question.message
    assert [a.title for a in question.actions] == ["Allow once", "Allow for this session", "Deny"]
    assert "denied" in outputs(fake)[1] and "denied" not in outputs(fake)[0]


async def test_policy_is_per_pane(
    native: AgentClient, fake: FakeModelThread, asked: list[Any]
) -> None:
    assert await native.call("agent/setApproval", {"approval": "never"}) == {
        "pane": "main",
        "approval": "never",
    }
    fake.script(Reply.tool_call("exec_command", {"cmd": "touch x"}), Reply.text("ok"))
    await native.call("agent/submit", {"prompt": "go"})
    assert asked == []
    with pytest.raises(Exception, match="approval: must be one of"):
        await native.call("agent/setApproval", {"approval": "sometimes"})


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("ls -la", True),
        ("git status && git diff HEAD~1", True),
        ("rg TODO | head -5", True),
        ("cat a > b", False),
        ("git commit -m x", False),
        ("sed -i s/a/b/ f", False),
        ("find . -delete", False),
        ("echo $(rm -rf x)", False),
        ("pytest -q", False),
    ],
)
def test_read_only_commands(command: str, expected: bool) -> None:
    assert read_only(command) is expected
