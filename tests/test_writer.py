"""The writers to the editor, on real pipes and sockets: the loop never blocks,
order is kept whoever writes, one batch per loop iteration, the bound on
unsent output, everything sent at close, a closed pipe, TCP and WebSocket."""

from __future__ import annotations

import array
import asyncio
import fcntl
import logging
import os
import re
import select
import socket
import termios
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager, suppress
from typing import Any

import pytest

from agentls.lsp.writer import (
    DEFAULT_LIMIT,
    CoalescingWriter,
    Lost,
    OnLost,
    StreamWriterAdapter,
    ThreadedWriter,
    WebSocketAdapter,
    limit_from_environment,
)

from .support import WAIT

Losses = list[tuple[Lost, str]]
SMALL_PIPE = 4096  # the least a pipe holds: full after one page


@contextmanager
def pipe(size: int | None = None) -> Iterator[tuple[int, int]]:
    read_end, write_end = os.pipe()
    if size is not None:
        fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, size)
    try:
        yield read_end, write_end
    finally:
        for fd in (read_end, write_end):
            with suppress(OSError):
                os.close(fd)


def recorder() -> tuple[Losses, OnLost]:
    """Where a writer reports the loss of its connection, and the list it goes to."""
    losses: Losses = []
    return losses, lambda kind, detail: losses.append((kind, detail))


def threaded(fd: int, limit: int = DEFAULT_LIMIT, **pacing: Any) -> tuple[ThreadedWriter, Losses]:
    losses, on_lost = recorder()
    loop = asyncio.get_running_loop()
    return ThreadedWriter(fd, loop, limit=limit, on_lost=on_lost, **pacing), losses


def read_exactly(fd: int, size: int, chunk: int = 1 << 16) -> bytes:
    """``size`` bytes from ``fd`` (in reads of at most ``chunk``); fails after WAIT."""
    deadline = time.monotonic() + WAIT
    data = bytearray()
    while len(data) < size:
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            raise AssertionError(f"read {len(data)} of {size} bytes in {WAIT:.0f} s")
        piece = os.read(fd, min(chunk, size - len(data)))
        if not piece:
            raise AssertionError(f"end of input after {len(data)} of {size} bytes")
        data += piece
    return bytes(data)


def drain(fd: int, writer: ThreadedWriter) -> bytes:
    """Read until the writer has nothing left to write (fails after WAIT)."""
    deadline = time.monotonic() + WAIT
    data = bytearray()
    while writer.unsent() or unread(fd):
        assert time.monotonic() < deadline, f"still {writer.unsent()} bytes to write"
        ready, _, _ = select.select([fd], [], [], 0.01)
        if ready:
            data += os.read(fd, 1 << 16)
    return bytes(data)


def unread(fd: int) -> int:
    count = array.array("i", [0])
    fcntl.ioctl(fd, termios.FIONREAD, count)
    return count[0]


async def until(condition: Callable[[], object], what: str) -> None:
    """Poll ``condition`` (every 5 ms, the loop running meanwhile) until WAIT."""
    deadline = time.monotonic() + WAIT
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"no {what} within {WAIT:.0f} s")
        await asyncio.sleep(0.005)


async def fill_until_lost(writer: CoalescingWriter, losses: Losses, size: int) -> list[bytes]:
    """One ``size``-byte message per loop iteration until the writer gives up;
    the messages it was handed, in order."""
    sent: list[bytes] = []
    async with asyncio.timeout(WAIT):
        while not losses:
            # Random, so that nothing on the way (WebSocket's deflate) shrinks it.
            message = b"%08d" % len(sent) + os.urandom(size - 8)
            writer.write(message)
            sent.append(message)
            await asyncio.sleep(0)  # the iteration ends: the batch is handed over
    return sent


# --- stdio: ThreadedWriter ---------------------------------------------------------------


async def test_one_loop_iteration_is_one_write() -> None:
    # A SOCK_SEQPACKET socket keeps the boundaries of writes: one write, one record.
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    theirs.settimeout(WAIT)
    with ours, theirs:
        writer, _ = threaded(ours.fileno())
        for message in (b"one ", b"two ", b"three"):
            writer.write(message)
        assert await asyncio.to_thread(theirs.recv, 1 << 16) == b"one two three"
        writer.write(b"four ")
        writer.write(b"five")
        assert await asyncio.to_thread(theirs.recv, 1 << 16) == b"four five"
        assert await writer.aclose()


async def test_the_first_message_after_a_quiet_moment_goes_out_at_once() -> None:
    # Into an empty pipe, from the loop: no waiting for the iteration's end or
    # the writer thread (the first delta of an answer); the rest is batched.
    with pipe() as (read_end, write_end):
        writer, _ = threaded(write_end)
        writer.write(b"first ")
        assert unread(read_end) == len(b"first ")  # written before this call returned
        writer.write(b"second")
        assert unread(read_end) == len(b"first ")  # batched: it goes at the iteration's end
        assert await asyncio.to_thread(read_exactly, read_end, 12) == b"first second"
        # The editor has not read the next one yet: later messages queue behind it.
        writer.write(b"third ")
        writer.write(b"fourth")
        await asyncio.sleep(0)
        await until(lambda: unread(read_end) == 12, "both")
        writer.write(b"fifth")
        assert unread(read_end) == 12  # not at once: the editor is behind
        await asyncio.sleep(0)
        assert drain(read_end, writer) == b"third fourthfifth"
        assert await writer.aclose()


async def test_order_is_kept_whoever_writes() -> None:
    with pipe(SMALL_PIPE) as (read_end, write_end):
        writer, losses = threaded(write_end)
        on_loop: list[bytes] = []

        async def task(name: str) -> None:
            for i in range(400):
                message = b"<%s:%d>" % (name.encode(), i)
                on_loop.append(message)  # the loop runs one task at a time: this is the order
                writer.write(message)
                if i % 7 == 0:
                    await asyncio.sleep(0)

        def thread(name: str) -> None:
            for i in range(400):
                writer.write(b"<%s:%d>" % (name.encode(), i))

        total = sum(len(b"<task-%d:%d>" % (t, i)) for t in range(3) for i in range(400))
        total += sum(len(b"<thread-%d:%d>" % (t, i)) for t in range(2) for i in range(400))
        # Small reads: the writer thread keeps meeting a full pipe.
        reading = asyncio.ensure_future(asyncio.to_thread(read_exactly, read_end, total, 512))
        threads = [threading.Thread(target=thread, args=(f"thread-{n}",)) for n in range(2)]
        for started in threads:
            started.start()
        await asyncio.gather(*(task(f"task-{n}") for n in range(3)))
        for started in threads:
            await asyncio.to_thread(started.join, WAIT)
        data = await reading
        assert await writer.aclose()
        assert not losses
        messages = re.findall(rb"<[^>]*>", data)
        assert [m for m in messages if m.startswith(b"<task")] == on_loop
        for n in range(2):
            name = b"<thread-%d:" % n
            numbers = [int(m[len(name) : -1]) for m in messages if m.startswith(name)]
            assert numbers == list(range(400))
        assert b"".join(messages) == data


async def test_a_full_pipe_never_blocks_the_loop(caplog: pytest.LogCaptureFixture) -> None:
    with pipe(SMALL_PIPE) as (read_end, write_end):
        # Should the loop block in a write, this thread reads the pipe after
        # WAIT, so that the test fails instead of hanging.
        went_on = threading.Event()
        stuck: list[bool] = []

        def rescue() -> None:
            if not went_on.wait(WAIT):
                stuck.append(True)
                with suppress(OSError):
                    while os.read(read_end, 1 << 16):
                        pass

        threading.Thread(target=rescue, daemon=True).start()
        writer, losses = threaded(write_end)
        writer.write(b"x" * (1 << 20))  # 256 times what the pipe holds
        await asyncio.sleep(0)  # the flush has run
        await until(lambda: unread(read_end) == SMALL_PIPE, "a full pipe")
        went_on.set()
        assert not stuck, "the loop was blocked in a write"
        assert writer.unsent() > (1 << 20) - 2 * SMALL_PIPE
        # Nobody reads: closing gives up after the stall instead of hanging.
        with caplog.at_level(logging.WARNING, "agentls.lsp.writer"):
            assert not await asyncio.wait_for(writer.aclose(stall=0.2), WAIT)
        assert "bytes the editor did not read" in caplog.text
        assert not losses
        # Let the thread finish before the pipe closes (its number could be reused).
        data = await asyncio.to_thread(drain, read_end, writer)
        assert data == b"x" * (1 << 20)


async def test_an_editor_behind_paces_the_loop_to_its_reading() -> None:
    # Long pace: each iteration waits until the editor is back under the mark.
    high, batch = 64 * 1024, 32 * 1024
    data = os.urandom(200 * batch)
    with pipe(SMALL_PIPE) as (read_end, write_end):
        writer, losses = threaded(write_end, high=high, pace=WAIT)
        reading = asyncio.ensure_future(asyncio.to_thread(read_exactly, read_end, len(data), 1024))
        most = 0
        for start in range(0, len(data), batch):
            writer.write(data[start : start + batch])
            await asyncio.sleep(0)  # the batch is handed over (and paced)
            most = max(most, writer.unsent())
        assert await reading == data
        assert await writer.aclose() and not losses
        assert most <= high + batch  # memory stays near the mark


async def test_an_editor_that_stopped_reading_slows_the_paced_loop_but_never_stops_it() -> None:
    with pipe(SMALL_PIPE) as (read_end, write_end):
        writer, losses = threaded(write_end, high=64 * 1024, pace=0.001)
        for i in range(64):  # 2 MiB, nobody reading: each iteration waits 1 ms at most
            writer.write(b"%031d\n" % i * 1024)
            await asyncio.sleep(0)
        assert writer.unsent() > 2 * 1024 * 1024 - 2 * SMALL_PIPE and not losses
        data = await asyncio.to_thread(drain, read_end, writer)
        assert data == b"".join(b"%031d\n" % i * 1024 for i in range(64))
        assert await writer.aclose()


async def test_past_the_bound_the_editor_is_taken_for_gone(
    caplog: pytest.LogCaptureFixture,
) -> None:
    limit = 64 * 1024
    with pipe(SMALL_PIPE) as (read_end, write_end):
        writer, losses = threaded(write_end, limit=limit)
        sent = await fill_until_lost(writer, losses, 8192)
        ((kind, detail),) = losses
        assert kind is Lost.OVERFLOW and f"limit {limit}" in detail
        # The batch that found the bound passed is dropped, and all that follow.
        accepted = sent[:-1]
        assert writer.dropped_messages == 1
        assert writer.unsent() <= limit + 8192  # memory stays bounded
        writer.write(b"late")
        await asyncio.sleep(0)
        assert writer.dropped_messages == 2
        # Read again: the accepted messages, whole and in order, and nothing else.
        data = await asyncio.to_thread(read_exactly, read_end, sum(map(len, accepted)))
        assert data == b"".join(accepted)
        with caplog.at_level(logging.WARNING, "agentls.lsp.writer"):
            assert not await writer.aclose()  # lost: no waiting for the editor
        assert "2 messages (8196 bytes) were not sent: the editor stopped reading" in caplog.text
        assert unread(read_end) == 0
        assert len(losses) == 1


async def test_close_sends_everything_queued_while_the_editor_reads() -> None:
    data = bytes(range(256)) * 4096  # 1 MiB
    with pipe(SMALL_PIPE) as (read_end, write_end):
        writer, losses = threaded(write_end)
        writer.write(data[:1000])
        writer.write(data[1000:])
        closing = asyncio.ensure_future(writer.aclose(stall=WAIT))
        got = await asyncio.to_thread(read_exactly, read_end, len(data))
        assert await closing
        assert got == data
        writer.write(b"after the end")  # the thread is gone: dropped, not blocked
        await asyncio.sleep(0)
        assert writer.dropped_messages == 1
        assert unread(read_end) == 0 and not losses


async def test_a_closed_pipe_loses_the_connection_without_an_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with pipe() as (read_end, write_end):
        os.close(read_end)
        writer, losses = threaded(write_end)
        writer.write(b"hello")
        await until(lambda: losses, "the loss")
        ((kind, detail),) = losses
        assert kind is Lost.CLOSED and "Broken pipe" in detail
        writer.write(b"more")
        await asyncio.sleep(0)
        assert writer.dropped_messages == 1
        with caplog.at_level(logging.WARNING, "agentls.lsp.writer"):
            assert not await asyncio.wait_for(writer.aclose(), WAIT)
        assert "the editor closed the connection" in caplog.text


async def test_a_non_blocking_descriptor_still_gets_everything() -> None:
    data = os.urandom(1 << 20)
    with pipe(SMALL_PIPE) as (read_end, write_end):
        os.set_blocking(write_end, False)  # as if whoever shares it had done so
        writer, losses = threaded(write_end)
        for start in range(0, len(data), 1000):
            writer.write(data[start : start + 1000])
            if start % 50_000 == 0:
                await asyncio.sleep(0)
        got = await asyncio.to_thread(read_exactly, read_end, len(data), 3000)
        assert got == data
        assert await writer.aclose() and not losses


def test_the_limit_comes_from_the_environment() -> None:
    assert limit_from_environment({}) == DEFAULT_LIMIT
    assert limit_from_environment({"AGENTLS_UNSENT_LIMIT": " 1048576 "}) == 1 << 20
    for bad in ("abc", "0", "-5", "1.5", "64M"):
        with pytest.raises(ValueError, match="AGENTLS_UNSENT_LIMIT"):
            limit_from_environment({"AGENTLS_UNSENT_LIMIT": bad})


# --- TCP: StreamWriterAdapter -------------------------------------------------------------


def small_buffered_socket() -> socket.socket:
    """A TCP socket whose receive buffer is small (loopback's may grow to 32 MiB)."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setblocking(False)
    return sock


@asynccontextmanager
async def tcp_pair() -> AsyncIterator[tuple[asyncio.StreamWriter, socket.socket]]:
    """Our stream writer and the peer's socket, with small buffers both sides."""
    accepted: asyncio.Queue[asyncio.StreamWriter] = asyncio.Queue()

    async def accept(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await accepted.put(writer)

    server = await asyncio.start_server(accept, "127.0.0.1", 0)
    peer = small_buffered_socket()
    try:
        await asyncio.get_running_loop().sock_connect(peer, server.sockets[0].getsockname())
        writer = await asyncio.wait_for(accepted.get(), WAIT)
        writer.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
        yield writer, peer
        if not writer.transport.is_closing():
            writer.transport.abort()
    finally:
        peer.close()
        server.close()


def stream(
    writer: asyncio.StreamWriter, limit: int = DEFAULT_LIMIT
) -> tuple[CoalescingWriter, Losses]:
    losses, on_lost = recorder()
    loop = asyncio.get_running_loop()
    return StreamWriterAdapter(writer, loop, limit=limit, on_lost=on_lost), losses


def receive_all(peer: socket.socket) -> bytes:
    """Everything the peer gets until the end of the stream (fails after WAIT)."""
    peer.setblocking(True)
    peer.settimeout(WAIT)
    data = bytearray()
    while piece := peer.recv(1 << 16):
        data += piece
    return bytes(data)


async def test_tcp_past_the_bound_the_peer_is_taken_for_gone() -> None:
    limit = 256 * 1024
    async with tcp_pair() as (writer, _peer):
        adapter, losses = stream(writer, limit)
        sent = await fill_until_lost(adapter, losses, 16384)
        ((kind, _),) = losses
        assert kind is Lost.OVERFLOW
        assert adapter.unsent() <= limit + 16384
        assert adapter.dropped_messages == 1 and len(sent) > 1
        assert not await asyncio.wait_for(adapter.aclose(), WAIT)
        assert writer.transport.is_closing()


async def test_tcp_close_sends_everything_queued() -> None:
    data = os.urandom(1 << 20)
    async with tcp_pair() as (writer, peer):
        adapter, losses = stream(writer)
        for start in range(0, len(data), 4096):
            adapter.write(data[start : start + 4096])
        closing = asyncio.ensure_future(adapter.aclose(stall=WAIT))
        assert await asyncio.to_thread(receive_all, peer) == data
        assert await closing and not losses


async def test_tcp_a_peer_that_closed_is_lost() -> None:
    async with tcp_pair() as (writer, peer):
        adapter, losses = stream(writer)
        peer.close()

        async def write_until_lost() -> None:
            while not losses:
                adapter.write(b"x" * 1024)
                await asyncio.sleep(0.005)

        await asyncio.wait_for(write_until_lost(), WAIT)
        assert losses[0][0] is Lost.CLOSED
        assert not await asyncio.wait_for(adapter.aclose(), WAIT)


# --- WebSocket: WebSocketAdapter ----------------------------------------------------------


@asynccontextmanager
async def websocket_pair(
    max_queue: int = 16,
) -> AsyncIterator[tuple[WebSocketAdapter, Losses, Any]]:
    from websockets.asyncio.client import connect
    from websockets.asyncio.server import ServerConnection, serve

    connections: asyncio.Queue[ServerConnection] = asyncio.Queue()

    async def handler(websocket: ServerConnection) -> None:
        await connections.put(websocket)
        await websocket.wait_closed()

    async with serve(handler, "127.0.0.1", 0) as server:
        address = next(iter(server.sockets)).getsockname()[:2]
        sock = small_buffered_socket()
        await asyncio.get_running_loop().sock_connect(sock, address)
        uri = f"ws://{address[0]}:{address[1]}"
        async with connect(uri, sock=sock, max_queue=max_queue) as client:
            ours = await asyncio.wait_for(connections.get(), WAIT)
            ours.transport.get_extra_info("socket").setsockopt(
                socket.SOL_SOCKET, socket.SO_SNDBUF, 4096
            )
            losses, on_lost = recorder()
            loop = asyncio.get_running_loop()
            adapter = WebSocketAdapter(ours, loop, limit=256 * 1024, on_lost=on_lost)
            yield adapter, losses, client
            ours.transport.abort()


async def test_websocket_messages_arrive_one_by_one_in_order() -> None:
    async with websocket_pair() as (adapter, losses, client):
        messages = [b'{"n": %d}' % i for i in range(500)]
        for i, message in enumerate(messages):
            adapter.write(message)
            if i % 9 == 0:
                await asyncio.sleep(0)
        closing = asyncio.ensure_future(adapter.aclose(stall=WAIT))
        got = [await asyncio.wait_for(client.recv(), WAIT) for _ in messages]
        assert got == messages
        assert await closing and not losses


async def test_websocket_past_the_bound_the_client_is_taken_for_gone() -> None:
    # A client that never calls recv() stops reading its socket after one message.
    async with websocket_pair(max_queue=1) as (adapter, losses, _client):
        await fill_until_lost(adapter, losses, 65536)
        ((kind, detail),) = losses
        assert kind is Lost.OVERFLOW and "limit 262144" in detail
        assert adapter.unsent() <= 256 * 1024 + 65536
        assert not await asyncio.wait_for(adapter.aclose(), WAIT)
