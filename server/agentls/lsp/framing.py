"""LSP base-protocol framing, read forgivingly.

``Content-Length: N`` headers, a blank line, N bytes of body. pygls's reader
gives up for good after one bad byte; this one resynchronises on the next
``Content-Length`` header it can find: a stray byte, a bad or missing length,
LF-only line ends, a lowercase header or a length that does not match the body
cost the messages they overlap, never the connection.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable
from typing import Protocol

log = logging.getLogger(__name__)

MAX_BODY = 64 * 1024 * 1024  # bytes: a larger "length" is taken for garbage
_LENGTH = re.compile(rb"content-length[ \t]*:[ \t]*(\S*)", re.IGNORECASE)


class Reader(Protocol):
    def readline(self) -> Awaitable[bytes]: ...

    def readexactly(self, n: int) -> Awaitable[bytes]: ...


async def read_messages(reader: Reader, on_body: Callable[[bytes], None]) -> None:
    """Call ``on_body`` with every message body until the input ends."""
    while True:
        length = await _read_headers(reader)
        if length is None:
            return
        body = await reader.readexactly(length)
        if len(body) < length:
            return  # the input ended inside a body
        on_body(body)


async def _read_headers(reader: Reader) -> int | None:
    """The length of the next body, after its header block; None at the end."""
    length: int | None = None
    while True:
        try:
            line = await reader.readline()
        except ValueError:  # an over-long line (asyncio's limit): garbage
            continue
        if not line:
            return None
        if not line.strip():
            if length is not None:
                return length
            continue  # a blank line with no header before it: skip it
        match = _LENGTH.search(line)
        if match is None:
            continue  # another header (Content-Type) or garbage: ignored
        value = match.group(1)
        if value.isdigit() and int(value) <= MAX_BODY:
            length = int(value)
        else:
            log.warning("ignoring a bad Content-Length header: %r", line[:80])
            length = None
