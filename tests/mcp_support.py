"""MCP test helpers: the MCP servers the tests run, and an editor on the real
agentls server that records what the MCP side does.

The servers are real and nobody here wrote them, but one: the reference
``@modelcontextprotocol/server-everything`` from npm (``make mcp-tools``
installs it into the e2e cache), and ``mcp_fixture.py``, an MCPServer
(FastMCP) written for these tests with the ``mcp`` SDK.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from agentls.client.rpc import RpcClient
from agentls.testing.fake_model import FakeModel

from .support import WAIT, pid_alive, until_set

# Keep in step with MCP_EVERYTHING_VERSION in the Makefile.
EVERYTHING_VERSION = "2026.8.31"
CACHE = Path(os.environ.get("AGENTLS_E2E_CACHE", Path.home() / ".cache" / "agentls-e2e"))
EVERYTHING = (
    CACHE
    / f"mcp-everything-{EVERYTHING_VERSION}"
    / "node_modules/@modelcontextprotocol/server-everything/dist/index.js"
)
FIXTURE = Path(__file__).with_name("mcp_fixture.py")
ALLOW, DENY = "Allow", "Don't allow"


def everything_js() -> str:
    if not EVERYTHING.exists():
        pytest.fail(f"{EVERYTHING} is missing: run `make mcp-tools` (installs it from npm)")
    return str(EVERYTHING)


def everything(*args: str) -> dict[str, Any]:
    """server-everything on stdio (``args`` go first: e.g. a stdin recorder)."""
    return {"command": "node", "args": [everything_js(), "stdio", *args]}


def fixture(log: Path | None = None) -> dict[str, Any]:
    entry: dict[str, Any] = {"command": sys.executable, "args": [str(FIXTURE)]}
    if log is not None:
        entry["env"] = {"MCP_FIXTURE_LOG": str(log)}
    return entry


def read_log(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


class HttpServer:
    """An MCP server on streamable HTTP, started by the test (as a remote one would be)."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.url = ""

    async def until_line(self, stream: asyncio.StreamReader | None, pattern: str) -> re.Match[str]:
        assert stream is not None
        async with asyncio.timeout(3 * WAIT):
            while line := await stream.readline():
                if found := re.search(pattern, line.decode(errors="replace")):
                    return found
        raise AssertionError(f"the server ended before printing {pattern!r}")

    async def stop(self) -> None:
        if self.process.returncode is None:
            self.process.terminate()
        try:
            await asyncio.wait_for(self.process.wait(), WAIT)
        except TimeoutError:
            self.process.kill()
            await self.process.wait()


@asynccontextmanager
async def http_fixture(log: Path | None = None) -> AsyncIterator[HttpServer]:
    env = {**os.environ, **({"MCP_FIXTURE_LOG": str(log)} if log else {})}
    process = await asyncio.create_subprocess_exec(
        sys.executable, str(FIXTURE), "http", stdout=asyncio.subprocess.PIPE, env=env
    )
    server = HttpServer(process)
    try:
        found = await server.until_line(process.stdout, r"port=(\d+)")
        server.url = f"http://127.0.0.1:{found.group(1)}/mcp"
        yield server
    finally:
        await server.stop()


@asynccontextmanager
async def http_everything() -> AsyncIterator[HttpServer]:
    """server-everything's streamable HTTP transport on a free port."""
    with socket.socket() as probe:  # a free port, for the server to take at once
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = await asyncio.create_subprocess_exec(
        "node",
        everything_js(),
        "streamableHttp",
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "PORT": str(port)},
    )
    server = HttpServer(process)
    server.url = f"http://127.0.0.1:{port}/mcp"
    try:
        await server.until_line(process.stderr, rf"listening on port {port}")
        yield server
    finally:
        await server.stop()


Answer = str | None | Callable[[dict[str, Any]], Awaitable[str | None]]


class McpEditor:
    """A raw editor on the real server: events, log messages and questions recorded."""

    def __init__(self, client: RpcClient, consent: Answer) -> None:
        self.client = client
        self.events: list[dict[str, Any]] = []
        self.logs: list[str] = []
        self.questions: list[str] = []
        self.approvals: list[dict[str, Any]] = []
        self.approval_answer = "allow"
        self.consent = consent
        self.changed = asyncio.Event()
        client.on_notification("agent/event", self._event)
        client.on_notification("window/logMessage", self._log)
        client.on_request("window/showMessageRequest", self._ask)
        client.on_request("agent/requestApproval", self._approve)

    def _poke(self) -> None:
        self.changed.set()

    def _event(self, params: dict[str, Any]) -> None:
        self.events.append(params)
        self._poke()

    def _log(self, params: dict[str, Any]) -> None:
        self.logs.append(str(params.get("message")))
        self._poke()

    async def _ask(self, params: dict[str, Any]) -> Any:
        message = str(params.get("message"))
        self.questions.append(message)
        self._poke()
        answer = self.consent
        if callable(answer):
            answer = await answer(params)
        return None if answer is None else {"title": answer}

    def _approve(self, params: dict[str, Any]) -> dict[str, Any]:
        self.approvals.append(params)
        self._poke()
        return {"decision": self.approval_answer}

    @property
    def pid(self) -> int:
        pid: int = self.client.process.pid
        return pid

    async def until(self, predicate: Callable[[], Any], timeout: float = WAIT) -> Any:
        return await until_set(self.changed, predicate, timeout)

    async def servers(self) -> dict[str, dict[str, Any]]:
        result = await self.client.call("agent/mcpServers", {}, timeout=WAIT)
        return {server["name"]: server for server in result["servers"]}

    async def server(
        self, name: str, condition: Callable[[dict[str, Any]], bool], timeout: float = 3 * WAIT
    ) -> dict[str, Any]:
        """The server's entry once ``condition`` holds (the server logs each change)."""
        async with asyncio.timeout(timeout):
            while True:
                self.changed.clear()
                server = (await self.servers())[name]
                if condition(server):
                    return server
                await self.changed.wait()

    async def status(self, name: str, *statuses: str, timeout: float = 3 * WAIT) -> dict[str, Any]:
        """The server's entry once it has one of ``statuses``."""
        return await self.server(name, lambda server: server["status"] in statuses, timeout)

    async def submit(self, prompt: str = "go", timeout: float = 3 * WAIT) -> dict[str, Any]:
        result: dict[str, Any] = await self.client.call(
            "agent/submit", {"prompt": prompt}, timeout=timeout
        )
        return result

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["kind"] == kind]

    def children(self, name: str) -> list[int]:
        """Live processes started for the MCP server ``name`` by this agentls server."""
        return [pid for pid in mcp_processes(name) if parent_of(pid) == self.pid]


def parent_of(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return int(f.read().rsplit(b")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def mcp_processes(name: str) -> list[int]:
    """Live processes whose environment marks them as the MCP server ``name``."""
    marker = f"AGENTLS_MCP_SERVER={name}\0".encode()
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/environ", "rb") as f:
                    if marker in f.read() + b"\0" and pid_alive(int(entry)):
                        found.append(int(entry))
            except OSError:
                pass
    return found


def environment(tmp: Path, **extra: str) -> dict[str, str]:
    """The server's environment: its own config and state folders."""
    env = {
        **os.environ,
        "XDG_CONFIG_HOME": str(tmp / "config"),
        "AGENTLS_STATE_DIR": str(tmp / "state"),
        "PYTHONUNBUFFERED": "1",
    }
    env.update(extra)
    return env


@asynccontextmanager
async def mcp_editor(
    fake: FakeModel,
    workspace: Path,
    servers: dict[str, Any] | None = None,
    *,
    env: dict[str, str] | None = None,
    consent: Answer = ALLOW,
    options: dict[str, Any] | None = None,
) -> AsyncIterator[McpEditor]:
    """agentls serving ``workspace`` on the fake model, with these MCP servers."""
    client = await RpcClient.spawn(
        [sys.executable, "-m", "agentls", "serve"],
        env=env or environment(workspace.parent),
        stderr=subprocess.DEVNULL,
    )
    editor = McpEditor(client, consent)
    init: dict[str, Any] = {"workspace": str(workspace), "baseUrl": fake.base_url}
    if servers is not None:
        init["mcpServers"] = servers
    init.update(options or {})
    capabilities = {
        "window": {"workDoneProgress": True},
        "experimental": {"agentls": {"requestApproval": True}},
    }
    try:
        await client.call(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": workspace.as_uri(),
                "capabilities": capabilities,
                "initializationOptions": init,
            },
            timeout=3 * WAIT,
        )
        client.notify("initialized", {})
        yield editor
    finally:
        if client.process.returncode is None:
            await client.shutdown()
