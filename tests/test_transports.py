"""--tcp and --ws: loopback by default; any other address needs --allow-remote
and a token the client must present in ``initialize``."""

from __future__ import annotations

import asyncio
import json
import re
import socket
import struct
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from .support import WAIT

SERVE = [sys.executable, "-m", "agentls", "serve"]


def initialize(workspace: Path, **options: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "processId": None,
            "rootUri": workspace.as_uri(),
            "capabilities": {},
            "initializationOptions": options,
        },
    }


@asynccontextmanager
async def listening(*args: str) -> AsyncIterator[tuple[asyncio.subprocess.Process, str]]:
    process = await asyncio.create_subprocess_exec(
        *SERVE, *args, stderr=asyncio.subprocess.PIPE, stdin=asyncio.subprocess.DEVNULL
    )
    assert process.stderr is not None
    try:
        line = (await asyncio.wait_for(process.stderr.readline(), WAIT)).decode()
        match = re.search(r"listening on (\S+)", line)
        assert match, line
        yield process, match.group(1)
    finally:
        if process.returncode is None:
            process.kill()
        await process.wait()


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


async def test_tcp_on_loopback(tmp_path: Path) -> None:
    async with listening("--tcp", "127.0.0.1:0") as (process, url):
        assert url.startswith("tcp://127.0.0.1:")
        shutdown = {"jsonrpc": "2.0", "id": 2, "method": "shutdown"}
        exit_ = {"jsonrpc": "2.0", "method": "exit"}
        init, down = await tcp_exchange(url, [initialize(tmp_path), shutdown, exit_])
        assert init["result"]["capabilities"]["experimental"]["agentls"]["protocolVersion"] == 2
        assert down["result"] is None
        assert await asyncio.wait_for(process.wait(), WAIT) == 0


async def test_websocket_on_loopback(tmp_path: Path) -> None:
    from websockets.asyncio.client import connect

    async with listening("--ws", "127.0.0.1:0") as (process, url):
        async with connect(url) as websocket:
            await websocket.send(json.dumps(initialize(tmp_path)))
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
        (["--tcp", "0.0.0.0:0", "--allow-remote"], "--allow-remote needs --token"),
    ],
)
async def test_remote_addresses_need_a_flag_and_a_token(args: list[str], message: str) -> None:
    process = await asyncio.create_subprocess_exec(
        *SERVE, *args, stderr=asyncio.subprocess.PIPE, stdin=asyncio.subprocess.DEVNULL
    )
    _, err = await asyncio.wait_for(process.communicate(), WAIT)
    assert process.returncode == 2
    assert message in err.decode()


async def test_a_remote_listener_refuses_initialize_without_the_token(tmp_path: Path) -> None:
    args = ["--tcp", "0.0.0.0:0", "--allow-remote", "--token", "s3cret-token"]
    async with listening(*args) as (_, url):
        port = url.rsplit(":", 1)[1]
        (refused,) = await tcp_exchange(f"tcp://127.0.0.1:{port}", [initialize(tmp_path)])
        assert refused["error"]["code"] == -32600 and "token" in refused["error"]["message"]
        assert "s3cret" not in json.dumps(refused)
    async with listening(*args) as (_, url):
        port = url.rsplit(":", 1)[1]
        (accepted,) = await tcp_exchange(
            f"tcp://127.0.0.1:{port}", [initialize(tmp_path, token="s3cret-token")]
        )
        assert "result" in accepted


async def test_a_connection_dropped_without_a_goodbye_ends_the_server(tmp_path: Path) -> None:
    """A reset TCP connection and a WebSocket closed without a close frame end
    the input like any other end of it: the server stops and exits."""
    from websockets.asyncio.client import connect

    async with listening("--tcp", "127.0.0.1:0") as (process, url):
        host, port = url.removeprefix("tcp://").rsplit(":", 1)
        reader, writer = await asyncio.open_connection(host, int(port))
        body = json.dumps(initialize(tmp_path)).encode()
        # initialize, then half a message: the server is reading when the reset comes.
        writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        writer.write(b"Content-Length: 100\r\n\r\n{")
        await writer.drain()
        assert (await asyncio.wait_for(reader.readline(), WAIT)).startswith(b"Content-Length")
        writer.get_extra_info("socket").setsockopt(
            socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
        )
        writer.transport.abort()  # SO_LINGER 0: a reset, not a FIN
        assert await asyncio.wait_for(process.wait(), WAIT) == 0

    async with listening("--ws", "127.0.0.1:0") as (process, url):
        websocket = await connect(url)
        await websocket.send(json.dumps(initialize(tmp_path)))
        await asyncio.wait_for(websocket.recv(), WAIT)
        websocket.transport.abort()
        assert await asyncio.wait_for(process.wait(), WAIT) == 0
