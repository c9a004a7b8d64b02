"""The approval policy: the sandbox decides what runs without asking; the
editor is asked for the rest, and its answer — or the turn's cancellation —
decides. "Allow for this session" allows exactly what was asked."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types as lsp

from agentls.testing.fake_model import FakeModelThread, Reply

from .lsp_support import AgentClient, initialize, server_config
from .support import WAIT, requires_sandbox
from .support import tool_outputs as outputs


@pytest.fixture
def answers() -> list[Any]:
    """What the fake editor answers, in order (a dict for agent/requestApproval,
    a title for window/showMessageRequest, or "hold" to never answer)."""
    return []


@pytest.fixture
def asked() -> list[Any]:
    return []


@pytest.fixture
def options() -> dict[str, Any]:
    """initializationOptions of the ``native`` client (the policy, the sandbox)."""
    return {"approval": "always"}


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
    options: dict[str, Any],
) -> AsyncIterator[None]:
    """A client that speaks agent/requestApproval (policy "always" unless told)."""
    _answering(lsp_client, answers, asked)
    await initialize(
        lsp_client,
        workspace,
        fake.base_url,
        experimental={"agentls": {"requestApproval": True}},
        **options,
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
    """A plain LSP client (no agent/requestApproval); no sandbox, so the
    default policy ("on-request") asks before every command and patch."""
    _answering(lsp_client, answers, asked)
    await initialize(lsp_client, workspace, fake.base_url, sandbox="off")
    yield
    if not lsp_client.stopped:
        await lsp_client.shutdown_session()


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
    assert set(question) == {"pane", "turnId", "callId", "tool", "title", "command"}
    assert question["tool"] == "exec_command" and question["command"] == "touch made.txt"
    assert question["pane"] == "main" and question["callId"] == "c1"
    assert question["turnId"] == result["turnId"]
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


async def test_allow_for_the_session_allows_exactly_that_command(
    native: AgentClient, fake: FakeModelThread, answers: list[Any], asked: list[Any]
) -> None:
    answers.extend([{"decision": "allowSession"}, {"decision": "deny"}, {"decision": "deny"}])
    fake.script(
        Reply.tool_call("exec_command", {"cmd": "cd src && ls"}),
        Reply.tool_call("exec_command", {"cmd": "cd src && ls"}),  # allowed: not asked
        Reply.tool_call("exec_command", {"cmd": "cd / && rm -rf ~"}),  # same first word
        Reply.tool_call("exec_command", {"cmd": "cd src && ls", "workdir": "sub"}),
        Reply.text("done"),
    )
    await native.call("agent/submit", {"prompt": "go"})
    assert [q["command"] for q in asked] == [
        "cd src && ls",
        "cd / && rm -rf ~",
        "cd sub && cd src && ls",
    ]


async def test_allow_for_the_session_of_a_patch_allows_edits_to_those_files(
    native: AgentClient,
    fake: FakeModelThread,
    workspace: Path,
    answers: list[Any],
    asked: list[Any],
) -> None:
    (workspace / "a.txt").write_text("one\n")
    answers.extend([{"decision": "allowSession"}, {"decision": "allow"}])

    def patch(path: str, old: str, new: str) -> Reply:
        text = f"*** Begin Patch\n*** Update File: {path}\n-{old}\n+{new}\n*** End Patch"
        return Reply.tool_call("apply_patch", {"patch": text})

    fake.script(
        patch("a.txt", "one", "two"),
        patch("./a.txt", "two", "three"),  # the same file: not asked
        Reply.tool_call(
            "apply_patch", {"patch": "*** Begin Patch\n*** Add File: b.txt\n+b\n*** End Patch"}
        ),
        Reply.text("done"),
    )
    await native.call("agent/submit", {"prompt": "go"})
    assert (workspace / "a.txt").read_text() == "three\n"
    assert (workspace / "b.txt").read_text() == "b\n"
    assert [q["tool"] for q in asked] == ["apply_patch", "apply_patch"]
    first, second = asked
    assert set(first) == {"pane", "turnId", "callId", "tool", "title", "diff"}
    assert first["diff"] == "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+two\n"
    assert second["diff"] == "--- /dev/null\n+++ b/b.txt\n@@ -0,0 +1 @@\n+b\n"


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


async def test_without_a_sandbox_every_command_and_patch_asks(
    plain: AgentClient,
    fake: FakeModelThread,
    workspace: Path,
    answers: list[Any],
    asked: list[Any],
) -> None:
    answers.extend(["Allow once", "Deny", "Deny"])
    fake.script(
        Reply.tool_call("exec_command", {"cmd": "ls -la"}),  # no word list: it asks too
        Reply.tool_call("exec_command", {"cmd": "rm -rf build"}),
        Reply.tool_call(
            "apply_patch", {"patch": "*** Begin Patch\n*** Add File: a.txt\n+a\n*** End Patch"}
        ),
        Reply.tool_call("read_file", {"path": "nothing.txt"}),  # read-only: never asks
        Reply.text("ok"),
    )
    await plain.call("agent/submit", {"prompt": "go"})
    assert len(asked) == 3
    assert "ls -la" in asked[0].message and "rm -rf build" in asked[1].message
    assert "edit a.txt" in asked[2].message
    assert [a.title for a in asked[1].actions] == [
        "Allow once",
        "Allow for this session",
        "Deny",
    ]
    results = outputs(fake)
    assert "denied" not in results[0] and "denied" in results[1] and "denied" in results[2]
    assert not (workspace / "a.txt").exists()


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


# --- with the sandbox -----------------------------------------------------------------


@requires_sandbox
@pytest.mark.parametrize("options", [{}], ids=["defaults"])
async def test_sandboxed_commands_run_without_asking_escalations_ask(
    native: AgentClient,
    fake: FakeModelThread,
    workspace: Path,
    answers: list[Any],
    asked: list[Any],
    options: dict[str, Any],
    outside: Path,
) -> None:
    outside = outside / "outside.txt"
    answers.extend([{"decision": "allow"}, {"decision": "deny", "reason": "use the workspace"}])
    fake.script(
        Reply.tool_call("exec_command", {"cmd": f"touch in.txt; touch {outside}"}),
        Reply.tool_call(
            "exec_command",
            {"cmd": f"touch {outside}", "escalate": True, "justification": "it must go there"},
        ),
        Reply.tool_call("exec_command", {"cmd": f"rm {outside}", "escalate": True}),
        Reply.text("done"),
    )
    await native.call("agent/submit", {"prompt": "go"})
    assert (workspace / "in.txt").exists()
    first, escalated, denied = outputs(fake)
    assert "Read-only file system" in first
    assert "Exit code: 0" in escalated and outside.exists()
    assert "use the workspace" in denied
    assert [q["command"] for q in asked] == [f"touch {outside}", f"rm {outside}"]
    assert asked[0]["justification"] == "it must go there"
    assert "justification" not in asked[1]


@requires_sandbox
@pytest.mark.parametrize("options", [{"approval": "never"}], ids=["never"])
async def test_never_refuses_escalations(
    native: AgentClient,
    fake: FakeModelThread,
    workspace: Path,
    asked: list[Any],
    options: dict[str, Any],
    outside: Path,
) -> None:
    outside = outside / "outside.txt"
    fake.script(
        Reply.tool_call("exec_command", {"cmd": f"touch {outside}", "escalate": True}),
        Reply.text("done"),
    )
    await native.call("agent/submit", {"prompt": "go"})
    assert asked == [] and not outside.exists()
    (output,) = outputs(fake)
    assert "refused" in output and "'never'" in output


@requires_sandbox
@pytest.mark.parametrize("options", [{"sandbox": "read-only"}], ids=["read-only"])
async def test_read_only_sandbox_asks_before_patches(
    native: AgentClient,
    fake: FakeModelThread,
    workspace: Path,
    answers: list[Any],
    asked: list[Any],
    options: dict[str, Any],
) -> None:
    answers.append({"decision": "deny"})
    fake.script(
        Reply.tool_call("exec_command", {"cmd": "touch in.txt"}),
        Reply.tool_call(
            "apply_patch", {"patch": "*** Begin Patch\n*** Add File: a.txt\n+a\n*** End Patch"}
        ),
        Reply.text("done"),
    )
    await native.call("agent/submit", {"prompt": "go"})
    assert not (workspace / "in.txt").exists() and not (workspace / "a.txt").exists()
    assert [q["tool"] for q in asked] == ["apply_patch"]
    assert "Read-only file system" in outputs(fake)[0]


async def test_auxiliary_jobs_get_no_tool_that_changes_anything(
    native: AgentClient, fake: FakeModelThread, workspace: Path, asked: list[Any]
) -> None:
    """Nobody watches an auxiliary job, and nobody could approve what it does."""
    fake.script(
        Reply.tool_call("exec_command", {"cmd": "touch made.txt"}),
        Reply.text("summary"),
    )
    result = await native.call("agent/auxiliary", {"prompt": "summarise"})
    assert result == {"text": "summary"}
    offered = {tool["name"] for tool in fake.requests[0].body["tools"]}
    assert offered == {"read_file", "update_plan", "read_process_output"}
    assert "unknown tool 'exec_command'" in outputs(fake)[0]
    assert asked == [] and not (workspace / "made.txt").exists()
