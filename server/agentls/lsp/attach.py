"""A server that outlives its editor's connection: ``agentls serve --listen PATH``.

It listens on a Unix socket (only this user may connect: the socket is 0600
in a 0700 folder) and serves one editor at a time. When the editor goes away
without ``exit`` — a reloaded VS Code window, a crashed editor — nothing
stops: turns run on, their events are kept (``agent/history``), and the
server waits ``linger`` seconds for an editor to come back. The next one
sends ``initialize`` again (same workspace) and is *attached*: its result
says so (``experimental.agentls.attached``), and it rebuilds its transcripts
with ``agent/history``. A newer connection takes over from an older one.
``shutdown``/``exit``, a signal, or no editor for ``linger`` seconds stop the
server in order, as on stdio.

What belongs to one connection does not leak into the next: answers to
requests an earlier editor sent are dropped (request ids are the editor's
own, so every connection's get a prefix of their own inside the server);
questions to an editor that left (an approval) fail at once, so the agent
treats them as denied; progress on an earlier editor's tokens is not sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import socket
import sys
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentls.lsp.attachment import Attachment
from agentls.lsp.framing import read_messages
from agentls.lsp.writer import Lost, StreamWriterAdapter

if TYPE_CHECKING:
    from agentls.lsp.app import AgentServer

log = logging.getLogger(__name__)

DEFAULT_LINGER = 120.0  # seconds without an editor before the server stops


class NullWriter:
    """The writer while no editor is attached: what is sent goes nowhere
    (events are kept for ``agent/history`` by the relay)."""

    def write(self, data: bytes) -> None:
        pass

    def close(self) -> None:
        pass


def fail_requests(server: AgentServer, asked: set[Any]) -> None:
    """Questions the editor that left was asked fail now (an approval counts as denied)."""
    for msg_id in asked:
        future = server.protocol._request_futures.pop(msg_id, None)
        if isinstance(future, Future) and not future.done():
            future.set_exception(ConnectionError("the editor went away"))
    asked.clear()


def socket_in_use(path: Path) -> bool:
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(str(path))
    except OSError:
        return False
    finally:
        probe.close()
    return True


def serve_listen(server: AgentServer, path: Path, linger: float, limit: int) -> int:
    if socket_in_use(path):
        # Another server has this workspace: not an error (two bridges raced).
        log.info("a server already listens on %s", path)
        return 0
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    with contextlib.suppress(FileNotFoundError):
        path.unlink()  # a stale socket of a server that died
    return asyncio.run(_serve(server, path, linger, limit))


async def _serve(server: AgentServer, path: Path, linger: float, limit: int) -> int:
    from agentls.lsp.transport import _answered

    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signum, server.request_exit, 0)
    attachment = server.attachment = Attachment()
    server.protocol.set_writer(NullWriter())
    arrivals: asyncio.Queue[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = asyncio.Queue()

    async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await arrivals.put((reader, writer))

    old_umask = os.umask(0o177)
    try:
        listener = await asyncio.start_unix_server(accept, path=str(path), limit=1 << 24)
    finally:
        os.umask(old_umask)
    log.info("listening on %s (an editor may leave and come back within %.0f s)", path, linger)
    print(f"agentls listening on unix:{path}", file=sys.stderr, flush=True)
    exiting = asyncio.ensure_future(server.exit_requested.wait())
    current: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
    try:
        while True:
            if current is None:
                arrival = asyncio.ensure_future(arrivals.get())
                done, _ = await asyncio.wait(
                    {arrival, exiting}, timeout=linger, return_when=asyncio.FIRST_COMPLETED
                )
                if arrival not in done:
                    arrival.cancel()
                    if exiting not in done:
                        log.info("no editor came back within %.0f s: stopping", linger)
                    break
                current = arrival.result()
            reader, stream = current
            adapter = StreamWriterAdapter(stream, loop, limit=limit, on_lost=_closer(stream))
            _attach(server, attachment, adapter)
            reading = asyncio.ensure_future(read_messages(reader, server.intake))
            arrival = asyncio.ensure_future(arrivals.get())
            done, _ = await asyncio.wait(
                {reading, arrival, exiting}, return_when=asyncio.FIRST_COMPLETED
            )
            if exiting in done:
                arrival.cancel()
                reading.cancel()
                break
            reading.cancel()
            _detach(server, attachment)
            stream.close()
            if server.shutdown_requested:
                break  # shut down, then gone without exit: nothing to come back to
            if arrival in done:
                log.info("another editor connected: it takes over")
                current = arrival.result()
            else:
                arrival.cancel()
                log.info("the editor left; the agents go on for %.0f s without one", linger)
                current = None
    finally:
        listener.close()
        with contextlib.suppress(OSError):
            os.unlink(path)
    await server.stop_connection()
    await _answered(server)
    writer = server.protocol.writer
    aclose = getattr(writer, "aclose", None)
    if aclose is not None:
        await aclose()
    return server.exit_code


def _closer(stream: asyncio.StreamWriter) -> Any:
    def lost(kind: Lost, detail: str) -> None:
        # An editor that stopped reading, or whose end closed: it has left.
        log.info("the editor connection is lost: %s", detail)
        stream.close()

    return lost


def _attach(server: AgentServer, attachment: Attachment, writer: StreamWriterAdapter) -> None:
    attachment.generation += 1
    attachment.attached = True
    attachment.ready = False
    server.protocol.set_writer(writer)


def _detach(server: AgentServer, attachment: Attachment) -> None:
    attachment.attached = False
    attachment.ready = False
    attachment.stale_tokens.update(server.work_done_progress.tokens)
    server.protocol.set_writer(NullWriter())
    fail_requests(server, attachment.asked)
    server.soft_cancels.clear()
