"""A server that outlives its editor (``serve --listen`` behind ``serve
--reattach``): real bridge and server processes, editors killed with SIGKILL
as a reloaded window's would be, and new ones that attach."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any

import pytest

from agentls.client.rpc import RpcError
from agentls.sessions.paths import socket_path
from agentls.testing.fake_model import FakeModel, Reply

from .support import WAIT, pid_alive, wait_gone
from .test_sessions_server import Client

BRIDGE = [sys.executable, "-m", "agentls", "serve", "--reattach"]


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    # A socket path must be short: a runtime folder of its own under /tmp.
    runtime = tempfile.mkdtemp(prefix="agentls-run-", dir="/tmp")
    environment = {
        **os.environ,
        "OPENAI_API_KEY": "sk-test-attach",
        "AGENTLS_STATE_DIR": str(tmp_path / "state"),
        "XDG_RUNTIME_DIR": runtime,
    }
    environment.pop("OPENAI_BASE_URL", None)
    return environment


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


def server_pid(sock: Path) -> int | None:
    """The process listening on the socket (by its command line)."""
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                command = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"--listen" in command and str(sock).encode() in command:
                return int(entry)
    return None


@asynccontextmanager
async def editor(
    fake: FakeModel, workspace: Path, env: dict[str, str], *extra: str, **options: Any
) -> AsyncIterator[tuple[Client, dict[str, Any]]]:
    client = await Client.spawn([*BRIDGE, *extra], env=env, cwd=str(workspace))
    try:
        result = await asyncio.wait_for(
            client.initialize(
                {"workspace": str(workspace), "baseUrl": fake.base_url, **options},
                str(workspace),
            ),
            WAIT * 2,
        )
        yield client, result["capabilities"]["experimental"]["agentls"]
    finally:
        if client.process.returncode is None:
            client.process.kill()  # as a reloaded window's editor goes: no shutdown
            await client.process.wait()


async def stop_server(sock: Path) -> None:
    pid = server_pid(sock)
    if pid is not None:
        with suppress(OSError):
            os.kill(pid, signal.SIGTERM)
        await wait_gone(pid)


async def test_a_turn_survives_its_editor_and_the_next_one_attaches(
    workspace: Path, env: dict[str, str]
) -> None:
    sock = socket_path(workspace, env)
    async with FakeModel() as fake:
        gate = fake.gate()
        fake.script(Reply.text("one two three four five six", delay=0.005).with_hold(gate, after=4))
        try:
            async with editor(fake, workspace, env) as (first, caps):
                assert "attached" not in caps
                pid = server_pid(sock)
                assert pid is not None
                # The first editor's ids: 1 initialize, 2 this submit.
                _, submitted = first.request("agent/submit", {"prompt": "hello"})
                async with asyncio.timeout(WAIT):
                    await gate.wait_reached()
                seen = list(first.events)
            with pytest.raises(ConnectionError):
                await asyncio.wait_for(submitted, WAIT)
            assert pid_alive(pid), "the server outlives its editor"
            async with editor(fake, workspace, env) as (second, caps):
                assert caps["attached"] is True and caps["panes"] == ["main"]
                assert server_pid(sock) == pid
                # Its id 2 too: the first editor's answer must not be taken for it.
                history = await second.call("agent/history", {}, timeout=WAIT)
                assert history["runningTurnId"] == seen[0]["turnId"]
                assert history["events"][: len(seen)] == seen
                gate.release()
                finished = await second.until(lambda: second.of("turn.finished"))
                live = [e for e in second.events if e["seq"] > history["lastSeq"]]
                rebuilt = history["events"] + live
                assert [e["seq"] for e in rebuilt] == list(range(1, len(rebuilt) + 1))
                assert finished[0]["finalMessage"] == "one two three four five six"
                text = "".join(e["text"] for e in rebuilt if e["kind"] == "message.delta")
                assert text == "one two three four five six"
                answers = [m for m in second.log if "method" not in m]
                assert [m["id"] for m in answers] == [1, 2], "only its own answers"
                await second.shutdown()
            await wait_gone(pid)
            assert not sock.exists()
        finally:
            await stop_server(sock)


async def test_an_approval_nobody_can_answer_is_denied(
    workspace: Path, env: dict[str, str]
) -> None:
    sock = socket_path(workspace, env)
    async with FakeModel() as fake:
        fake.script(
            Reply.tool_call("exec_command", {"cmd": "touch made-it"}, call_id="c1"),
            Reply.text("understood"),
        )
        try:
            async with editor(fake, workspace, env, approval="always") as (first, _):
                first.request("agent/submit", {"prompt": "make it"})
                # The question arrives; this editor is gone before it answers.
                await first.until(
                    lambda: any(m.get("method") == "window/showMessageRequest" for m in first.log)
                )
            async with editor(fake, workspace, env) as (second, _):
                history = await second.call("agent/history", {}, timeout=WAIT)
                done = [e for e in history["events"] if e["kind"] == "turn.finished"]
                if not done:
                    done = await second.until(lambda: second.of("turn.finished"))
                assert done[0]["finalMessage"] == "understood"
        finally:
            await stop_server(sock)
    assert not (workspace / "made-it").exists()
    output = fake.requests[1].body["input"][-1]["output"]
    assert "could not be asked" in output and "editor" in output


async def test_the_server_stops_when_no_editor_comes_back(
    workspace: Path, env: dict[str, str]
) -> None:
    sock = socket_path(workspace, env)
    async with FakeModel() as fake:
        async with editor(fake, workspace, env, "--linger", "0.5") as (_, caps):
            pid = server_pid(sock)
            assert pid is not None and "attached" not in caps
        await wait_gone(pid)
    assert not sock.exists()


async def test_a_newer_editor_takes_over_and_another_workspace_is_refused(
    workspace: Path, env: dict[str, str], tmp_path: Path
) -> None:
    sock = socket_path(workspace, env)
    async with FakeModel() as fake:
        try:
            async with (
                editor(fake, workspace, env) as (first, _),
                editor(fake, workspace, env) as (second, caps),
            ):
                assert caps["attached"] is True
                await asyncio.wait_for(first.process.wait(), WAIT)  # its bridge ended
                assert await second.call("agent/sessions", {}, timeout=WAIT) == {"sessions": []}
            other = tmp_path / "other"
            other.mkdir()
            intruder = await Client.spawn(
                [sys.executable, "-m", "agentls", "serve", "--reattach"],
                env=env,
                cwd=str(workspace),
            )
            try:
                with pytest.raises(RpcError, match="not in"):
                    await asyncio.wait_for(
                        intruder.initialize({"workspace": str(other)}, str(other)), WAIT
                    )
            finally:
                intruder.process.kill()
                await intruder.process.wait()
        finally:
            await stop_server(sock)


async def test_the_bridge_refuses_a_socket_folder_others_can_use(
    workspace: Path, env: dict[str, str]
) -> None:
    folder = Path(env["XDG_RUNTIME_DIR"]) / "agentls"
    folder.mkdir(mode=0o777)
    folder.chmod(0o777)  # as if someone else had made it for us
    bridge = await asyncio.create_subprocess_exec(
        *BRIDGE,
        env=env,
        cwd=str(workspace),
        stdin=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await asyncio.wait_for(bridge.communicate(), WAIT)
    assert bridge.returncode == 1
    assert "closed to others" in err.decode()
    assert list(folder.iterdir()) == [], "no server was started, nothing connected"
