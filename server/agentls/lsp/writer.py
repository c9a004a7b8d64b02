"""Writing to the editor without the event loop waiting on it.

An editor that stops reading (a modal dialog is enough) fills the pipe
between us; a blocking ``write`` on the event loop would then stall every
pane, their timeouts, cancels and process kills. So the loop only queues:

* Everything sent within one iteration of the event loop (a result and the
  events around it) is handed over as one batch: one system call, not one per
  message. Batches that pile up while a write waits go out together.
* Except the first message after a quiet moment (the first delta of an
  answer, a result): when nothing is waiting to go out and the editor has
  read everything, it is written at once, from the loop — where that cannot
  block: into an empty pipe with room for it (stdio), or an empty transport
  buffer (TCP). It skips the iteration's end and the writer thread's wake-up.
* On stdio a daemon thread does the blocking writes (``ThreadedWriter``). We
  do not make stdout non-blocking instead: ``O_NONBLOCK`` belongs to the open
  file, which stdout may share with stdin (a socket) or stderr (``2>&1``), and
  those would turn non-blocking too.
* On TCP the asyncio transport never blocks, but it buffers without bound
  (``StreamWriterAdapter``); on WebSocket, ``websockets`` does the same (and
  its keepalive ping waits behind the data, so it never notices a client that
  stopped reading): ``WebSocketAdapter`` sends from one task, in order.

What the editor has not taken yet decides what happens:

* Up to ``DEFAULT_HIGH`` (4 MiB): nothing waits. A modal dialog over a
  streaming turn stays far below it for minutes.
* Beyond it, on stdio, the loop is *paced*: after handing a batch over it
  waits until the editor has taken it back under the mark — but never more
  than ``PACE`` (20 ms) per iteration, and every iteration still runs
  whatever is ready (cancels, kills, timeouts, input). A reading editor thus
  slows bulk producers (a command flooding stdout) down to its own pace, as a
  blocking writer did, and memory stays near the mark; an editor that stopped
  reading costs the loop at most 20 ms per iteration that sends something —
  it slows it, never stops it. (Without pacing, a flood faster than the editor
  reads would reach the bound below in a second or two, while the editor is
  reading. The asyncio transports of TCP and WebSocket write from the loop
  itself, so they are not paced: there the bound alone applies.)
* Beyond ``DEFAULT_LIMIT`` (64 MiB, ``AGENTLS_UNSENT_LIMIT``): the editor is
  taken for gone, as if its input had closed. The transport logs it and stops
  the connection in order (every turn cancelled, every process killed); what is
  sent from then on is dropped and counted in the log, and the process exits
  without waiting for the editor. The editor has the stream in order up to
  where it stopped reading, then the end of the output — a crash it reports,
  never a silent gap. Holding every message back instead would stall the
  turns for an editor that may never read again; dropping some would leave
  holes in an ordered stream (``seq``) it cannot repair. The bound is checked
  against what *earlier* batches left unsent, so no message, however large,
  trips it on an editor that does read.
"""

from __future__ import annotations

import abc
import asyncio
import enum
import fcntl
import logging
import os
import select
import stat
import struct
import termios
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Protocol

log = logging.getLogger(__name__)

# Unsent bytes beyond which the editor is taken for gone. At a model's
# streaming pace (a few KB/s of notifications) that is hours of not reading;
# in memory, less than a long session's history takes.
DEFAULT_LIMIT = 64 * 1024 * 1024
LIMIT_VARIABLE = "AGENTLS_UNSENT_LIMIT"
# Unsent bytes beyond which the loop is paced (at most half the limit).
DEFAULT_HIGH = 4 * 1024 * 1024
# The longest the loop waits for the editor in one iteration, when paced.
PACE = 0.020
# At exit, how long the editor may take nothing before we stop waiting for it
# to read what is left: the process must exit even if it never does.
EXIT_STALL = 5.0
# The most one system call writes, so that progress (and a stall) shows.
_CHUNK = 1 << 16


def _pipe_size(fd: int) -> int:
    """The capacity of the pipe ``fd`` is, or 0 if it is not a pipe."""
    try:
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            return 0
        return fcntl.fcntl(fd, fcntl.F_GETPIPE_SZ)
    except (OSError, AttributeError):
        return 0


def _unread(fd: int) -> int:
    """Bytes in the pipe the reader has not taken yet."""
    buffer = fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0")
    count: int = struct.unpack("i", buffer)[0]
    return count


class Lost(enum.Enum):
    """Why the connection to the editor was given up."""

    OVERFLOW = "the editor stopped reading"
    CLOSED = "the editor closed the connection"


OnLost = Callable[[Lost, str], None]


def limit_from_environment(env: dict[str, str] | None = None) -> int:
    """``AGENTLS_UNSENT_LIMIT`` (bytes), else the default; ValueError if it is not one."""
    value = (os.environ if env is None else env).get(LIMIT_VARIABLE, "").strip()
    if not value:
        return DEFAULT_LIMIT
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"{LIMIT_VARIABLE}={value!r}: expected a positive number of bytes")
    return int(value)


class CoalescingWriter(abc.ABC):
    """The loop side: queue each message, hand one batch over per loop iteration.

    ``write`` may be called from any thread (log records go to the editor from
    whichever thread logged them); the loop thread's messages keep the order
    they were written in.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, limit: int, on_lost: OnLost) -> None:
        self._loop = loop
        self._loop_thread = threading.get_ident()
        self._limit = limit
        self._on_lost = on_lost
        self._pending: list[bytes] = []
        self._scheduled = False
        self.lost: Lost | None = None
        self.dropped_messages = 0
        self.dropped_bytes = 0

    def write(self, data: bytes) -> None:
        if threading.get_ident() != self._loop_thread:
            try:
                self._loop.call_soon_threadsafe(self.write, data)
            except RuntimeError:  # the loop is closed: we are exiting
                self._drop([data])
            return
        if not self._scheduled:
            # Nothing is waiting in this iteration: perhaps it can go at once.
            if self.lost is None and self._write_now(data):
                return
            self._scheduled = True
            self._loop.call_soon(self.flush)
        self._pending.append(data)

    def flush(self) -> None:
        """Hand what this loop iteration wrote over to the connection."""
        self._scheduled = False
        if not self._pending:
            return
        messages, self._pending = self._pending, []
        if self.lost is None and self.unsent() > self._limit:
            self.give_up(
                Lost.OVERFLOW,
                f"the editor has not read the last {self.unsent()} bytes sent to it "
                f"(limit {self._limit}, {LIMIT_VARIABLE})",
            )
        if self.lost is not None or not self._send(messages):
            self._drop(messages)

    def close(self) -> None:
        """pygls's ``Writer.close``: hand over what is pending. (The end of the
        connection calls ``aclose``, which also waits for the editor to read it.)"""
        self.flush()

    def give_up(self, kind: Lost, detail: str) -> None:
        """The connection is lost: from now on everything is dropped. Said once."""
        if self.lost is None:
            self.lost = kind
            self._on_lost(kind, detail)

    def _drop(self, messages: list[bytes]) -> None:
        self.dropped_messages += len(messages)
        self.dropped_bytes += sum(map(len, messages))

    def _report(self, sent_all: bool) -> bool:
        if self.dropped_messages:
            log.warning(
                "%d messages (%d bytes) were not sent: %s",
                self.dropped_messages,
                self.dropped_bytes,
                self.lost.value if self.lost else "they came after the end of the connection",
            )
        if not sent_all and self.unsent():
            log.warning("exiting with %d bytes the editor did not read", self.unsent())
        return sent_all

    async def _wait_progress(
        self, done: Awaitable[object], progress: Callable[[], int], stall: float
    ) -> bool:
        """Wait for ``done`` as long as ``progress()`` moves every ``stall`` seconds."""
        finished = asyncio.ensure_future(done)
        last = None
        try:
            while not finished.done():
                now = progress()
                if now == last:
                    return False
                last = now
                await asyncio.wait([finished], timeout=stall)
            return not finished.cancelled() and finished.exception() is None
        finally:
            finished.cancel()

    # --- the connection side ------------------------------------------------------------

    def _write_now(self, data: bytes) -> bool:
        """Write ``data`` at once if that cannot block and nothing is queued
        before it; False: it goes with the iteration's batch."""
        return False

    @abc.abstractmethod
    def unsent(self) -> int:
        """Bytes handed over that the editor has not taken yet."""

    @abc.abstractmethod
    def _send(self, messages: list[bytes]) -> bool:
        """Hand messages over without blocking; False if nothing can be sent any more."""

    @abc.abstractmethod
    async def aclose(self, stall: float = EXIT_STALL) -> bool:
        """Send what is queued, waiting as long as the editor keeps reading: True
        if it all went out; False if the editor took nothing for ``stall``
        seconds or is lost (we do not wait for it then: the process must exit)."""


class ThreadedWriter(CoalescingWriter):
    """Writes to a blocking file descriptor (stdout) from a daemon thread.

    The thread never keeps the process alive: it is a daemon, ``aclose`` waits
    for it only while the editor reads, and a closed pipe (EPIPE) ends it.
    """

    def __init__(
        self,
        fd: int,
        loop: asyncio.AbstractEventLoop,
        *,
        limit: int = DEFAULT_LIMIT,
        high: int = DEFAULT_HIGH,
        pace: float = PACE,
        on_lost: OnLost,
    ) -> None:
        super().__init__(loop, limit, on_lost)
        self._fd = fd
        self._high = min(high, limit // 2)
        self._pace = pace
        # Both ways: the thread waits for batches, a paced loop for progress.
        self._cond = threading.Condition()
        # Guarded by _cond: batches in order, bytes queued or being written,
        # and whether the thread has stopped (nothing more goes out then).
        self._queue: deque[bytes] = deque()
        self._unsent = 0
        self._closing = False
        self._finished = False
        self._written = 0  # bytes the editor has taken (the thread's and write-now's)
        self._done = asyncio.Event()
        # A pipe's capacity (its empty pipe takes that much without blocking); 0: not a pipe.
        self._pipe_size = _pipe_size(fd)
        threading.Thread(target=self._write_forever, name="stdout", daemon=True).start()

    def unsent(self) -> int:
        return self._unsent

    def _write_now(self, data: bytes) -> bool:
        if len(data) > self._pipe_size:
            return False
        with self._cond:
            if self._queue or self._unsent or self._finished or self._closing:
                return False
            try:
                if _unread(self._fd):
                    return False  # the editor is reading: the thread waits for it
                written = os.write(self._fd, data)
            except OSError:
                return False  # the thread meets the error, and says so
            self._written += written
            if written < len(data):  # (an empty pipe takes it all; just in case)
                rest = data[written:]
                self._queue.append(rest)
                self._unsent += len(rest)
                self._cond.notify_all()
        return True

    def _send(self, messages: list[bytes]) -> bool:
        batch = messages[0] if len(messages) == 1 else b"".join(messages)
        with self._cond:
            if self._finished:
                return False
            self._queue.append(batch)
            self._unsent += len(batch)
            self._cond.notify_all()
            if self._unsent > self._high:
                # Paced: wait for the editor to take some, but not long.
                deadline = time.monotonic() + self._pace
                while self._unsent > self._high and not self._finished:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        break
                    self._cond.wait(left)
        return True

    def _write_forever(self) -> None:
        try:
            while True:
                with self._cond:
                    while not self._queue and not self._closing:
                        self._cond.wait()
                    if not self._queue:
                        return
                    batch = self._queue[0] if len(self._queue) == 1 else b"".join(self._queue)
                    self._queue.clear()
                self._write_all(memoryview(batch))
        except OSError as exc:  # EPIPE, EBADF, EIO...: the editor is gone
            self._tell_loop(self.give_up, Lost.CLOSED, f"cannot write to the editor: {exc}")
        finally:
            with self._cond:
                self._finished = True
                self._cond.notify_all()
            self._tell_loop(self._done.set)

    def _write_all(self, view: memoryview) -> None:
        while view:
            try:
                written = os.write(self._fd, view[:_CHUNK])
            except BlockingIOError:
                # Someone made the (shared) file non-blocking: wait until it takes more.
                select.select([], [self._fd], [])
                continue
            view = view[written:]
            self._written += written
            with self._cond:
                self._unsent -= written
                if self._unsent <= self._high:
                    self._cond.notify_all()  # a paced loop may go on

    def _tell_loop(self, callback: Callable[..., object], *args: object) -> None:
        try:
            self._loop.call_soon_threadsafe(callback, *args)
        except RuntimeError:  # the loop is closed: the process is exiting anyway
            pass

    async def aclose(self, stall: float = EXIT_STALL) -> bool:
        self.flush()
        with self._cond:
            self._closing = True
            self._cond.notify()
        if self.lost is not None:
            return self._report(False)
        sent = await self._wait_progress(self._done.wait(), lambda: self._written, stall)
        return self._report(sent and self.lost is None)


class StreamWriterAdapter(CoalescingWriter):
    """An asyncio stream (TCP): the same coalescing, the same bound on its buffer."""

    def __init__(
        self,
        writer: asyncio.StreamWriter,
        loop: asyncio.AbstractEventLoop,
        *,
        limit: int = DEFAULT_LIMIT,
        on_lost: OnLost,
    ) -> None:
        super().__init__(loop, limit, on_lost)
        self._writer = writer

    def unsent(self) -> int:
        return self._writer.transport.get_write_buffer_size()

    def _write_now(self, data: bytes) -> bool:
        # The transport sends at once into an empty buffer (and never blocks).
        transport = self._writer.transport
        if transport.is_closing() or transport.get_write_buffer_size():
            return False
        self._writer.write(data)
        return True

    def _send(self, messages: list[bytes]) -> bool:
        if self._writer.transport.is_closing():
            self.give_up(Lost.CLOSED, "the connection is closed")
            return False
        self._writer.write(messages[0] if len(messages) == 1 else b"".join(messages))
        return True

    async def aclose(self, stall: float = EXIT_STALL) -> bool:
        self.flush()
        transport = self._writer.transport
        sent = False
        try:
            if self.lost is not Lost.OVERFLOW:
                # close() sends what is buffered first; wait_closed() returns once it has.
                self._writer.close()
                sent = await self._wait_progress(
                    self._writer.wait_closed(), lambda: -self.unsent(), stall
                )
        finally:
            if not sent:
                transport.abort()  # the buffer of a peer that does not read goes
        return self._report(sent and self.lost is None)


class WebSocket(Protocol):
    async def send(self, message: bytes) -> None: ...


class WebSocketAdapter(CoalescingWriter):
    """A WebSocket connection: one message per WebSocket message, sent in
    order from one task, under the same bound."""

    def __init__(
        self,
        websocket: WebSocket,
        loop: asyncio.AbstractEventLoop,
        *,
        limit: int = DEFAULT_LIMIT,
        on_lost: OnLost,
    ) -> None:
        from websockets.exceptions import ConnectionClosed

        super().__init__(loop, limit, on_lost)
        self._websocket = websocket
        self._closed_errors = (ConnectionClosed, OSError)
        self._queue: deque[bytes] = deque()
        self._unsent = 0  # queued, or sent into a buffer the peer has not drained
        self._sent = 0
        self._sender: asyncio.Task[None] | None = None

    def unsent(self) -> int:
        return self._unsent

    def _send(self, messages: list[bytes]) -> bool:
        self._queue.extend(messages)
        self._unsent += sum(map(len, messages))
        if self._sender is None or self._sender.done():
            self._sender = self._loop.create_task(self._send_all())
        return True

    async def _send_all(self) -> None:
        try:
            while self._queue:
                message = self._queue[0]
                # Returns once the message is in the transport's buffer and
                # that buffer is below its high-water mark.
                await self._websocket.send(message)
                self._queue.popleft()
                self._unsent -= len(message)
                self._sent += len(message)
        except self._closed_errors as exc:
            self._drop(list(self._queue))
            self._queue.clear()
            self.give_up(Lost.CLOSED, f"cannot send to the editor: {exc!r}")

    async def aclose(self, stall: float = EXIT_STALL) -> bool:
        self.flush()
        sender = self._sender
        sent = True
        if self.lost is not None:
            sent = False
        elif sender is not None and not sender.done():
            sent = await self._wait_progress(asyncio.shield(sender), lambda: self._sent, stall)
        if not sent and sender is not None:
            sender.cancel()
        return self._report(sent and self.lost is None)
