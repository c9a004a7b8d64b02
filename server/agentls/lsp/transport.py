"""Serving the language server over stdio, TCP or WebSocket, and stopping in order.

We run pygls's message loop ourselves instead of ``start_io``: so that the end
of input, ``exit`` and SIGTERM all lead to the same orderly stop (every turn
cancelled, every request answered, every process dead) and a clean exit code,
and so that reading stdin happens on a daemon thread that can never keep the
process alive after ``exit`` (pygls reads it in its thread pool, which the
interpreter joins at exit). Writing happens off the event loop, and an editor
that stops reading for good is given up on in order: see ``writer``.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import logging
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any, BinaryIO

from agentls.lsp.app import AgentServer
from agentls.lsp.framing import read_messages
from agentls.lsp.writer import (
    CoalescingWriter,
    Lost,
    OnLost,
    StreamWriterAdapter,
    ThreadedWriter,
    WebSocketAdapter,
    limit_from_environment,
)

log = logging.getLogger(__name__)


class ThreadedReader:
    """An asyncio reader of a blocking file descriptor, fed by a daemon thread."""

    def __init__(self, fd: int, loop: asyncio.AbstractEventLoop) -> None:
        self._fd = fd
        self._loop = loop
        self._buffer = bytearray()
        self._eof = False
        self._waiter: asyncio.Future[None] | None = None
        threading.Thread(target=self._read_forever, name="stdin", daemon=True).start()

    def _read_forever(self) -> None:
        while True:
            try:
                data = os.read(self._fd, 1 << 16)
            except OSError:
                data = b""
            try:
                self._loop.call_soon_threadsafe(self._feed, data)
            except RuntimeError:  # the loop is gone: we are exiting
                return
            if not data:
                return

    def _feed(self, data: bytes) -> None:
        if data:
            self._buffer += data
        else:
            self._eof = True
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    async def _wait(self) -> None:
        self._waiter = self._loop.create_future()
        await self._waiter

    async def readline(self) -> bytes:
        while True:
            end = self._buffer.find(b"\n")
            if end >= 0:
                line = bytes(self._buffer[: end + 1])
                del self._buffer[: end + 1]
                return line
            if self._eof:
                rest = bytes(self._buffer)
                self._buffer.clear()
                return rest
            await self._wait()

    async def readexactly(self, n: int) -> bytes:
        while len(self._buffer) < n and not self._eof:
            await self._wait()
        data = bytes(self._buffer[:n])
        del self._buffer[:n]
        return data


def _announce(server: AgentServer, scheme: str, address: tuple[Any, ...]) -> None:
    """Say where we listen (and where the token is, if we made it up)."""
    where = f"agentls listening on {scheme}://{address[0]}:{address[1]}"
    token = server.options.token
    if token is not None and server.options.publish_token:
        from agentls.lsp.tokens import publish

        path = publish(token, scheme, int(address[1]))
        atexit.register(_remove, path)
        where += f"; token in {path}"
    print(where, file=sys.stderr, flush=True)


def _remove(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink()


def _on_lost(server: AgentServer) -> OnLost:
    def lost(kind: Lost, detail: str) -> None:
        if kind is Lost.OVERFLOW:
            log.error("%s; stopping the connection", detail)
            server.request_exit(1)
        else:  # the editor closed its end: like the end of its input
            log.info("output closed: %s", detail)
            server.request_exit(0)

    return lost


def _limit() -> int | None:
    try:
        return limit_from_environment()
    except ValueError as exc:
        print(f"agentls: {exc}", file=sys.stderr)
        return None


async def _serve(server: AgentServer, read: Any, writer: CoalescingWriter | None) -> int:
    """Run the message loop until input ends, ``exit`` arrives, a signal says
    stop or the editor is lost; then stop the connection in order and send what
    is queued (as long as the editor reads it)."""
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        try:
            loop.add_signal_handler(signum, server.request_exit, 0)
        except (NotImplementedError, RuntimeError):
            pass

    async def reader() -> None:
        try:
            await read()
        except ConnectionError as exc:  # a reset TCP connection: the input ended all the same
            log.info("input failed: %s", exc)
        log.info("input closed")
        server.request_exit(0)

    reading = asyncio.ensure_future(reader())
    await server.exit_requested.wait()
    await server.stop_connection()
    await _answered(server)
    reading.cancel()
    if writer is not None:
        await writer.aclose()
    return server.exit_code


async def _answered(server: AgentServer, timeout: float = 10.0) -> None:
    """Let the request handlers still running finish and answer before the
    writer closes: ``shutdown``'s, typically, with an ``exit`` right behind it
    (it stops the connection too, and answers a moment after us).

    pygls keeps each handler's task in ``_request_futures`` and answers in a
    callback of it (for its built-in generator handlers, a callback of the
    sub-handler's task that resumes the generator): so let scheduled
    callbacks run, and wait for the tasks still running, until there are none.
    Its requests to the editor are plain futures there, never waited for.
    """
    current = asyncio.current_task()
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        await asyncio.sleep(0)  # callbacks already scheduled run first
        handlers: list[object] = list(server.protocol._request_futures.values())
        running = [
            task
            for task in handlers
            if isinstance(task, asyncio.Task) and task is not current and not task.done()
        ]
        left = deadline - asyncio.get_running_loop().time()
        if not running or left <= 0:
            return
        await asyncio.wait(running, timeout=left)


def serve_stdio(
    server: AgentServer, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None
) -> int:
    out = stdout or sys.stdout.buffer
    inp = stdin or sys.stdin.buffer
    limit = _limit()
    if limit is None:
        return 2
    # From here on stdout is the protocol's alone: a stray print goes to stderr.
    sys.stdout = sys.stderr

    async def main() -> int:
        loop = asyncio.get_running_loop()
        writer = ThreadedWriter(out.fileno(), loop, limit=limit, on_lost=_on_lost(server))
        server.protocol.set_writer(writer)
        reader = ThreadedReader(inp.fileno(), loop)
        return await _serve(server, lambda: read_messages(reader, server.intake), writer)

    return asyncio.run(main())


def serve_tcp(server: AgentServer, host: str, port: int) -> int:
    """Serve one client on TCP (like pygls: the process ends with the connection)."""
    limit = _limit()
    if limit is None:
        return 2

    async def main() -> int:
        connected: asyncio.Queue[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = (
            asyncio.Queue()
        )

        async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await connected.put((reader, writer))

        listener = await asyncio.start_server(accept, host, port, limit=1 << 24)
        _announce(server, "tcp", listener.sockets[0].getsockname())
        async with listener:
            reader, writer = await connected.get()
            listener.close()
            adapter = StreamWriterAdapter(
                writer, asyncio.get_running_loop(), limit=limit, on_lost=_on_lost(server)
            )
            server.protocol.set_writer(adapter)
            return await _serve(server, lambda: read_messages(reader, server.intake), adapter)

    return asyncio.run(main())


def serve_ws(server: AgentServer, host: str, port: int) -> int:
    try:
        from websockets.asyncio.server import ServerConnection, serve
        from websockets.exceptions import ConnectionClosed
        from websockets.typing import Origin
    except ImportError:
        print("WebSocket support needs the 'websockets' package", file=sys.stderr)
        return 2
    limit = _limit()
    if limit is None:
        return 2

    async def main() -> int:
        connected: asyncio.Queue[ServerConnection] = asyncio.Queue()
        finished = asyncio.Event()

        async def accept(websocket: ServerConnection) -> None:
            await connected.put(websocket)
            await finished.wait()  # keep the connection open while we serve it

        # A web page the user opens can open a WebSocket to localhost too: the
        # browser sends its Origin, and only the ones allowed get in. Other
        # clients send none.
        origins: list[Origin | None] = [None, *map(Origin, server.options.allowed_origins)]
        async with serve(accept, host, port, origins=origins) as listener:
            _announce(server, "ws", next(iter(listener.sockets)).getsockname())
            websocket = await connected.get()
            writer = WebSocketAdapter(
                websocket, asyncio.get_running_loop(), limit=limit, on_lost=_on_lost(server)
            )
            server.protocol.set_writer(writer, include_headers=False)

            async def read() -> None:
                # One JSON-RPC message per WebSocket message: no framing to lose.
                try:
                    async for message in websocket:
                        server.intake(message)
                except ConnectionClosed:  # closed without a close frame: input ended all the same
                    pass

            try:
                return await _serve(server, read, writer)
            finally:
                finished.set()

    return asyncio.run(main())
