"""MCP servers as tools, end to end: the real agentls server, real MCP servers
(``@modelcontextprotocol/server-everything`` from npm, and an MCPServer written
with the ``mcp`` SDK for these tests), the fake model over real HTTP."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import pytest

from agentls.testing.fake_model import FakeModel, Reply

from .mcp_support import (
    ALLOW,
    DENY,
    environment,
    everything,
    everything_js,
    fixture,
    http_everything,
    http_fixture,
    mcp_editor,
    mcp_processes,
    parent_of,
    read_log,
)
from .support import WAIT, pid_alive


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


def outputs(fake: FakeModel) -> list[str]:
    """The output of the last tool call in each request after the first."""
    return [request.body["input"][-1]["output"] for request in fake.requests[1:]]


def offered(fake: FakeModel, index: int = 0) -> dict[str, dict[str, Any]]:
    return {tool["name"]: tool for tool in fake.requests[index].body["tools"]}


async def until_file(path: Path, needle: str, timeout: float = WAIT) -> str:
    """The file's text once it contains ``needle`` (written by another process)."""
    async with asyncio.timeout(timeout):
        while True:
            text = path.read_text() if path.exists() else ""
            if needle in text:
                return text
            await asyncio.sleep(0.02)


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


async def gone(pids: list[int], timeout: float = WAIT) -> None:
    """Wait until every one of these processes has ended (a pidfd says so)."""
    loop = asyncio.get_running_loop()
    async with asyncio.timeout(timeout):
        for pid in pids:
            try:
                fd = os.pidfd_open(pid)
            except ProcessLookupError:
                continue
            ended: asyncio.Future[None] = loop.create_future()
            loop.add_reader(fd, _settle, ended)
            try:
                if pid_alive(pid):
                    await ended
            finally:
                loop.remove_reader(fd)
                os.close(fd)


# --- server-everything ------------------------------------------------------------------------


async def test_a_turn_calls_echo_and_add_of_server_everything_on_stdio(workspace: Path) -> None:
    async with FakeModel() as fake, mcp_editor(fake, workspace, {"everything": everything()}) as ed:
        server = await ed.status("everything", "ready", "failed")
        assert server["status"] == "ready", server
        assert {"echo", "get-sum"} <= set(server["toolNames"])
        assert server["tools"] == len(server["toolNames"]) and server["transport"] == "stdio"
        fake.script(
            Reply.tool_call("mcp__everything__echo", {"message": "hello over MCP"}),
            Reply.tool_call("mcp__everything__get-sum", {"a": 19, "b": 23}),
            Reply.text("done"),
        )
        result = await ed.submit()
        assert result["status"] == "completed" and result["finalMessage"] == "done"
        # The model was offered the tools with their own schemas, and got the answers.
        echo = offered(fake)["mcp__everything__echo"]
        assert echo["parameters"]["properties"]["message"]["type"] == "string"
        assert "exec_command" in offered(fake)
        assert outputs(fake) == ["Echo: hello over MCP", "The sum of 19 and 23 is 42."]
        titles = [event["title"] for event in ed.of("tool.started")]
        assert titles == ["everything \u203a echo", "everything \u203a get-sum"]
        assert [e["status"] for e in ed.of("tool.finished")] == ["completed", "completed"]


async def test_server_everything_over_streamable_http(workspace: Path) -> None:
    async with (
        http_everything() as remote,
        FakeModel() as fake,
        mcp_editor(fake, workspace, {"remote": {"type": "http", "url": remote.url}}) as ed,
    ):
        server = await ed.status("remote", "ready", "failed")
        assert server["status"] == "ready" and server["transport"] == "http", server
        assert server["url"] == remote.url
        fake.script(
            Reply.tool_call("mcp__remote__echo", {"message": "over HTTP"}),
            Reply.tool_call("mcp__remote__get-sum", {"a": 1, "b": 2}),
            Reply.tool_call("mcp__remote__get-resource-links", {"count": 2}),
            Reply.tool_call("mcp__remote__get-tiny-image", {}),
            Reply.text("done"),
        )
        assert (await ed.submit())["status"] == "completed"
        echo, total, links, image = outputs(fake)
        assert echo == "Echo: over HTTP" and total == "The sum of 1 and 2 is 3."
        assert links.count("[resource link: ") == 2 and "<demo://resource/" in links
        assert "[image: image/png, " in image and "not sent to you" in image


async def test_cancelling_a_turn_cancels_the_call_on_server_everything(
    workspace: Path, tmp_path: Path
) -> None:
    # What the server received, recorded on its way in (tee): the proof it got the cancel.
    received = tmp_path / "received.jsonl"
    recorded = {
        "command": "sh",
        "args": ["-c", 'tee "$0" | exec node "$1" stdio', str(received), everything_js()],
    }
    async with FakeModel() as fake, mcp_editor(fake, workspace, {"everything": recorded}) as ed:
        assert (await ed.status("everything", "ready", "failed"))["status"] == "ready"
        slow = {"duration": 60, "steps": 60}
        fake.script(
            Reply.tool_call("mcp__everything__trigger-long-running-operation", slow),
            Reply.tool_call("mcp__everything__echo", {"message": "still here"}),
            Reply.text("done"),
        )
        msg_id, future = ed.client.request("agent/submit", {"prompt": "go"})
        text = await until_file(received, "trigger-long-running-operation")
        call = next(
            m for m in map(json.loads, text.splitlines()) if m.get("method") == "tools/call"
        )
        ed.client.cancel(msg_id)
        result = await asyncio.wait_for(future, WAIT)
        assert result["status"] == "cancelled"
        assert [c["callId"] for c in result["receipt"]["abortedToolCalls"]] == ["call_1"]
        text = await until_file(received, "notifications/cancelled")
        cancels = [
            m
            for m in map(json.loads, text.splitlines())
            if m.get("method") == "notifications/cancelled"
        ]
        assert [m["params"]["requestId"] for m in cancels] == [call["id"]]
        # The server is still there, and the conversation goes on.
        assert (await ed.submit("again"))["status"] == "completed"
        assert fake.requests[-1].body["input"][-1]["output"] == "Echo: still here"


# --- the MCPServer (FastMCP) fixture -------------------------------------------------------------


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_cancelled_call_is_cancelled_in_the_server(
    workspace: Path, tmp_path: Path, transport: str
) -> None:
    log = tmp_path / "fixture.jsonl"
    async with http_fixture(log) as remote:
        entry = fixture(log) if transport == "stdio" else {"type": "http", "url": remote.url}
        async with FakeModel() as fake, mcp_editor(fake, workspace, {"fx": entry}) as ed:
            assert (await ed.status("fx", "ready", "failed"))["status"] == "ready"
            fake.script(Reply.tool_call("mcp__fx__slow", {"seconds": 60, "tag": transport}))
            msg_id, future = ed.client.request("agent/submit", {"prompt": "go"})
            await until_file(log, "slow.started")
            ed.client.cancel(msg_id)
            result = await asyncio.wait_for(future, WAIT)
            assert result["status"] == "cancelled"
            await until_file(log, "slow.cancelled")
            assert [e["tag"] for e in read_log(log) if e["event"] == "slow.cancelled"] == [
                transport
            ]
            assert ed.of("tool.finished")[-1]["status"] == "cancelled"


async def test_results_become_the_calls_output_bounded_and_new_tools_appear(
    workspace: Path,
) -> None:
    async with FakeModel() as fake, mcp_editor(fake, workspace, {"fx": fixture()}) as ed:
        server = await ed.status("fx", "ready", "failed")
        assert "notes.write" in server["toolNames"]
        fake.script(
            Reply.tool_call("mcp__fx__big", {"lines": 5000}),
            Reply.tool_call("mcp__fx__picture", {}),
            Reply.tool_call("mcp__fx__fail", {"reason": "the disk is full"}),
            Reply.tool_call("mcp__fx__slow", {"seconds": "not a number", "tag": "x"}),
            Reply.text("done"),
        )
        assert (await ed.submit())["status"] == "completed"
        big, picture, fail, bad_args = outputs(fake)
        assert big.startswith("line 000000") and big.rstrip().endswith(
            "line 004999 of a long output"
        )
        assert "bytes of output omitted" in big and len(big.encode()) < 40_000
        assert picture.startswith("a red dot:\n[image: image/png, ")
        assert fail == "error: Error executing tool fail: the disk is full"
        assert bad_args.startswith("error: ")
        statuses = [e["status"] for e in ed.of("tool.finished")]
        assert statuses == ["completed", "completed", "failed", "failed"]
        # A tool name the Responses API would refuse is offered under a clean one.
        assert "mcp__fx__notes_write" in offered(fake)
        # A server whose tools change is listed again.
        fake.script(Reply.tool_call("mcp__fx__grow", {"name": "extra"}), Reply.text("grown"))
        assert (await ed.submit())["status"] == "completed"
        await ed.server("fx", lambda server: "extra" in server["toolNames"])
        fake.script(Reply.tool_call("mcp__fx__extra", {}), Reply.text("done"))
        assert (await ed.submit())["status"] == "completed"
        assert fake.requests[-1].body["input"][-1]["output"] == "extra grown"


async def test_approval_asks_before_tools_that_may_change_things(workspace: Path) -> None:
    options = {"approval": "on-request"}
    async with (
        FakeModel() as fake,
        mcp_editor(fake, workspace, {"fx": fixture()}, options=options) as ed,
    ):
        await ed.status("fx", "ready", "failed")
        fake.script(
            Reply.tool_call("mcp__fx__pid", {}),
            Reply.tool_call("mcp__fx__notes_write", {"text": "allowed"}),
            Reply.text("done"),
        )
        assert (await ed.submit())["status"] == "completed"
        # readOnlyHint: no question; the note writer: asked, with its arguments.
        assert [a["tool"] for a in ed.approvals] == ["mcp__fx__notes_write"]
        assert ed.approvals[0]["title"] == "fx \u203a notes.write"
        assert ed.approvals[0]["command"] == 'mcp__fx__notes_write {"text":"allowed"}'
        assert (workspace / "notes.txt").read_text() == "allowed\n"
        ed.approval_answer = "deny"
        fake.script(Reply.tool_call("mcp__fx__notes_write", {"text": "denied"}), Reply.text("ok"))
        assert (await ed.submit())["status"] == "completed"
        assert "the user denied" in fake.requests[-1].body["input"][-1]["output"]
        assert (workspace / "notes.txt").read_text() == "allowed\n"


# --- servers that fail ---------------------------------------------------------------------------


async def test_servers_that_fail_or_hang_leave_turns_working(
    workspace: Path, tmp_path: Path
) -> None:
    servers = {
        "exits": {
            "command": sys.executable,
            "args": ["-c", "import sys; sys.exit('boom: no token')"],
        },
        # Reads its input and never answers initialize.
        "hangs": {"command": sys.executable, "args": ["-c", "import sys; sys.stdin.read()"]},
        "missing": {"command": "agentls-no-such-mcp-server"},
        "everything": everything(),
    }
    async with FakeModel() as fake, mcp_editor(fake, workspace, servers) as ed:
        fake.script(Reply.text("a turn while a server hangs"))
        assert (await ed.submit())["status"] == "completed"
        assert (await ed.servers())["hangs"]["status"] == "starting"
        exits = await ed.status("exits", "failed", "ready")
        assert exits["status"] == "failed" and "boom: no token" in exits["error"], exits
        missing = await ed.status("missing", "failed", "ready")
        assert "command not found" in missing["error"]
        assert (await ed.status("everything", "ready", "failed"))["status"] == "ready"
        fake.script(Reply.tool_call("mcp__everything__echo", {"message": "ok"}), Reply.text("done"))
        assert (await ed.submit())["status"] == "completed"
        tools = offered(fake, -1)
        assert "mcp__everything__echo" in tools
        assert not [name for name in tools if name.startswith(("mcp__exits", "mcp__hangs"))]
        hung = ed.children("hangs")
        assert len(hung) == 1
    await gone(hung)  # shutdown took the hung one with it


async def test_a_server_that_never_answers_fails_after_its_startup_timeout(
    workspace: Path, tmp_path: Path
) -> None:
    env = environment(tmp_path, AGENTLS_MCP_STARTUP_TIMEOUT="1")
    hangs = {"command": sys.executable, "args": ["-c", "import sys; sys.stdin.read()"]}
    async with FakeModel() as fake, mcp_editor(fake, workspace, {"hangs": hangs}, env=env) as ed:
        server = await ed.status("hangs", "failed")
        assert server["error"].startswith("no answer within 1 s of starting"), server
        assert not ed.children("hangs")


async def test_a_server_that_dies_is_restarted_on_next_use_or_by_the_user(
    workspace: Path,
) -> None:
    async with FakeModel() as fake, mcp_editor(fake, workspace, {"fx": fixture()}) as ed:
        await ed.status("fx", "ready", "failed")
        fake.script(
            Reply.tool_call("mcp__fx__pid", {}),
            Reply.tool_call("mcp__fx__crash", {}),
            Reply.text("it crashed"),
        )
        assert (await ed.submit())["status"] == "completed"
        first_pid, crashed = outputs(fake)
        assert "went away" in crashed
        dead = await ed.status("fx", "failed")
        assert "started again when one of its tools is called" in dead["error"]
        # Still on offer; the next call starts it again.
        fake.script(Reply.tool_call("mcp__fx__pid", {}), Reply.text("back"))
        assert (await ed.submit())["status"] == "completed"
        assert "mcp__fx__pid" in offered(fake, -2)
        second_pid = fake.requests[-1].body["input"][-1]["output"]
        assert second_pid.isdigit() and second_pid != first_pid
        server = (await ed.servers())["fx"]
        assert server["status"] == "ready" and server["restarts"] == 1
        # A restart asked by the user: a new process, the restarts count from zero.
        (before,) = ed.children("fx")
        answer = await ed.client.call("agent/mcpRestart", {"name": "fx"}, timeout=WAIT)
        assert answer["name"] == "fx" and answer["status"] == "starting"
        assert (await ed.status("fx", "ready"))["restarts"] == 0
        assert ed.children("fx") != [before] and len(ed.children("fx")) == 1
        assert not pid_alive(before)
        with pytest.raises(Exception, match="no MCP server named 'nope'"):
            await ed.client.call("agent/mcpRestart", {"name": "nope"}, timeout=WAIT)


# --- the project's .mcp.json ------------------------------------------------------------------


def project(workspace: Path, servers: dict[str, Any]) -> None:
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))


async def test_a_project_server_starts_only_once_the_user_allows_it(
    workspace: Path, tmp_path: Path
) -> None:
    project(workspace, {"proj": fixture()})
    seen_before_answer: list[list[int]] = []
    editor_pid = 0

    async def allow(params: dict[str, Any]) -> str:
        # Asked before anything of the project's ran.
        seen_before_answer.append([p for p in mcp_processes("proj") if parent_of(p) == editor_pid])
        return ALLOW

    async with FakeModel() as fake, mcp_editor(fake, workspace, consent=allow) as ed:
        editor_pid = ed.pid
        server = await ed.status("proj", "ready", "disabled", "failed")
        assert server["status"] == "ready" and server["source"] == "project"
        assert len(ed.questions) == 1 and seen_before_answer == [[]]
        question = ed.questions[0]
        assert "'proj'" in question and "mcp_fixture.py" in question
        assert "outside the sandbox" in question
        fake.script(Reply.tool_call("mcp__proj__pid", {}), Reply.text("done"))
        assert (await ed.submit())["status"] == "completed"
    # Remembered for this project: no second question.
    async with FakeModel() as fake, mcp_editor(fake, workspace) as ed:
        assert (await ed.status("proj", "ready", "disabled", "failed"))["status"] == "ready"
        assert ed.questions == []
        # Revoked: stopped, and the next start asks again.
        revoked = await ed.client.call("agent/mcpRevoke", {}, timeout=WAIT)
        assert revoked == {"revoked": ["proj"]}
        server = await ed.status("proj", "disabled")
        assert "revoked" in server["error"]
        await gone(ed.children("proj"))
    async with FakeModel() as fake, mcp_editor(fake, workspace, consent=DENY) as ed:
        assert (await ed.status("proj", "disabled", "ready"))["status"] == "disabled"
        assert len(ed.questions) == 1


async def test_a_project_server_the_user_denies_never_runs(workspace: Path) -> None:
    project(workspace, {"proj": fixture()})
    async with FakeModel() as fake, mcp_editor(fake, workspace, consent=DENY) as ed:
        server = await ed.status("proj", "disabled", "ready")
        assert server["status"] == "disabled" and "did not allow" in server["error"]
        assert not ed.children("proj")
        fake.script(Reply.text("done"))
        assert (await ed.submit())["status"] == "completed"
        assert not [n for n in offered(fake) if n.startswith("mcp__")]
        with pytest.raises(Exception, match=r"no MCP server named 'nope'"):
            await ed.client.call("agent/mcpRevoke", {"name": "nope"}, timeout=WAIT)
    # The denial is remembered; a restart asks again.
    async with FakeModel() as fake, mcp_editor(fake, workspace, consent=ALLOW) as ed:
        assert (await ed.status("proj", "disabled", "ready"))["status"] == "disabled"
        assert ed.questions == []
        await ed.client.call("agent/mcpRestart", {"name": "proj"}, timeout=WAIT)
        assert (await ed.status("proj", "ready", "disabled"))["status"] == "ready"
        assert len(ed.questions) == 1


async def test_configuration_from_the_user_file_and_its_problems(
    workspace: Path, tmp_path: Path
) -> None:
    user = tmp_path / "config" / "agentls"
    user.mkdir(parents=True)
    (user / "mcp.json").write_text(
        json.dumps(
            {
                "mcpServers": {
                    "fx": fixture() | {"alwaysAllow": ["pid"]},
                    "bad": {"type": "sse", "url": "http://127.0.0.1:1/sse"},
                }
            }
        )
    )
    project(workspace, {"fx": {"command": "echo"}})
    async with FakeModel() as fake, mcp_editor(fake, workspace) as ed:
        servers = await ed.servers()
        assert servers["fx"]["source"] == "user"
        assert servers["fx"]["notes"] == ["unknown key 'alwaysAllow' ignored"]
        assert "SSE transport is not supported" in servers["bad"]["error"]
        result = await ed.client.call("agent/mcpServers", {}, timeout=WAIT)
        assert any("'fx' is ignored" in problem for problem in result["problems"])
        assert ed.questions == []  # the project's fx is not used, so not asked about
        assert (await ed.status("fx", "ready", "failed"))["status"] == "ready"


async def test_no_servers_configured(workspace: Path) -> None:
    async with FakeModel() as fake, mcp_editor(fake, workspace) as ed:
        assert await ed.client.call("agent/mcpServers", {}, timeout=WAIT) == {"servers": []}
        fake.script(Reply.text("done"))
        assert (await ed.submit())["status"] == "completed"
        assert not [n for n in offered(fake) if n.startswith("mcp__")]


# --- process hygiene ---------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["stdin-closed", "shutdown", "sigkill"])
async def test_mcp_server_processes_end_with_the_server(workspace: Path, how: str) -> None:
    servers = {"fx": fixture(), "everything": everything()}
    async with FakeModel() as fake, mcp_editor(fake, workspace, servers) as ed:
        await ed.status("fx", "ready")
        await ed.status("everything", "ready")
        children = ed.children("fx") + ed.children("everything")
        assert len(children) == 2
        process = ed.client.process
        if how == "stdin-closed":  # the editor was killed: its end of the pipe closes
            assert process.stdin is not None
            process.stdin.close()
        elif how == "shutdown":
            await ed.client.call("shutdown", timeout=WAIT)
            ed.client.notify("exit")
        else:  # agentls itself killed: its MCP servers see their input close
            process.send_signal(signal.SIGKILL)
        await asyncio.wait_for(process.wait(), 2 * WAIT)
        await gone(children)


@pytest.mark.parametrize("cgroups", ["on", "off"], ids=["cgroup", "sweep-only"])
async def test_a_turns_process_sweep_leaves_mcp_servers_alone(
    workspace: Path, tmp_path: Path, cgroups: str
) -> None:
    # The MCP server (re)starts while the turn's command runs: the sweep of the
    # cancelled turn takes late orphans of the turn, and must not take it for one.
    env = environment(tmp_path, AGENTLS_CGROUPS=cgroups)
    async with FakeModel() as fake, mcp_editor(fake, workspace, {"fx": fixture()}, env=env) as ed:
        await ed.status("fx", "ready")
        fake.script(Reply.tool_call("exec_command", {"cmd": "echo started; sleep 60"}))
        msg_id, future = ed.client.request("agent/submit", {"prompt": "go"})
        await ed.until(lambda: ed.of("tool.output"))
        await ed.client.call("agent/mcpRestart", {"name": "fx"}, timeout=WAIT)
        await ed.status("fx", "ready")
        (pid,) = ed.children("fx")
        ed.client.cancel(msg_id)
        assert (await asyncio.wait_for(future, WAIT))["status"] == "cancelled"
        assert pid_alive(pid)
        fake.script(Reply.tool_call("mcp__fx__pid", {}), Reply.text("done"))
        assert (await ed.submit())["status"] == "completed"
        assert fake.requests[-1].body["input"][-1]["output"] == str(pid)
