"""One MCP server, run with the official ``mcp`` SDK.

A runner owns one configured server for the life of the connection. Its owner
task starts the server (a child process on stdio, or a streamable HTTP
session), lists its tools, and then holds the session open until the server
goes away, a restart is asked for, or the manager stops. Tool calls come from
the turns' tasks and share that session.

- A server that does not answer within the start-up timeout, or fails,
  becomes ``failed`` with the reason (its stderr's last lines included);
  nothing else waits for it.
- A server that goes away after it was ready (its process died) becomes
  ``failed`` too, but keeps its tools on offer: the next call to one of them
  starts it again, at most ``max_restarts`` times (the user can always
  restart it by hand).
- A call whose turn is cancelled is abandoned at once; the SDK tells the
  server with ``notifications/cancelled``.

This module imports the SDK: the manager imports it on a worker thread.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import math
import os
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TextIO

import anyio
import anyio.abc
import httpx2
import mcp_types
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from agentls import __version__
from agentls.domain import McpStatus
from agentls.mcp.config import HttpTarget, ServerSpec, StdioTarget
from agentls.mcp.results import to_tool_result
from agentls.mcp.tool import label as tool_label
from agentls.tools.base import ToolResult
from agentls.tools.output import OutputCapture
from agentls.tools.processes import MCP_MARKER_VARIABLE

log = logging.getLogger(__name__)

# Bytes of a server's stderr kept to explain a failure.
STDERR_TAIL = 2048
_CLIENT_INFO = mcp_types.Implementation(name="agentls", version=__version__)


class Unavailable(Exception):
    """The server cannot take calls now; the message says why."""


class _Stderr:
    """A stdio server's stderr: the last bytes kept, every line logged at debug."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._read_fd, write_fd = os.pipe()
        os.set_blocking(self._read_fd, False)
        self.file: TextIO | None = os.fdopen(write_fd, "w")
        self._tail = OutputCapture(0, STDERR_TAIL)
        self.finished = anyio.Event()

    def spawned(self) -> None:
        """The child has its own copy now: ours would keep the pipe open forever."""
        if self.file is not None:
            self.file.close()
            self.file = None

    async def pump(self) -> None:
        try:
            while True:
                await anyio.wait_readable(self._read_fd)
                try:
                    data = os.read(self._read_fd, 65536)
                except BlockingIOError:
                    continue
                if not data:
                    return
                self._tail.feed(data)
                for line in data.decode("utf-8", "replace").splitlines():
                    log.debug("MCP server %s: %s", self._name, line)
        finally:
            self.spawned()
            with contextlib.suppress(OSError):
                os.close(self._read_fd)
            self.finished.set()

    def text(self) -> str:
        return self._tail.text().strip()


class _WatchedStream:
    """The session's read stream, telling us when it ends (the server went away)."""

    def __init__(self, inner: Any, on_end: Callable[[], None]) -> None:
        self._inner = inner
        self._on_end = on_end

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._on_end()
            raise

    def __aiter__(self) -> _WatchedStream:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _WatchedStream:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


@asynccontextmanager
async def _transport(
    spec: ServerSpec, workspace: Path, stderr: _Stderr | None, on_end: Callable[[], None]
) -> AsyncIterator[tuple[Any, Any]]:
    target = spec.target
    if isinstance(target, StdioTarget):
        assert stderr is not None and stderr.file is not None
        params = StdioServerParameters(
            command=target.command,
            args=list(target.args),
            # The SDK adds the safe basics (PATH, HOME, USER, ...) and nothing
            # else of ours: the API key never reaches an MCP server. The
            # marker tells the turns' process sweep that this is not theirs.
            env={**target.env, MCP_MARKER_VARIABLE: spec.name},
            cwd=str(workspace),
        )
        async with stdio_client(params, errlog=stderr.file) as (read, write):
            stderr.spawned()
            yield _WatchedStream(read, on_end), write
    elif isinstance(target, HttpTarget):
        timeout = httpx2.Timeout(30.0, read=300.0)
        async with (
            httpx2.AsyncClient(headers=dict(target.headers), timeout=timeout) as http,
            streamable_http_client(target.url, http_client=http) as (read, write),
        ):
            yield _WatchedStream(read, on_end), write
    else:  # pragma: no cover - the manager never runs an unusable entry
        raise Unavailable(spec.error or "unusable configuration")


def _leaf(exc: BaseException) -> BaseException:
    """The first real error inside task-group exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def describe(exc: BaseException, command: str | None = None) -> str:
    exc = _leaf(exc)
    if isinstance(exc, FileNotFoundError) and command is not None:
        return f"cannot start {command!r}: command not found"
    if isinstance(exc, OSError) and exc.errno in (errno.EACCES, errno.ENOEXEC):
        return f"cannot start {command!r}: {exc.strerror}"
    if isinstance(exc, MCPError):
        if exc.code == mcp_types.CONNECTION_CLOSED:
            return "the server closed the connection"
        return f"the server answered with an error: {exc.message} (code {exc.code})"
    if isinstance(exc, httpx2.HTTPStatusError):
        return f"HTTP {exc.response.status_code} from {exc.request.url}"
    if isinstance(exc, httpx2.HTTPError):
        return f"cannot reach the server: {exc or type(exc).__name__}"
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


class ServerRunner:
    """Create, ``start_soon(runner.run)`` in the manager's task group, then
    ``allow()`` it (at once, or once the user has said yes)."""

    def __init__(
        self,
        spec: ServerSpec,
        workspace: Path,
        on_change: Callable[[ServerRunner], None],
        *,
        startup_timeout: float,
        call_timeout: float,
        max_restarts: int,
    ) -> None:
        self.spec = spec
        self.name = spec.name
        self._workspace = workspace
        self._on_change = on_change
        self.startup_timeout = startup_timeout
        self.call_timeout = call_timeout
        self.max_restarts = max_restarts
        self.status: McpStatus = "starting"
        self.error: str | None = None
        self.tools: list[mcp_types.Tool] = []
        # Automatic restarts used (reset by a restart the user asks for).
        self.restarts = 0
        # The server was ready once and went away: its tools stay on offer.
        self.restartable = False
        self._client: Client | None = None
        self._start_wanted = False
        self._end_wanted = False
        self._lost = False
        self._relist = False
        self._stopping = False
        self._wake = anyio.Event()
        self._attempt = anyio.Event()
        self._session_over = anyio.Event()
        # The scope of a start in progress (None once ready): what stops it early.
        self._starting: anyio.CancelScope | None = None
        if spec.error is not None:
            self._settle("failed", spec.error)

    # --- what the manager and the tools see ------------------------------------------------

    @property
    def offers_tools(self) -> bool:
        return bool(self.tools) and (
            self.status == "ready"
            or (self.status == "failed" and self.restartable and self.restarts < self.max_restarts)
        )

    def allow(self) -> None:
        """Start the server (the user allowed it, or it needs no permission)."""
        if self.spec.target is None:
            return
        if self._attempt.is_set():  # a new attempt; callers of one in progress keep theirs
            self._attempt = anyio.Event()
        self._start_wanted = True
        self._set("starting", None)
        self._poke()

    def waiting(self) -> None:
        """The user is being asked whether it may start."""
        self._set("starting", None)
        log.info("asking whether the MCP server %s may start", self.name)

    def disable(self, why: str) -> None:
        """Not allowed (a project server the user declined): stopped, no tools."""
        self.tools = []
        self.restartable = False
        self._settle("disabled", why)
        log.info("MCP server %s is disabled: %s", self.name, why)
        self._start_wanted = False
        self._end()

    def restart(self) -> None:
        """A restart the user asked for: the automatic restarts count from zero again."""
        self.restarts = 0
        if self.spec.target is None:
            return
        self._end()
        self.allow()

    def stop(self) -> None:
        self._stopping = True
        self._end()

    def _end(self) -> None:
        """End the session, a start in progress too (what comes next, the flags say)."""
        self._end_wanted = True
        if self._starting is not None:
            self._starting.cancel()
        self._poke()

    async def call(self, tool: str, arguments: dict[str, Any], head: int, tail: int) -> ToolResult:
        """Call one tool; failures of the server become an error output."""
        label = tool_label(self.name, tool)
        try:
            client = await self._client_for_call()
        except Unavailable as exc:
            return ToolResult.error(f"{label}: the MCP server is not available: {exc}")
        started = time.monotonic()
        try:
            result = await client.call_tool(tool, arguments, read_timeout_seconds=self.call_timeout)
        except MCPError as exc:
            if exc.code == mcp_types.CONNECTION_CLOSED:
                self._connection_lost()
                return ToolResult.error(
                    f"{label}: the MCP server went away during the call; it is restarted "
                    "when one of its tools is called again"
                )
            if exc.code == mcp_types.REQUEST_TIMEOUT:
                elapsed = time.monotonic() - started
                return ToolResult.error(f"{label}: no answer after {elapsed:.0f} s; gave up")
            return ToolResult.error(f"{label}: {exc.message}")
        except (ValidationError, RuntimeError) as exc:
            return ToolResult.error(f"{label}: the server's answer was not valid: {exc}")
        except (httpx2.HTTPError, anyio.ClosedResourceError, anyio.BrokenResourceError) as exc:
            self._connection_lost()
            return ToolResult.error(f"{label}: {describe(exc)}")
        return to_tool_result(result, head, tail)

    # --- the owner task -----------------------------------------------------------------

    async def run(self) -> None:
        try:
            while True:
                await self._until(lambda: self._start_wanted or self._stopping)
                if self._stopping:
                    return
                self._start_wanted = False
                self._end_wanted = False
                await self._serve()
        finally:
            self._client = None
            self._attempt.set()

    async def _serve(self) -> None:
        """One life of the server: start, list tools, serve calls until it ends."""
        if self.status != "starting":
            self._set("starting", None)
        if self._attempt.is_set():
            self._attempt = anyio.Event()
        self._lost = False
        self._session_over = anyio.Event()
        try:
            await self._one_life()
        finally:
            self._session_over.set()

    async def _one_life(self) -> None:
        stderr = _Stderr(self.name) if isinstance(self.spec.target, StdioTarget) else None
        ready = lost = False
        error: str | None = None
        async with anyio.create_task_group() as group:
            if stderr is not None:
                group.start_soon(stderr.pump)
            try:
                deadline = anyio.current_time() + self.startup_timeout
                with anyio.CancelScope(deadline=deadline) as scope:
                    self._starting = scope
                    transport = _transport(
                        self.spec, self._workspace, stderr, self._connection_lost
                    )
                    async with Client(
                        transport, client_info=_CLIENT_INFO, message_handler=self._on_message
                    ) as client:
                        tools = await self._list_tools(client)
                        scope.deadline = math.inf
                        self._starting = None
                        self._client, self.tools, ready = client, tools, True
                        self.restartable = False
                        self._settle("ready", None)
                        log.info("MCP server %s is ready: %d tools", self.name, len(tools))
                        async with anyio.create_task_group() as watching:
                            watching.start_soon(self._follow_tool_changes, client)
                            lost = await self._hold(client)
                            watching.cancel_scope.cancel()
                if scope.cancelled_caught and not ready and not self._end_wanted:
                    error = f"no answer within {self.startup_timeout:g} s of starting"
            except Exception as exc:
                error = describe(exc, self.spec.command_line)
            finally:
                self._client = None
                self._starting = None
            if stderr is not None:
                # The process is gone: let its last words arrive (bounded: a
                # grandchild may hold the pipe open).
                stderr.spawned()
                with anyio.move_on_after(1.0):
                    await stderr.finished.wait()
            group.cancel_scope.cancel()
        if self._stopping or self.status == "disabled":
            self._attempt.set()
        elif self._start_wanted:
            pass  # restarted: the next life settles this attempt
        elif ready and (lost or error is not None):
            self.restartable = True
            left = self.max_restarts - self.restarts
            what = error or "the server exited"
            hint = (
                f"it is started again when one of its tools is called ({left} restarts left)"
                if left > 0
                else "it was restarted too often: restart it yourself"
            )
            self._settle("failed", _with_stderr(f"{what}; {hint}", stderr))
            log.warning("MCP server %s went away: %s", self.name, self.error)
        elif not ready:
            self._settle("failed", _with_stderr(error or "did not start", stderr))
            log.warning("MCP server %s failed to start: %s", self.name, self.error)

    async def _hold(self, client: Client) -> bool:
        """Keep the session until it must end; True if the server went away."""
        while True:
            await self._until(
                lambda: self._lost or self._stopping or self._end_wanted or self._relist
            )
            if self._lost or self._stopping or self._end_wanted:
                # Read now: closing the session below ends its stream too.
                return self._lost
            self._relist = False
            self.tools = await self._list_tools(client)
            self._on_change(self)
            log.info("MCP server %s changed its tools: %d now", self.name, len(self.tools))

    async def _list_tools(self, client: Client) -> list[mcp_types.Tool]:
        tools: list[mcp_types.Tool] = []
        cursor: str | None = None
        for _ in range(100):  # a server that pages forever cannot hang us
            page = await client.list_tools(cursor=cursor)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None:
                break
        return tools

    async def _follow_tool_changes(self, client: Client) -> None:
        """2026-07-28 servers announce changed tools on a subscription; older
        ones send ``notifications/tools/list_changed`` (``_on_message``)."""
        if client.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            return
        try:
            async with client.listen(tools_list_changed=True) as subscription:
                async for _ in subscription:
                    self._relist = True
                    self._poke()
        except Exception as exc:  # no subscription: the tools stay as listed
            log.debug("MCP server %s: no tool-change subscription (%s)", self.name, exc)

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, mcp_types.ToolListChangedNotification):
            self._relist = True
            self._poke()

    # --- internals -----------------------------------------------------------------------

    async def _client_for_call(self) -> Client:
        if self._lost:
            # The server just went away: let the owner task settle that first.
            await self._session_over.wait()
        if self.status == "failed" and self.restartable:
            if self.restarts >= self.max_restarts:
                raise Unavailable(self.error or "it failed")
            self.restarts += 1
            log.info("restarting MCP server %s (restart %d)", self.name, self.restarts)
            self.allow()
        if self.status == "starting":
            await self._attempt.wait()
        client = self._client
        if self.status != "ready" or client is None:
            raise Unavailable(self.error or f"it is {self.status}")
        return client

    def _connection_lost(self) -> None:
        if not self._lost:
            self._lost = True
            self._poke()

    def _set(self, status: McpStatus, error: str | None) -> None:
        self.status, self.error = status, error
        self._on_change(self)

    def _settle(self, status: McpStatus, error: str | None) -> None:
        self._set(status, error)
        self._attempt.set()

    def _poke(self) -> None:
        self._wake.set()

    async def _until(self, condition: Callable[[], bool]) -> None:
        while not condition():
            self._wake = anyio.Event()
            await self._wake.wait()


def _with_stderr(message: str, stderr: _Stderr | None) -> str:
    tail = stderr.text() if stderr is not None else ""
    return f"{message}\nlast lines of its stderr:\n{tail}" if tail else message
