"""The context window on the wire: ``usage`` events and ``TurnResult`` say how
full it is, compactions are events of their own, ``agent/compact`` compacts on
request, ``agent/instructions`` says which AGENTS.md files the session follows,
progress tells what the agent writes and when it compacts, and the options are
checked."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException

from agentls.agent.compaction import SUMMARY_INSTRUCTIONS, SUMMARY_PREFIX
from agentls.client.rpc import RpcClient, RpcError
from agentls.testing.fake_model import FakeModelThread, Reply, run_in_thread

from .lsp_support import AgentClient, initialize, server_config
from .support import WAIT

WINDOW = 6_000


@pytest.fixture
def small_fake() -> Iterator[FakeModelThread]:
    with run_in_thread(context_window=WINDOW) as model:
        yield model


@pytest_lsp.fixture(config=server_config())
async def small(
    lsp_client: AgentClient, small_fake: FakeModelThread, workspace: Path
) -> AsyncIterator[None]:
    """The real server on a model with a small window (declared and enforced)."""
    lsp_client.init_result = await initialize(
        lsp_client, workspace, small_fake.base_url, model="test-model", contextWindow=WINDOW
    )
    yield
    if not lsp_client.stopped:
        await lsp_client.shutdown_session()


async def test_usage_and_the_result_say_how_full_the_window_is(
    client: AgentClient, fake: FakeModelThread
) -> None:
    fake.script(Reply.tool_call("exec_command", {"cmd": "echo hi"}), Reply.text("done"))
    result = await client.call("agent/submit", {"prompt": "go"})
    usage = client.of("usage")
    assert len(usage) == 2  # one per model response
    assert all(e["contextWindow"] == 272_000 for e in usage)  # gpt-5.1-codex, the default
    assert 0 < usage[0]["contextTokens"] < usage[1]["contextTokens"]
    assert result["usage"]["contextWindow"] == 272_000
    assert result["usage"]["contextTokens"] >= usage[1]["contextTokens"]
    finished = client.of("turn.finished")[0]
    assert finished["usage"]["contextTokens"] == result["usage"]["contextTokens"]


async def test_compact_on_request_with_a_focus(client: AgentClient, fake: FakeModelThread) -> None:
    fake.script(Reply.text("one"), Reply.text("two"), Reply.text("Summary: two turns."))
    await client.call("agent/submit", {"prompt": "first"})
    await client.call("agent/submit", {"prompt": "second"})
    result = await client.call("agent/compact", {"focus": "the parser"})
    assert result["mode"] == "summary"
    assert result["afterTokens"] < result["beforeTokens"]
    summary_request = fake.requests[-1].body
    assert summary_request["instructions"] == SUMMARY_INSTRUCTIONS
    assert summary_request["tool_choice"] == "none"
    assert "Focus the summary on: the parser" in str(summary_request["input"][-1])
    started, finished = client.of("compaction.started"), client.of("compaction.finished")
    assert [e["reason"] for e in started] == ["manual"] and started[0]["turnId"] is None
    assert finished[0]["summary"] == "Summary: two turns."
    assert finished[0]["afterTokens"] == result["afterTokens"]
    # The next turn goes on from the compacted conversation.
    fake.script(Reply.text("three"))
    await client.call("agent/submit", {"prompt": "third"})
    sent = [item["content"][0]["text"] for item in fake.requests[-1].body["input"]]
    assert sent[:2] == ["first", "second"] and sent[2].startswith(SUMMARY_PREFIX)
    assert sent[3] == "third"


async def test_compact_needs_an_idle_pane(client: AgentClient, fake: FakeModelThread) -> None:
    gate = fake.gate()
    fake.script(Reply.text("slow", hold=gate))
    _, submit = client.request("agent/submit", {"prompt": "wait"})
    await client.until(lambda: client.of("turn.started"))
    with pytest.raises(JsonRpcException) as caught:
        await client.call("agent/compact", {})
    assert caught.value.code == -32004
    gate.release()
    await asyncio.wrap_future(submit)


async def test_progress_tells_what_is_written_and_when_it_compacts(
    small: AgentClient, small_fake: FakeModelThread
) -> None:
    client = small
    patch = "*** Begin Patch\n*** Add File: big.txt\n+" + "z" * 60 + "\n*** End Patch"
    small_fake.script(
        Reply.tool_call("apply_patch", {"patch": patch}, chunks=10),
        Reply.tool_call("exec_command", {"cmd": "python3 -c \"print('x' * 16000)\""}),
        Reply.text("Summary: wrote a file and printed xs."),
        Reply.text("done"),
    )
    client.progress_reports["p"] = []
    result = await client.call("agent/submit", {"prompt": "write", "workDoneToken": "p"})
    assert result["status"] == "completed", result
    reports: list[object] = list(client.progress_reports["p"])
    messages = [v.message for v in reports if isinstance(v, lsp.WorkDoneProgressReport)]
    assert "Writing a patch…" in messages and "Compacting the conversation…" in messages
    preparing = client.of("tool.preparing")
    assert preparing[0]["tool"] == "apply_patch" and preparing[0]["title"] == "Writing a patch…"
    finished = client.of("compaction.finished")
    assert finished and finished[0]["turnId"] == result["turnId"]
    assert finished[0]["mode"] == "summary" and finished[0]["afterTokens"] < WINDOW
    assert all(r.refusal is None for r in small_fake.requests)


async def test_capabilities_follow_the_configured_model(small: AgentClient) -> None:
    assert small.init_result is not None
    experimental = small.init_result.capabilities.experimental
    assert experimental is not None
    caps = experimental["agentls"]
    assert caps["model"] == "test-model" and caps["contextWindow"] == WINDOW
    assert caps["efforts"] == ["none", "minimal", "low", "medium", "high", "xhigh"]


@pytest.mark.parametrize(
    ("option", "value", "says"),
    [
        ("autoCompact", 1.5, "autoCompact: must be 0 (off) or a share below 1"),
        ("contextWindow", 10, "contextWindow: must be at least 1024"),
        ("maxRequestsPerTurn", 0, "maxRequestsPerTurn: must be at least 1"),
        ("webSearch", "yes", "webSearch: expected true or false"),
    ],
)
async def test_options_are_checked(tmp_path: Path, option: str, value: object, says: str) -> None:
    client = await RpcClient.spawn([sys.executable, "-m", "agentls", "serve"])
    try:
        with pytest.raises(RpcError) as caught:
            await asyncio.wait_for(client.initialize({option: value}, str(tmp_path)), WAIT)
        assert caught.value.code == -32602 and says in caught.value.message
    finally:
        await client.shutdown()


async def test_a_refused_parameter_is_dropped_and_said_once(
    client: AgentClient, fake: FakeModelThread
) -> None:
    refusal = Reply.http_error(
        400,
        message="Your organization must be verified to generate reasoning summaries.",
        code="unsupported_value",
        param="reasoning.summary",
    )
    fake.script(refusal, Reply.text("one"), Reply.text("two"))
    assert (await client.call("agent/submit", {"prompt": "a"}))["status"] == "completed"
    assert (await client.call("agent/submit", {"prompt": "b"}))["status"] == "completed"
    said = [m.message for m in client.log_messages if "reasoning.summary" in m.message]
    assert len(said) == 1 and "organization must be verified" in said[0]
    assert "summary" not in fake.requests[-1].body["reasoning"]
