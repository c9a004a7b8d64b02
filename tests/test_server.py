"""The language server end to end: the real server process under pytest-lsp,
the fake model over HTTP. One test (at least) per numbered semantic of
protocol.md, plus progress, events, errors and shutdown."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException

from agentls.testing.fake_model import FakeModelThread, Reply

from .lsp_support import API_KEY, AgentClient
from .support import WAIT, pid_alive, pids_in

SLEEPY = "sleep 300 & echo pid=$!; sh -c 'sleep 300 & echo pid=$!; wait' & wait"


def tool_text(client: AgentClient) -> str:
    return "".join(e["text"] for e in client.of("tool.output"))


async def error_of(client: AgentClient, method: str, params: Any) -> JsonRpcException:
    with pytest.raises(JsonRpcException) as caught:
        await client.call(method, params)
    return caught.value


# --- initialize ------------------------------------------------------------------------


async def test_initialize_advertises_agentls(client: AgentClient) -> None:
    assert client.init_result is not None
    experimental = client.init_result.capabilities.experimental
    assert experimental is not None
    agentls = experimental["agentls"]
    assert agentls["protocolVersion"] == 2 and agentls["maxForks"] == 1
    # The configured model's (the default, gpt-5.1-codex): see model/models.py.
    assert agentls["model"] == "gpt-5.1-codex"
    assert agentls["efforts"] == ["low", "medium", "high"]
    assert agentls["contextWindow"] == 272_000
    assert "missingCredentials" not in agentls  # a key and a base URL
    assert set(agentls["methods"]) == {
        "agent/submit",
        "agent/steer",
        "agent/cancel",
        "agent/fork",
        "agent/closePane",
        "agent/setEffort",
        "agent/setFastMode",
        "agent/setApproval",
        "agent/auxiliary",
        "agent/newSession",
        "agent/cancelTool",
        "agent/processes",
        "agent/mcpServers",
        "agent/mcpRestart",
        "agent/mcpRevoke",
        "agent/compact",
        "agent/instructions",
        "agent/sessions",
        "agent/resume",
        "agent/deleteSession",
        "agent/history",
        "agent/setReview",
    }


# --- 1. submit ----------------------------------------------------------------------------


async def test_submit_with_client_token_reports_progress(
    client: AgentClient, fake: FakeModelThread, workspace: Path
) -> None:
    (workspace / "app.py").write_text("print('hi')\n")
    fake.script(
        Reply.tool_call("exec_command", {"cmd": "pytest -q || true"}, call_id="c1"),
        Reply.tool_call(
            "apply_patch",
            {
                "patch": "*** Begin Patch\n*** Update File: app.py\n"
                "-print('hi')\n+print('hello')\n*** End Patch"
            },
            call_id="c2",
        ),
        Reply.text("Fixed it."),
    )
    client.progress_reports["tok-1"] = []
    result = await client.call("agent/submit", {"prompt": "fix it", "workDoneToken": "tok-1"})
    assert result["status"] == "completed" and result["finalMessage"] == "Fixed it."
    assert result["usage"]["inputTokens"] > 0
    values = client.progress_reports["tok-1"]
    kinds = [type(v).__name__ for v in values]
    assert kinds[0] == "WorkDoneProgressBegin" and kinds[-1] == "WorkDoneProgressEnd"
    assert kinds.count("WorkDoneProgressBegin") == 1 and kinds.count("WorkDoneProgressEnd") == 1
    begin = values[0]
    assert isinstance(begin, lsp.WorkDoneProgressBegin)
    assert begin.cancellable is True and begin.title.startswith("Agent: fix it")
    messages = [v.message for v in values if isinstance(v, lsp.WorkDoneProgressReport)]
    assert "Running `pytest -q || true`" in messages
    assert "Editing app.py" in messages
    assert "Writing answer" in messages
    assert (workspace / "app.py").read_text() == "print('hello')\n"


async def test_submit_without_token_uses_a_server_created_one(
    client: AgentClient, fake: FakeModelThread
) -> None:
    fake.script(Reply.text("ok"))
    before = set(client.progress_reports)
    await client.call("agent/submit", {"prompt": "hi"})
    created = set(client.progress_reports) - before
    assert len(created) == 1
    values = client.progress_reports[created.pop()]
    assert isinstance(values[0], lsp.WorkDoneProgressBegin)
    end = values[-1]
    assert isinstance(end, lsp.WorkDoneProgressEnd) and end.message == "Done"


async def test_context_selection_reaches_the_model(
    client: AgentClient, fake: FakeModelThread, workspace: Path
) -> None:
    fake.script(Reply.text("ok"))
    selection = {
        "uri": (workspace / "src" / "app.py").as_uri(),
        "range": {"start": {"line": 9, "character": 0}, "end": {"line": 11, "character": 4}},
        "text": "def broken():\n    return 1/0",
    }
    await client.call("agent/submit", {"prompt": "explain", "context": {"selection": selection}})
    text = json.dumps(fake.requests[0].body["input"])
    assert "src/app.py (lines 10-12)" in text and "def broken()" in text
    # Whole lines selected: the selection ends at the start of the next line (not included).
    fake.script(Reply.text("ok"))
    selection["range"] = {"start": {"line": 0, "character": 0}, "end": {"line": 2, "character": 0}}
    await client.call("agent/submit", {"prompt": "explain", "context": {"selection": selection}})
    assert "src/app.py (lines 1-2)" in json.dumps(fake.requests[1].body["input"])


async def test_model_failure_is_a_failed_result(client: AgentClient, fake: FakeModelThread) -> None:
    fake.script(Reply.http_error(401, message="nope"))
    result = await client.call("agent/submit", {"prompt": "hi"})
    assert result["status"] == "failed"
    assert "Check OPENAI_API_KEY" in result["error"]
    fake.script(Reply.text("back"))
    assert (await client.call("agent/submit", {"prompt": "again"}))["status"] == "completed"


async def test_deltas_are_coalesced_in_order(client: AgentClient, fake: FakeModelThread) -> None:
    fake.script(Reply.many_deltas(3000, text="x"))
    result = await client.call("agent/submit", {"prompt": "go"})
    assert result["finalMessage"] == "x" * 3000
    deltas = client.of("message.delta")
    assert "".join(d["text"] for d in deltas) == "x" * 3000
    assert len(deltas) <= 3000 / 20
    assert [e["seq"] for e in client.events] == list(range(1, len(client.events) + 1))


# --- 2/3. cancellation by the editor ------------------------------------------------------


async def test_cancel_request_during_the_model_stream(
    client: AgentClient, fake: FakeModelThread
) -> None:
    gate = fake.gate()
    fake.script(Reply.text("never finished text", hold=gate, hold_after=5))
    msg_id, future = client.request("agent/submit", {"prompt": "long"})
    await gate.wait_reached(timeout=WAIT)
    await client.event("message.delta")
    client.cancel(msg_id)
    result = await asyncio.wait_for(asyncio.wrap_future(future), WAIT)
    assert result["status"] == "cancelled"
    assert result["receipt"]["abortedToolCalls"] == []
    finished = await client.event("turn.finished")
    assert finished["status"] == "cancelled"
    fake.script(Reply.text("second"))
    await client.call("agent/submit", {"prompt": "next"})
    items = fake.requests[-1].body["input"]
    assert [i.get("role") for i in items] == ["user", "user"], "no partial text was kept"


# The commands print their pids: the real ones only without the sandbox's pid
# namespace (tests/test_sandbox.py runs these cases sandboxed).
@pytest.mark.init_options(sandbox="off", approval="never")
async def test_cancel_request_during_a_tool_call_kills_the_tree(
    client: AgentClient, fake: FakeModelThread
) -> None:
    fake.script(Reply.tool_call("exec_command", {"cmd": SLEEPY}, call_id="call_sleep"))
    msg_id, future = client.request("agent/submit", {"prompt": "sleep"})
    await client.until(lambda: tool_text(client).count("pid=") >= 2)
    pids = pids_in(tool_text(client))
    assert all(pid_alive(pid) for pid in pids)
    client.cancel(msg_id)
    response = await asyncio.wait_for(asyncio.wrap_future(future), WAIT)
    # The answer came only after every process of the turn was dead.
    assert not [pid for pid in pids if pid_alive(pid)]
    receipt = response["receipt"]
    assert response["status"] == "cancelled"
    assert receipt["abortedToolCalls"] == [{"callId": "call_sleep", "tool": "exec_command"}]
    assert receipt["killedProcesses"] >= 3 and receipt["survivingProcesses"] == 0
    fake.script(Reply.text("after"))
    await client.call("agent/submit", {"prompt": "continue"})
    outputs = [i for i in fake.requests[-1].body["input"] if i["type"] == "function_call_output"]
    assert outputs == [
        {"type": "function_call_output", "call_id": "call_sleep", "output": "aborted by user"}
    ]


async def test_cancel_request_on_a_queued_submit(
    client: AgentClient, fake: FakeModelThread
) -> None:
    gate = fake.gate()
    fake.script(Reply.text("first", hold=gate), Reply.text("third"))
    _, first = client.request("agent/submit", {"prompt": "first"})
    await gate.wait_reached(timeout=WAIT)
    queued_id, queued = client.request("agent/submit", {"prompt": "second"})
    await client.until(lambda: len(client.events) > 0)
    client.cancel(queued_id)
    result = await asyncio.wait_for(asyncio.wrap_future(queued), WAIT)
    assert result["status"] == "cancelled"
    assert not first.done(), "the running turn is untouched"
    gate.release()
    assert (await asyncio.wait_for(asyncio.wrap_future(first), WAIT))["status"] == "completed"
    third = await client.call("agent/submit", {"prompt": "third"})
    assert third["finalMessage"] == "third"
    assert len(fake.requests) == 2, "the cancelled turn never reached the model"


async def test_a_submit_cancelled_before_the_server_submitted_it_never_starts(
    client: AgentClient, fake: FakeModelThread
) -> None:
    # The server is still creating the second submit's progress token when its
    # $/cancelRequest arrives, and the running turn ends meanwhile: the second
    # turn must not start (it is queued and cancelled in one step).
    fake.script(Reply.hang())
    _, first = client.request("agent/submit", {"prompt": "first"})
    await fake.wait_for_requests_async(1, timeout=WAIT)
    client.hold_progress = asyncio.Event()
    asked = client.progress_asked
    queued_id, queued = client.request("agent/submit", {"prompt": "second"})
    await client.until(lambda: client.progress_asked > asked)
    client.cancel(queued_id)
    _, cancel = client.request("agent/cancel", {"turnId": 1})
    client.hold_progress.set()
    assert (await asyncio.wait_for(asyncio.wrap_future(cancel), WAIT))["cancelled"] == 1
    assert (await asyncio.wait_for(asyncio.wrap_future(first), WAIT))["status"] == "cancelled"
    result = await asyncio.wait_for(asyncio.wrap_future(queued), WAIT)
    assert result["status"] == "cancelled"
    finished = await client.event("turn.finished", lambda e: e["turnId"] == result["turnId"])
    assert finished["status"] == "cancelled"
    assert not [e for e in client.of("turn.started") if e["turnId"] == result["turnId"]]
    assert len(fake.requests) == 1, "the cancelled turn never reached the model"


async def test_work_done_progress_cancel(client: AgentClient, fake: FakeModelThread) -> None:
    fake.script(Reply.hang())
    client.progress_reports["tok-c"] = []
    _, future = client.request("agent/submit", {"prompt": "hang", "workDoneToken": "tok-c"})
    await fake.wait_for_requests_async(1, timeout=WAIT)
    client.protocol.notify(
        "window/workDoneProgress/cancel", lsp.WorkDoneProgressCancelParams(token="tok-c")
    )
    result = await asyncio.wait_for(asyncio.wrap_future(future), WAIT)
    assert result["status"] == "cancelled"
    values = client.progress_reports["tok-c"]
    end = values[-1]
    assert isinstance(end, lsp.WorkDoneProgressEnd) and end.message == "Cancelled"


# --- 4. agent/cancel -----------------------------------------------------------------------


async def test_agent_cancel_every_turn_and_nothing(
    client: AgentClient, fake: FakeModelThread
) -> None:
    assert await client.call("agent/cancel", {}) == {"cancelled": 0, "receipts": []}
    fake.script(Reply.hang())
    _, running = client.request("agent/submit", {"prompt": "a"})
    _, queued = client.request("agent/submit", {"prompt": "b"})
    await fake.wait_for_requests_async(1, timeout=WAIT)
    result = await client.call("agent/cancel", {})
    assert result["cancelled"] == 2 and len(result["receipts"]) == 2
    for future in (running, queued):
        response = await asyncio.wait_for(asyncio.wrap_future(future), WAIT)
        assert response["status"] == "cancelled"
    fake.script(Reply.text("still usable"))
    assert (await client.call("agent/submit", {"prompt": "c"}))["status"] == "completed"


# --- 5. steer --------------------------------------------------------------------------------


async def test_steer_admitted_then_promoted(client: AgentClient, fake: FakeModelThread) -> None:
    gate = fake.gate()
    fake.script(Reply.text("draft", hold=gate), Reply.text("with steer"), Reply.text("promoted"))
    _, future = client.request("agent/submit", {"prompt": "start"})
    await gate.wait_reached(timeout=WAIT)
    started = await client.event("turn.started")
    admitted = await client.call("agent/steer", {"prompt": "also this"})
    assert admitted == {"outcome": "admitted", "turnId": started["turnId"]}
    gate.release()
    result = await asyncio.wait_for(asyncio.wrap_future(future), WAIT)
    assert result["finalMessage"] == "with steer"
    assert (await client.event("steer.applied"))["text"] == "also this"
    promoted = await client.call("agent/steer", {"prompt": "a new thought"})
    assert promoted["outcome"] == "promoted"
    finished = await client.event("turn.finished", lambda e: e["turnId"] == promoted["turnId"])
    assert finished["finalMessage"] == "promoted"


async def test_steer_with_expected_turn_mismatch_is_promoted(
    client: AgentClient, fake: FakeModelThread
) -> None:
    fake.script(Reply.hang(), Reply.hang())
    client.request("agent/submit", {"prompt": "running"})
    started = await client.event("turn.started")
    result = await client.call(
        "agent/steer", {"prompt": "for another turn", "expectedTurnId": started["turnId"] + 100}
    )
    assert result["outcome"] == "promoted" and result["turnId"] != started["turnId"]
    cancelled = await client.call("agent/cancel", {"turnId": result["turnId"]})
    assert cancelled["cancelled"] == 1


# --- 6. settings -------------------------------------------------------------------------------


async def test_effort_and_fast_mode_change_while_running(
    client: AgentClient, fake: FakeModelThread
) -> None:
    gate = fake.gate()
    fake.script(Reply.tool_call("exec_command", {"cmd": "true"}, hold=gate), Reply.text("ok"))
    _, future = client.request("agent/submit", {"prompt": "go"})
    await gate.wait_reached(timeout=WAIT)
    assert await client.call("agent/setEffort", {"effort": "high"}) == {
        "pane": "main",
        "effort": "high",
    }
    assert await client.call("agent/setFastMode", {"enabled": True}) == {
        "pane": "main",
        "enabled": True,
    }
    gate.release()
    await asyncio.wait_for(asyncio.wrap_future(future), WAIT)
    first, second = (r.body for r in fake.requests)
    assert first["reasoning"]["effort"] == "medium" and "service_tier" not in first
    assert second["reasoning"]["effort"] == "high" and second["service_tier"] == "priority"


# --- 7/8. fork and panes -----------------------------------------------------------------------


async def test_fork_then_submit_on_the_fork(client: AgentClient, fake: FakeModelThread) -> None:
    fake.script(Reply.text("main answer"), Reply.text("fork answer"))
    await client.call("agent/submit", {"prompt": "remember 42"})
    fork = await client.call("agent/fork", {})
    assert fork == {"pane": "fork-1", "items": 2}
    opened = await client.event("pane.opened", lambda e: e["pane"] == "fork-1")
    assert opened["turnId"] is None and opened["seq"] == 1
    result = await client.call("agent/submit", {"pane": "fork-1", "prompt": "what number?"})
    assert result["pane"] == "fork-1" and result["finalMessage"] == "fork answer"
    texts = json.dumps(fake.requests[-1].body["input"])
    assert "remember 42" in texts and "main answer" in texts
    error = await error_of(client, "agent/fork", {})
    assert error.code == -32002
    fork_events = [e["seq"] for e in client.events if e["pane"] == "fork-1"]
    assert fork_events == list(range(1, len(fork_events) + 1))


async def test_close_pane_with_a_running_turn(client: AgentClient, fake: FakeModelThread) -> None:
    fake.script(Reply.hang())
    await client.call("agent/fork", {})
    _, future = client.request("agent/submit", {"pane": "fork-1", "prompt": "hang"})
    await fake.wait_for_requests_async(1, timeout=WAIT)
    assert await client.call("agent/closePane", {"pane": "fork-1"}) == {"cancelled": 1}
    result = await asyncio.wait_for(asyncio.wrap_future(future), WAIT)
    assert result["status"] == "cancelled"
    await client.event("pane.closed", lambda e: e["pane"] == "fork-1")
    error = await error_of(client, "agent/submit", {"pane": "fork-1", "prompt": "gone"})
    assert error.code == -32001
    second = await client.call("agent/fork", {})
    assert second["pane"] == "fork-2"


async def test_closing_main_promotes_the_fork(client: AgentClient, fake: FakeModelThread) -> None:
    fake.script(Reply.text("main"), Reply.text("fork"), Reply.text("promoted main"))
    await client.call("agent/submit", {"prompt": "on main"})
    await client.call("agent/fork", {})
    await client.call("agent/submit", {"pane": "fork-1", "prompt": "on fork"})
    assert await client.call("agent/closePane", {"pane": "main"}) == {"cancelled": 0}
    opened = await client.event("pane.opened", lambda e: e["pane"] == "main")
    assert opened["promotedFrom"] == "fork-1"
    result = await client.call("agent/submit", {"prompt": "now main"})
    assert result["pane"] == "main"
    texts = json.dumps(fake.requests[-1].body["input"])
    assert "on fork" in texts, "main now holds the fork's conversation"
    main_seqs = [e["seq"] for e in client.events if e["pane"] == "main"]
    assert main_seqs == list(range(1, len(main_seqs) + 1))


# --- 9. auxiliary ----------------------------------------------------------------------------


async def test_auxiliary_is_isolated(client: AgentClient, fake: FakeModelThread) -> None:
    fake.script(Reply.text("main says"), Reply.text("a summary"))
    await client.call("agent/submit", {"prompt": "hello"})
    count = len(client.events)
    result = await client.call(
        "agent/auxiliary", {"prompt": "summarize", "context": "conversation"}
    )
    assert result == {"text": "a summary"}
    assert len(client.events) == count, "auxiliary jobs emit no events"
    assert "main says" in json.dumps(fake.requests[-1].body["input"])


async def test_cancelling_an_auxiliary_job_touches_nothing_else(
    client: AgentClient, fake: FakeModelThread
) -> None:
    gate = fake.gate()
    fake.script(Reply.text("main turn", hold=gate), Reply.hang())
    _, main_turn = client.request("agent/submit", {"prompt": "main"})
    await gate.wait_reached(timeout=WAIT)
    aux_id, aux = client.request("agent/auxiliary", {"prompt": "side job"})
    await fake.wait_for_requests_async(2, timeout=WAIT)
    client.cancel(aux_id)
    with pytest.raises(JsonRpcException) as caught:
        await asyncio.wait_for(asyncio.wrap_future(aux), WAIT)
    assert caught.value.code == -32800
    assert not main_turn.done()
    gate.release()
    result = await asyncio.wait_for(asyncio.wrap_future(main_turn), WAIT)
    assert result["status"] == "completed"


# --- 10. newSession --------------------------------------------------------------------------


async def test_new_session(client: AgentClient, fake: FakeModelThread) -> None:
    fake.script(Reply.hang(), Reply.text("fresh"))
    _, future = client.request("agent/submit", {"prompt": "old context"})
    await fake.wait_for_requests_async(1, timeout=WAIT)
    error = await error_of(client, "agent/newSession", {})
    assert error.code == -32004
    await client.call("agent/cancel", {})
    await asyncio.wait_for(asyncio.wrap_future(future), WAIT)
    result = await client.call("agent/newSession", {})
    assert result["pane"] == "main" and len(result["sessionId"]) == 32
    await client.call("agent/submit", {"prompt": "new context"})
    assert "old context" not in json.dumps(fake.requests[-1].body["input"])


# --- errors ------------------------------------------------------------------------------------


MALFORMED = [
    ("agent/submit", {}, -32602, "prompt: required field missing"),
    ("agent/submit", {"prompt": 42}, -32602, "prompt: expected a string"),
    ("agent/submit", {"prompt": "   "}, -32602, "must not be empty"),
    ("agent/submit", [1, 2], -32602, "params must be an object"),
    ("agent/submit", {"prompt": "x", "pane": "nope"}, -32001, "no longer available"),
    ("agent/submit", {"prompt": "x", "workDoneToken": 1.5}, -32602, "workDoneToken"),
    ("agent/steer", {"prompt": "x", "expectedTurnId": "3"}, -32602, "expectedTurnId"),
    ("agent/cancel", {"turnId": True}, -32602, "turnId: expected an integer"),
    ("agent/setEffort", {"effort": "maximum"}, -32602, "effort: must be one of"),
    ("agent/setFastMode", {"enabled": "yes"}, -32602, "enabled: expected true or false"),
    ("agent/closePane", {}, -32602, "pane: required field missing"),
    ("agent/closePane", {"pane": "fork-7"}, -32001, "no longer available"),
    ("agent/auxiliary", {"prompt": "x", "context": "everything"}, -32602, "context"),
    ("agent/fork", {"pane": 3}, -32602, "pane: expected a string"),
    ("agent/nope", {}, -32601, "agent/nope"),
]


async def test_malformed_requests_get_errors_and_the_server_keeps_serving(
    client: AgentClient, fake: FakeModelThread
) -> None:
    for method, params, code, text in MALFORMED:
        error = await error_of(client, method, params)
        assert (error.code, method) == (code, method), error
        assert text in str(error.message), (method, error.message)
    fake.script(Reply.text("still here"))
    assert (await client.call("agent/submit", {"prompt": "ok"}))["finalMessage"] == "still here"


# --- 11. shutdown; secrets -----------------------------------------------------------------------


# The commands print their pids: the real ones only without the sandbox's pid
# namespace (tests/test_sandbox.py runs these cases sandboxed).
@pytest.mark.init_options(sandbox="off", approval="never")
async def test_shutdown_with_turns_in_flight(client: AgentClient, fake: FakeModelThread) -> None:
    fake.script(Reply.tool_call("exec_command", {"cmd": SLEEPY}))
    _, running = client.request("agent/submit", {"prompt": "sleep"})
    _, queued = client.request("agent/submit", {"prompt": "queued"})
    await client.until(lambda: tool_text(client).count("pid=") >= 2)
    pids = pids_in(tool_text(client))
    await asyncio.wait_for(client.shutdown_session(), WAIT)
    for future in (running, queued):
        assert future.result()["status"] == "cancelled"
    assert not [pid for pid in pids if pid_alive(pid)]
    assert client._server is not None and client._server.returncode == 0


async def test_the_api_key_never_travels(client: AgentClient, fake: FakeModelThread) -> None:
    fake.script(
        Reply.tool_call("exec_command", {"cmd": "env; echo $OPENAI_API_KEY"}),
        Reply.http_error(
            401, message=f"Incorrect API key provided: {API_KEY[:8]}****{API_KEY[-4:]}"
        ),
    )
    result = await client.call("agent/submit", {"prompt": "show me secrets"})
    assert result["status"] == "failed"
    wire = json.dumps(client.events) + json.dumps(result)
    wire += " ".join(m.message for m in client.log_messages)
    assert API_KEY not in wire and API_KEY[-4:] not in wire
    assert fake.requests[0].headers["authorization"] == f"Bearer {API_KEY}"


async def test_turn_numbers_have_no_gaps_and_a_fork_counts_its_own(
    client: AgentClient, fake: FakeModelThread
) -> None:
    gate = fake.gate()
    fake.script(
        Reply.text("one"),
        Reply.text("two", hold=gate),
        Reply.text("two, steered"),
        Reply.text("on the fork"),
        Reply.text("three"),
    )
    await client.call("agent/submit", {"prompt": "first"})
    _, second = client.request("agent/submit", {"prompt": "second"})
    await gate.wait_reached(timeout=WAIT)
    steered = await client.call("agent/steer", {"prompt": "and this"})
    assert steered["outcome"] == "admitted"
    gate.release()
    await asyncio.wait_for(asyncio.wrap_future(second), WAIT)
    fork = await client.call("agent/fork", {})
    await client.call("agent/submit", {"prompt": "forked", "pane": fork["pane"]})
    third = await client.call("agent/submit", {"prompt": "third"})
    main = [e for e in client.of("turn.started", "main")]
    assert [e["number"] for e in main] == [1, 2, 3]
    assert [e["number"] for e in client.of("turn.started", fork["pane"])] == [1]
    # An admitted steer took no turn id either.
    ids = sorted(e["turnId"] for e in client.of("turn.started"))
    assert ids == list(range(ids[0], ids[0] + 4)) and third["turnId"] == ids[-1]
