"""The driver's side of the wire: JSON-RPC clients that timestamp every message.

``LspClient`` speaks LSP framing (``Content-Length``) to agent-host and to the
bare pygls server; it is ``agent_host.client.rpc.RpcClient`` with a stamp
taken as each message is dispatched. ``JsonlClient`` speaks Codex's app-server
framing: one JSON object per line, JSON-RPC 2.0 without the ``"jsonrpc"``
member. Stamps are ``time.perf_counter_ns()`` (CLOCK_MONOTONIC).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import time
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, Self

from agent_host.client.rpc import RpcClient, RpcError

Listener = Callable[[dict[str, Any], int], None]

__all__ = ["JsonlClient", "Listener", "LspClient", "RpcError"]


class _Stamps:
    """What both clients share: a spawned server, listeners and the time each
    response arrived."""

    process: asyncio.subprocess.Process
    _reading: asyncio.Task[None] | None
    _read_loop: Callable[[], Coroutine[Any, Any, None]]  # each client's own
    read_limit = 1 << 24  # the longest line the stream reader accepts

    def _init_stamps(self) -> None:
        self.listeners: list[Listener] = []
        self.answered_ns: dict[int | str, int] = {}
        self.t_spawn_ns = 0

    def _stamp(self, message: dict[str, Any]) -> None:
        now = time.perf_counter_ns()
        if "method" not in message and "id" in message:
            self.answered_ns[message["id"]] = now
        for listener in self.listeners:
            listener(message, now)

    @classmethod
    async def start(
        cls,
        command: Sequence[str],
        *,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        stderr: Any = None,
    ) -> Self:
        """Spawn the server with pipes and start reading; stamps the spawn time."""
        t_spawn = time.perf_counter_ns()
        process = await asyncio.create_subprocess_exec(
            *command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr,
            env=env,
            cwd=cwd,
            limit=cls.read_limit,
        )
        client = cls(process)  # type: ignore[call-arg]
        client.t_spawn_ns = t_spawn
        client._reading = asyncio.create_task(client._read_loop())
        return client

    @property
    def pid(self) -> int:
        return self.process.pid

    def listen(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener(message, t_ns)`` for every message; returns the remover."""
        self.listeners.append(listener)
        return lambda: self.listeners.remove(listener)


class LspClient(_Stamps, RpcClient):
    """agent-host's own RPC client, with a timestamp per dispatched message."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        RpcClient.__init__(self, process)
        self._init_stamps()

    def _dispatch(self, message: dict[str, Any]) -> None:
        self._stamp(message)
        super()._dispatch(message)

    async def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            self.process.kill()
        await self.process.wait()


class JsonlClient(_Stamps):
    """A client for ``codex app-server`` over stdio (JSONL)."""

    read_limit = 1 << 26  # every message is one line, however large

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self._init_stamps()
        self.process = process
        assert process.stdin is not None and process.stdout is not None
        self._writer = process.stdin
        self._reader = process.stdout
        self._ids = itertools.count(1)
        self._pending: dict[int | str, asyncio.Future[Any]] = {}
        self._reading: asyncio.Task[None] | None = None
        self.closed = asyncio.Event()
        self.server_requests: list[str] = []

    def _send(self, message: dict[str, Any]) -> None:
        self._writer.write(json.dumps(message).encode() + b"\n")

    def notify(self, method: str, params: Any = None) -> None:
        message: dict[str, Any] = {"method": method}
        if params is not None:
            message["params"] = params
        self._send(message)

    def request(self, method: str, params: Any = None) -> tuple[int, asyncio.Future[Any]]:
        msg_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[msg_id] = future
        self._send({"id": msg_id, "method": method, "params": params or {}})
        return msg_id, future

    async def call(self, method: str, params: Any = None, timeout: float = 30.0) -> Any:
        _, future = self.request(method, params)
        async with asyncio.timeout(timeout):
            return await future

    async def _read_loop(self) -> None:
        try:
            while True:
                line = await self._reader.readline()
                if not line:
                    return
                if not line.strip():
                    continue
                try:
                    message = json.loads(line)
                except ValueError:
                    continue
                self._dispatch(message)
        except (asyncio.IncompleteReadError, ConnectionError, ValueError):
            return
        finally:
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(ConnectionError("the server went away"))
            self.closed.set()

    def _dispatch(self, message: dict[str, Any]) -> None:
        self._stamp(message)
        if "method" in message:
            if "id" in message:
                # approval_policy=never: nothing should ask; refuse whatever does.
                self.server_requests.append(str(message["method"]))
                self._send(
                    {
                        "id": message["id"],
                        "error": {"code": -32601, "message": "not supported by the bench"},
                    }
                )
            return
        future = self._pending.pop(message.get("id"), None)  # type: ignore[arg-type]
        if future is None or future.done():
            return
        if "error" in message:
            error = message["error"] or {}
            future.set_exception(
                RpcError(error.get("code", 0), error.get("message", ""), error.get("data"))
            )
        else:
            future.set_result(message.get("result"))

    async def close(self, timeout: float = 5.0) -> int:
        with contextlib.suppress(Exception):
            self._writer.close()
        try:
            return await asyncio.wait_for(self.process.wait(), timeout)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()
            return await self.process.wait()
