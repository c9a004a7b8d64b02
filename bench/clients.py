"""The driver's side of the wire: JSON-RPC clients that timestamp every message.

Both are ``agentls.client.rpc.RpcClient`` with a stamp taken as each message
is dispatched. ``LspClient`` speaks LSP framing (``Content-Length``) to
agentls and to the bare pygls server; ``JsonlClient`` speaks Codex's
app-server framing: one JSON object per line, JSON-RPC 2.0 without the
``"jsonrpc"`` member. Stamps are ``time.perf_counter_ns()`` (CLOCK_MONOTONIC).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Callable, Sequence
from typing import Any, Self

from agentls.client.rpc import RpcClient, RpcError

Listener = Callable[[dict[str, Any], int], None]

__all__ = ["JsonlClient", "Listener", "LspClient", "RpcError"]


class LspClient(RpcClient):
    """agentls's own RPC client, with listeners and the time each message arrived."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        super().__init__(process)
        self.listeners: list[Listener] = []
        self.answered_ns: dict[int | str, int] = {}
        self.t_spawn_ns = 0

    @classmethod
    async def spawn(cls, command: Sequence[str], **options: Any) -> Self:
        """The exec client's spawn, with the spawn time stamped."""
        t_spawn = time.perf_counter_ns()
        client = await super().spawn(command, **options)
        client.t_spawn_ns = t_spawn
        return client

    @property
    def pid(self) -> int:
        return self.process.pid

    def listen(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener(message, t_ns)`` for every message; returns the remover."""
        self.listeners.append(listener)
        return lambda: self.listeners.remove(listener)

    def _dispatch(self, message: dict[str, Any]) -> None:
        now = time.perf_counter_ns()
        if "method" not in message and "id" in message:
            self.answered_ns[message["id"]] = now
        for listener in self.listeners:
            listener(message, now)
        super()._dispatch(message)

    async def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            self.process.kill()
        await self.process.wait()


class JsonlClient(LspClient):
    """A client for ``codex app-server`` over stdio (JSONL)."""

    read_limit = 1 << 26  # every message is one line, however large

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        super().__init__(process)
        self.server_requests: list[str] = []

    def _send(self, message: dict[str, Any]) -> None:
        message = {key: value for key, value in message.items() if key != "jsonrpc"}
        if message.get("params") is None:
            if "id" in message and "method" in message:
                message["params"] = {}  # a request always carries its params object
            else:
                message.pop("params", None)
        self._writer.write(json.dumps(message).encode() + b"\n")

    async def _read_message(self) -> dict[str, Any] | None:
        while line := await self._reader.readline():
            try:
                message = json.loads(line)
            except ValueError:
                continue  # a blank or broken line is not a message
            if isinstance(message, dict):
                return message
        return None

    def _answer(self, msg_id: Any, method: str, params: Any) -> None:
        # approval_policy=never: nothing should ask; refuse whatever does.
        self.server_requests.append(method)
        self._send(
            {"id": msg_id, "error": {"code": -32601, "message": "not supported by the bench"}}
        )

    async def close(self, timeout: float = 5.0) -> int:
        with contextlib.suppress(Exception):
            self._writer.close()
        try:
            return await asyncio.wait_for(self.process.wait(), timeout)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()
            return await self.process.wait()
