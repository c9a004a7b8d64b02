"""Serving the language server over stdio, TCP or WebSocket, and stopping in order.

We run pygls's message loop ourselves instead of ``start_io``: so that the end
of input, ``exit`` and SIGTERM all lead to the same orderly stop (every turn
cancelled, every request answered, every process dead) and a clean exit code,
and so that reading stdin happens on a daemon thread that can never keep the
process alive after ``exit`` (pygls reads it in its thread pool, which the
interpreter joins at exit).
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
import threading
from typing import Any, BinaryIO

from agentls.server.app import AgentServer
from agentls.server.framing import read_messages

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


class CoalescingWriter:
    """Writes to a blocking file descriptor, one ``write`` per loop iteration.

    Everything the server sends within one turn of the event loop (a result,
    the progress and events around it) goes out in one system call, not one
    write-and-flush each.
    """

    def __init__(self, fd: int, loop: asyncio.AbstractEventLoop) -> None:
        self._fd = fd
        self._loop = loop
        self._pending: list[bytes] = []
        self._scheduled = False

    def write(self, data: bytes) -> None:
        self._pending.append(data)
        if not self._scheduled:
            self._scheduled = True
            self._loop.call_soon(self.flush)

    def flush(self) -> None:
        self._scheduled = False
        if not self._pending:
            return
        view = memoryview(b"".join(self._pending))
        self._pending.clear()
        while view:
            written = os.write(self._fd, view)
            view = view[written:]

    def close(self) -> None:
        self.flush()


async def _serve(server: AgentServer, read: Any) -> int:
    """Run the message loop until input ends, ``exit`` arrives or a signal
    says stop; then stop the connection in order."""
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        try:
            loop.add_signal_handler(signum, server.request_exit, 0)
        except (NotImplementedError, RuntimeError):
            pass

    async def reader() -> None:
        await read()
        log.info("input closed")
        server.request_exit(0)

    reading = asyncio.ensure_future(reader())
    await server.exit_requested.wait()
    await server.stop_connection()
    reading.cancel()
    writer = server.protocol.writer
    if isinstance(writer, CoalescingWriter):
        writer.flush()  # whatever the last loop iteration queued
    return server.exit_code


def serve_stdio(
    server: AgentServer, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None
) -> int:
    out = stdout or sys.stdout.buffer
    inp = stdin or sys.stdin.buffer
    # From here on stdout is the protocol's alone: a stray print goes to stderr.
    sys.stdout = sys.stderr

    async def main() -> int:
        loop = asyncio.get_running_loop()
        server.protocol.set_writer(CoalescingWriter(out.fileno(), loop))
        reader = ThreadedReader(inp.fileno(), loop)
        return await _serve(server, lambda: read_messages(reader, server.intake))

    return asyncio.run(main())


def serve_tcp(server: AgentServer, host: str, port: int) -> int:
    """Serve one client on TCP (like pygls: the process ends with the connection)."""

    async def main() -> int:
        connected: asyncio.Queue[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = (
            asyncio.Queue()
        )

        async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await connected.put((reader, writer))

        listener = await asyncio.start_server(accept, host, port, limit=1 << 24)
        address = listener.sockets[0].getsockname()
        print(f"agentls listening on tcp://{address[0]}:{address[1]}", file=sys.stderr, flush=True)
        async with listener:
            reader, writer = await connected.get()
            listener.close()
            server.protocol.set_writer(writer)
            return await _serve(server, lambda: read_messages(reader, server.intake))

    return asyncio.run(main())


def serve_ws(server: AgentServer, host: str, port: int) -> int:
    try:
        from pygls.io_ import WebSocketWriter
        from websockets.asyncio.server import ServerConnection, serve
    except ImportError:
        print("WebSocket support needs the 'websockets' package", file=sys.stderr)
        return 2

    async def main() -> int:
        connected: asyncio.Queue[ServerConnection] = asyncio.Queue()
        finished = asyncio.Event()

        async def accept(websocket: ServerConnection) -> None:
            await connected.put(websocket)
            await finished.wait()  # keep the connection open while we serve it

        async with serve(accept, host, port) as listener:
            address = next(iter(listener.sockets)).getsockname()
            print(
                f"agentls listening on ws://{address[0]}:{address[1]}",
                file=sys.stderr,
                flush=True,
            )
            websocket = await connected.get()
            server.protocol.set_writer(WebSocketWriter(websocket), include_headers=False)

            async def read() -> None:
                # One JSON-RPC message per WebSocket message: no framing to lose.
                async for message in websocket:
                    server.intake(message)

            try:
                return await _serve(server, read)
            finally:
                finished.set()

    return asyncio.run(main())
