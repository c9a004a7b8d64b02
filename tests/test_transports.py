"""--tcp and --ws: loopback by default, any other address needs
--allow-remote; a client must always present the token (generated and written
0600 to the state folder unless given, never on the command line); --ws
refuses web pages from origins not allowed; a workspace outside the client's
folders is refused."""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import stat
import struct
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from .support import WAIT

SERVE = [sys.executable, "-m", "agentls", "serve"]


def initialize(root: Path, **options: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "processId": None,
            "rootUri": root.as_uri(),
            "capabilities": {},
            "initializationOptions": options,
        },
    }


class Listener:
    def __init__(self, process: asyncio.subprocess.Process, url: str, token_file: Path | None):
        self.process = process
        self.url = url
        self.token_file = token_file

    @property
    def token(self) -> str:
        assert self.token_file is not None
        return self.token_file.read_text().strip()


@asynccontextmanager
async def listening(*args: str, env: dict[str, str] | None = None) -> AsyncIterator[Listener]:
    process = await asyncio.create_subprocess_exec(
        *SERVE,
        *args,
        stderr=asyncio.subprocess.PIPE,
        stdin=asyncio.subprocess.DEVNULL,
        env={**os.environ, **(env or {})},
    )
    assert process.stderr is not None
    try:
        line = (await asyncio.wait_for(process.stderr.readline(), WAIT)).decode()
        match = re.search(r"listening on (\S+?)(?:; token in (\S+))?$", line.strip())
        assert match, line
        token_file = Path(match.group(2)) if match.group(2) else None
        yield Listener(process, match.group(1), token_file)
    finally:
        if process.returncode is None:
            process.kill()
        await process.wait()


@pytest.fixture(autouse=True)
def state_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Generated tokens go to a state folder of the test's own."""
    folder = tmp_path / "state"
    monkeypatch.setenv("AGENTLS_STATE_DIR", str(folder))
    monkeypatch.delenv("AGENTLS_TOKEN", raising=False)
    return folder


async def tcp_exchange(url: str, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    host, port = url.removeprefix("tcp://").rsplit(":", 1)
    reader, writer = await asyncio.open_connection(host, int(port))
    answers = []
    for message in messages:
        body = json.dumps(message).encode()
        writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        await writer.drain()
        if "id" not in message:
            continue
        length = 0
        while (line := await asyncio.wait_for(reader.readline(), WAIT)) not in (b"\r\n", b""):
            if line.lower().startswith(b"content-length"):
                length = int(line.split(b":")[1])
        answers.append(json.loads(await reader.readexactly(length)))
    writer.close()
    return answers


async def test_tcp_on_loopback(tmp_path: Path, state_dir: Path) -> None:
    async with listening("--tcp", "127.0.0.1:0") as server:
        assert server.url.startswith("tcp://127.0.0.1:")
        port = server.url.rsplit(":", 1)[1]
        # The token was made up, written for the user alone, and is on no command line.
        assert server.token_file == state_dir / "tokens" / f"tcp-{port}.token"
        assert stat.S_IMODE(server.token_file.stat().st_mode) == 0o600
        token = server.token
        assert len(token) >= 32
        with open(f"/proc/{server.process.pid}/cmdline", "rb") as f:
            assert token.encode() not in f.read()
        shutdown = {"jsonrpc": "2.0", "id": 2, "method": "shutdown"}
        exit_ = {"jsonrpc": "2.0", "method": "exit"}
        init, down = await tcp_exchange(
            server.url, [initialize(tmp_path, token=token), shutdown, exit_]
        )
        assert init["result"]["capabilities"]["experimental"]["agentls"]["protocolVersion"] == 2
        assert down["result"] is None
        assert await asyncio.wait_for(server.process.wait(), WAIT) == 0
    assert not server.token_file.exists(), "the token file goes with the server"


@pytest.mark.parametrize("scheme", ["tcp", "ws"])
async def test_loopback_listeners_refuse_initialize_without_the_token(
    tmp_path: Path, scheme: str
) -> None:
    for options in ({}, {"token": "guessed"}):
        async with listening(f"--{scheme}", "127.0.0.1:0") as server:
            token = server.token
            (refused,) = await exchange(server.url, [initialize(tmp_path, **options)])
            assert refused["error"]["code"] == -32600 and "token" in refused["error"]["message"]
            assert token not in json.dumps(refused)


async def exchange(url: str, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    if url.startswith("tcp://"):
        return await tcp_exchange(url, messages)
    from websockets.asyncio.client import connect

    answers = []
    async with connect(url) as websocket:
        for message in messages:
            await websocket.send(json.dumps(message))
            if "id" in message:
                answers.append(json.loads(await asyncio.wait_for(websocket.recv(), WAIT)))
    return answers


async def test_websocket_on_loopback(tmp_path: Path) -> None:
    from websockets.asyncio.client import connect

    async with listening("--ws", "127.0.0.1:0") as server:
        process, url = server.process, server.url
        async with connect(url) as websocket:
            await websocket.send(json.dumps(initialize(tmp_path, token=server.token)))
            answer = json.loads(await asyncio.wait_for(websocket.recv(), WAIT))
            assert answer["result"]["capabilities"]["experimental"]["agentls"]
            await websocket.send(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
            assert json.loads(await asyncio.wait_for(websocket.recv(), WAIT))["id"] == 2
            await websocket.send(json.dumps({"jsonrpc": "2.0", "method": "exit"}))
        assert await asyncio.wait_for(process.wait(), WAIT) == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--tcp", "0.0.0.0:0"], "only loopback addresses are allowed"),
        (["--ws", "0.0.0.0:0"], "only loopback addresses are allowed"),
        (["--tcp", "127.0.0.1:0", "--token", "s3cret"], "--token is not accepted"),
        (["--tcp", "127.0.0.1:0", "--token-file", "/nonexistent"], "cannot read the token file"),
        (["--tcp", "127.0.0.1:0", "--allow-origin", "https://a.example"], "for --ws only"),
    ],
)
async def test_refused_command_lines(args: list[str], message: str) -> None:
    process = await asyncio.create_subprocess_exec(
        *SERVE, *args, stderr=asyncio.subprocess.PIPE, stdin=asyncio.subprocess.DEVNULL
    )
    _, err = await asyncio.wait_for(process.communicate(), WAIT)
    assert process.returncode == 2
    assert message in err.decode()


async def test_a_given_token_from_a_file_or_the_environment(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("s3cret-token\n")
    args = ["--tcp", "0.0.0.0:0", "--allow-remote", "--token-file", str(token_file)]
    async with listening(*args) as server:
        assert server.token_file is None  # given, so not written anywhere
        port = server.url.rsplit(":", 1)[1]
        (refused,) = await tcp_exchange(f"tcp://127.0.0.1:{port}", [initialize(tmp_path)])
        assert refused["error"]["code"] == -32600 and "token" in refused["error"]["message"]
        assert "s3cret" not in json.dumps(refused)
    async with listening(*args) as server:
        port = server.url.rsplit(":", 1)[1]
        (accepted,) = await tcp_exchange(
            f"tcp://127.0.0.1:{port}", [initialize(tmp_path, token="s3cret-token")]
        )
        assert "result" in accepted
    async with listening("--ws", "127.0.0.1:0", env={"AGENTLS_TOKEN": "env-token"}) as server:
        assert server.token_file is None
        (accepted,) = await exchange(server.url, [initialize(tmp_path, token="env-token")])
        assert "result" in accepted
        with open(f"/proc/{server.process.pid}/environ", "rb") as f:
            assert b"env-token" not in f.read(), "scrubbed from the server's environment"


async def test_websocket_refuses_web_pages_from_other_origins(tmp_path: Path) -> None:
    from websockets.asyncio.client import connect
    from websockets.exceptions import InvalidStatus

    allowed = "http://127.0.0.1:3000"
    async with listening("--ws", "127.0.0.1:0", "--allow-origin", allowed) as server:
        with pytest.raises(InvalidStatus) as refused:
            async with connect(server.url, origin="https://evil.example"):  # type: ignore[arg-type]
                pass
        assert refused.value.response.status_code == 403
        async with connect(server.url, origin=allowed) as websocket:  # type: ignore[arg-type]
            await websocket.send(json.dumps(initialize(tmp_path, token=server.token)))
            answer = json.loads(await asyncio.wait_for(websocket.recv(), WAIT))
            assert "result" in answer


async def test_a_workspace_outside_the_client_folders_is_refused(tmp_path: Path) -> None:
    opened = tmp_path / "project"
    (opened / "sub").mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for workspace, accepted in ((opened / "sub", True), (elsewhere, False)):
        async with listening("--tcp", "127.0.0.1:0") as server:
            message = initialize(opened, token=server.token, workspace=str(workspace))
            (answer,) = await tcp_exchange(server.url, [message])
            if accepted:
                assert "result" in answer, answer
            else:
                assert answer["error"]["code"] == -32602
                assert "outside the client's workspace folders" in answer["error"]["message"]


async def test_a_connection_dropped_without_a_goodbye_ends_the_server(tmp_path: Path) -> None:
    """A reset TCP connection and a WebSocket closed without a close frame end
    the input like any other end of it: the server stops and exits."""
    from websockets.asyncio.client import connect

    async with listening("--tcp", "127.0.0.1:0") as server:
        host, port = server.url.removeprefix("tcp://").rsplit(":", 1)
        reader, writer = await asyncio.open_connection(host, int(port))
        body = json.dumps(initialize(tmp_path, token=server.token)).encode()
        # initialize, then half a message: the server is reading when the reset comes.
        writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        writer.write(b"Content-Length: 100\r\n\r\n{")
        await writer.drain()
        assert (await asyncio.wait_for(reader.readline(), WAIT)).startswith(b"Content-Length")
        writer.get_extra_info("socket").setsockopt(
            socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
        )
        writer.transport.abort()  # SO_LINGER 0: a reset, not a FIN
        assert await asyncio.wait_for(server.process.wait(), WAIT) == 0

    async with listening("--ws", "127.0.0.1:0") as server:
        websocket = await connect(server.url)
        await websocket.send(json.dumps(initialize(tmp_path, token=server.token)))
        await asyncio.wait_for(websocket.recv(), WAIT)
        websocket.transport.abort()
        assert await asyncio.wait_for(server.process.wait(), WAIT) == 0
