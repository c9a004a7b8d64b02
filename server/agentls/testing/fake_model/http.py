"""The HTTP/1.1 connection layer: reading requests, writing (chunked) answers."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from http import HTTPStatus

MAX_HEAD_BYTES = 64 * 1024
BATCH_BYTES = 32 * 1024  # events are written in chunks of about this size
DRAIN_ABOVE = 64 * 1024  # await drain() only when the transport buffer is larger


class ClientGone(Exception):
    """The client disconnected; stop writing."""


class BadRequest(Exception):
    """The bytes the client sent are not an HTTP/1.1 request we can read."""


def phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Unknown"


def error_body(message: str, type_: str, code: str | None, param: str | None = None) -> bytes:
    """``{"error": {...}}`` in OpenAI's shape (and indentation)."""
    error = {"message": message, "type": type_, "param": param, "code": code}
    return json.dumps({"error": error}, indent=2).encode()


def json_response(status: int, body: bytes, headers: Mapping[str, str], keep_alive: bool) -> bytes:
    """A whole response with a JSON body."""
    lines = [f"HTTP/1.1 {status} {phrase(status)}", "content-type: application/json"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    lines += [
        f"content-length: {len(body)}",
        f"connection: {'keep-alive' if keep_alive else 'close'}",
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def sse_head(request_id: str, keep_alive: bool) -> bytes:
    """The head of a ``200 text/event-stream`` answer with a chunked body."""
    return (
        "HTTP/1.1 200 OK\r\n"
        "content-type: text/event-stream; charset=utf-8\r\n"
        "transfer-encoding: chunked\r\n"
        "cache-control: no-cache\r\n"
        f"connection: {'keep-alive' if keep_alive else 'close'}\r\n"
        f"x-request-id: {request_id}\r\n"
        "\r\n"
    ).encode("latin-1")


def chunk(payload: bytes) -> bytes:
    """One chunk of a chunked body (``payload`` must not be empty)."""
    return b"%x\r\n%b\r\n" % (len(payload), payload)


LAST_CHUNK = b"0\r\n\r\n"


@dataclass(slots=True)
class Head:
    method: str
    target: str
    version: str
    headers: dict[str, str]
    t_arrival_ns: int

    @property
    def keep_alive(self) -> bool:
        connection = self.headers.get("connection", "").lower()
        if connection == "close":
            return False
        return self.version != "HTTP/1.0" or connection == "keep-alive"


class Connection:
    """One client connection: a pump reading into a buffer (which also notices the
    client going away at any time) and a writer with lazy back-pressure."""

    def __init__(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, number: int
    ) -> None:
        self.number = number
        self.reader = reader
        self.writer = writer
        self.buffer = bytearray()
        self.lost = asyncio.Event()
        self._more = asyncio.Event()
        self._pump_task = asyncio.create_task(self._pump())

    async def _pump(self) -> None:
        try:
            while True:
                data = await self.reader.read(65536)
                if not data:
                    break
                self.buffer += data
                self._more.set()
        except (ConnectionError, OSError):
            pass
        finally:
            self.lost.set()
            self._more.set()

    async def _wait_more(self) -> None:
        self._more.clear()
        await self._more.wait()

    async def read_head(self) -> Head | None:
        """The next request's head, or None if the client closed the connection."""
        while True:
            end = self.buffer.find(b"\r\n\r\n")
            if end >= 0:
                break
            if len(self.buffer) > MAX_HEAD_BYTES:
                raise BadRequest("request head too large")
            if self.lost.is_set():
                return None
            await self._wait_more()
        raw = bytes(self.buffer[:end])
        del self.buffer[: end + 4]
        t_arrival = time.perf_counter_ns()
        lines = raw.decode("latin-1").split("\r\n")
        try:
            method, target, version = lines[0].split(" ", 2)
        except ValueError:
            raise BadRequest(f"bad request line {lines[0]!r}") from None
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if not sep:
                raise BadRequest(f"bad header line {line!r}")
            key = name.strip().lower()
            value = value.strip()
            headers[key] = f"{headers[key]}, {value}" if key in headers else value
        return Head(method, target, version, headers, t_arrival)

    async def read_exactly(self, n: int) -> bytes:
        while len(self.buffer) < n:
            if self.lost.is_set():
                raise ClientGone
            await self._wait_more()
        data = bytes(self.buffer[:n])
        del self.buffer[:n]
        return data

    async def read_line(self) -> bytes:
        while (end := self.buffer.find(b"\r\n")) < 0:
            if self.lost.is_set():
                raise ClientGone
            await self._wait_more()
        line = bytes(self.buffer[:end])
        del self.buffer[: end + 2]
        return line

    async def read_body(self, headers: Mapping[str, str]) -> bytes:
        if "chunked" in headers.get("transfer-encoding", "").lower():
            body = bytearray()
            while True:
                size_line = await self.read_line()
                try:
                    size = int(size_line.split(b";")[0].strip(), 16)
                except ValueError:
                    raise BadRequest("bad chunk size") from None
                if size == 0:
                    while await self.read_line():  # trailers
                        pass
                    return bytes(body)
                body += await self.read_exactly(size)
                await self.read_exactly(2)
        length = headers.get("content-length")
        if length is None:
            return b""
        try:
            n = int(length)
        except ValueError:
            raise BadRequest("bad content-length") from None
        return await self.read_exactly(n)

    @property
    def gone(self) -> bool:
        return self.lost.is_set() or self.writer.transport.is_closing()

    async def write(self, data: bytes, *, drain: bool = False) -> None:
        if self.gone:
            raise ClientGone
        self.writer.write(data)
        if drain or self.writer.transport.get_write_buffer_size() > DRAIN_ABOVE:
            try:
                await self.writer.drain()
            except (ConnectionError, OSError) as exc:
                raise ClientGone from exc

    async def pause(self, seconds: float) -> None:
        """Sleep, unless the client goes away first."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.lost.wait(), seconds)
        if self.gone:
            raise ClientGone

    async def until_gone(self) -> None:
        await self.lost.wait()
        raise ClientGone

    def close(self, *, abort: bool = False) -> None:
        self._pump_task.cancel()
        if abort:
            self.writer.transport.abort()
        else:
            self.writer.close()


class Batch:
    """SSE events collected into one HTTP chunk per write."""

    __slots__ = ("conn", "parts", "size")

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.parts: list[bytes] = []
        self.size = 0

    def add(self, data: bytes) -> None:
        self.parts.append(data)
        self.size += len(data)

    async def flush(self, *, drain: bool = False) -> None:
        if self.parts:
            payload = b"".join(self.parts)
            self.parts.clear()
            self.size = 0
            await self.conn.write(chunk(payload), drain=drain)
        elif drain:
            await self.conn.write(b"", drain=True)
        elif self.conn.gone:
            raise ClientGone
