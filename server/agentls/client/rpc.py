"""A small JSON-RPC client over a server subprocess's stdio (LSP framing).

Enough of an editor for ``agentls exec`` and the benchmarks: requests with
futures, ``$/cancelRequest``, notification callbacks, and answers to the few
server→client requests an agentls server sends (a handler may return an
awaitable: the answer goes out when it is ready).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import itertools
import json
import os
import sys
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Self

Handler = Callable[[dict[str, Any]], Any]


class RpcError(Exception):
    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{message} ({code})")
        self.code = code
        self.message = message
        self.data = data


class RpcClient:
    read_limit = 1 << 24  # the longest line the stream reader accepts

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        assert process.stdin is not None and process.stdout is not None
        self._writer = process.stdin
        self._reader = process.stdout
        self._ids = itertools.count(1)
        self._pending: dict[int | str, asyncio.Future[Any]] = {}
        self._notifications: dict[str, Handler] = {}
        self._requests: dict[str, Handler] = {}
        self._reading: asyncio.Task[None] | None = None
        self._answering: set[asyncio.Future[None]] = set()
        self.closed = asyncio.Event()

    @classmethod
    async def spawn(
        cls,
        command: Sequence[str],
        *,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        stderr: Any = None,
    ) -> Self:
        process = await asyncio.create_subprocess_exec(
            *command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr,
            env=env,
            cwd=cwd,
            limit=cls.read_limit,
        )
        client = cls(process)
        client._reading = asyncio.create_task(client._read_loop())
        return client

    def on_notification(self, method: str, handler: Handler) -> None:
        self._notifications[method] = handler

    def on_request(self, method: str, handler: Handler) -> None:
        self._requests[method] = handler

    # --- sending -------------------------------------------------------------------------

    def _send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message).encode()
        self._writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def notify(self, method: str, params: Any = None) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method: str, params: Any = None) -> tuple[int, asyncio.Future[Any]]:
        msg_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[msg_id] = future
        self._send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        return msg_id, future

    async def call(self, method: str, params: Any = None, timeout: float | None = None) -> Any:
        _, future = self.request(method, params)
        async with asyncio.timeout(timeout):
            return await future

    def cancel(self, msg_id: int | str) -> None:
        self.notify("$/cancelRequest", {"id": msg_id})

    # --- receiving ---------------------------------------------------------------------------

    async def _read_message(self) -> dict[str, Any] | None:
        """The next message from the server; None at the end of its output."""
        length = 0
        while True:
            line = await self._reader.readline()
            if not line:
                return None
            if line in (b"\r\n", b"\n"):
                break
            name, _, value = line.decode("ascii", "replace").partition(":")
            if name.strip().lower() == "content-length":
                length = int(value.strip())
        message: dict[str, Any] = json.loads(await self._reader.readexactly(length))
        return message

    async def _read_loop(self) -> None:
        try:
            while (message := await self._read_message()) is not None:
                self._dispatch(message)
        except (asyncio.IncompleteReadError, ConnectionError):
            return
        finally:
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(ConnectionError("the server went away"))
            self.closed.set()

    def _dispatch(self, message: dict[str, Any]) -> None:
        if "method" in message:
            method = message["method"]
            if "id" in message:
                self._answer(message["id"], method, message.get("params"))
            else:
                handler = self._notifications.get(method)
                if handler is not None:
                    handler(message.get("params") or {})
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

    def _answer(self, msg_id: Any, method: str, params: Any) -> None:
        handler = self._requests.get(method)
        if handler is None:
            if method == "window/workDoneProgress/create":
                self._send({"jsonrpc": "2.0", "id": msg_id, "result": None})
                return
            self._send(
                {
                    "jsonrpc": "2.0",
                    "id": msg_id,
                    "error": {"code": -32601, "message": f"unsupported: {method}"},
                }
            )
            return
        result = handler(params or {})
        if inspect.isawaitable(result):
            # Answered when the handler is done (a question to a person, say).
            task = asyncio.ensure_future(self._answer_later(msg_id, result))
            self._answering.add(task)
            task.add_done_callback(self._answering.discard)
            return
        self._send({"jsonrpc": "2.0", "id": msg_id, "result": result})

    async def _answer_later(self, msg_id: Any, pending: Awaitable[Any]) -> None:
        try:
            result = await pending
        except Exception as exc:
            self._send(
                {"jsonrpc": "2.0", "id": msg_id, "error": {"code": -32603, "message": str(exc)}}
            )
            return
        self._send({"jsonrpc": "2.0", "id": msg_id, "result": result})

    # --- life cycle ----------------------------------------------------------------------------

    async def initialize(
        self, options: dict[str, Any], root: str, experimental: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        capabilities: dict[str, Any] = {"window": {"workDoneProgress": True}}
        if experimental is not None:
            capabilities["experimental"] = experimental
        result: dict[str, Any] = await self.call(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": "file://" + root,
                "capabilities": capabilities,
                "clientInfo": {"name": "agentls exec"},
                "initializationOptions": options,
            },
        )
        self.notify("initialized", {})
        return result

    async def shutdown(self, timeout: float = 15.0) -> int:
        """``shutdown`` + ``exit``; the server's exit code (killed if it hangs)."""
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.call("shutdown"), timeout)
            self.notify("exit")
        with contextlib.suppress(Exception):
            self._writer.close()
        try:
            return await asyncio.wait_for(self.process.wait(), timeout)
        except TimeoutError:
            self.process.kill()
            print("agentls: the server did not exit; killed it", file=sys.stderr)
            return await self.process.wait()
