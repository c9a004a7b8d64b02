"""A session's journal: one JSON record per line, appended, then fsynced.

Each ``append`` is one ``write`` of whole lines, done before the agent goes
on: from then on the records are the kernel's, and a ``kill -9`` of the
server cannot take them back. ``fsync`` (``fdatasync``) — what makes them survive a power cut
or a kernel crash too — runs on a thread of its own (``Flusher``), within
50 ms of an append (``GATHER``), so that a disk busy for milliseconds never
stalls the event loop (and so the turns of other panes): one fsync per burst
of appends, never one per record.

A line cut short (a power cut mid-write) is dropped when the journal is read,
and cut off before the next append. While a server has a session open it
holds an exclusive ``flock`` on its journal: a second server cannot write
into it, and nobody deletes it under its feet. The lock dies with the
process, ``kill -9`` included.

The API key never reaches the disk: every line is checked for it (it is
plain ASCII, so it appears verbatim in our ASCII-only JSON) and blanked out.
"""

from __future__ import annotations

import calendar
import fcntl
import json
import logging
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

FORMAT = "agentls.session"
VERSION = 1
# Seconds the flusher gathers appends before it fsyncs them.
GATHER = 0.05

Record = dict[str, Any]


class JournalError(Exception):
    """A journal that cannot be read; the message says why, for the user."""


class JournalLocked(Exception):
    """Another agentls server has this session open."""


def redact(text: str, secret: str | None) -> str:
    return text.replace(secret, "[redacted]") if secret and secret in text else text


def encode(records: tuple[Record, ...], secret: str | None) -> bytes:
    text = "".join(json.dumps(record, separators=(",", ":")) + "\n" for record in records)
    return redact(text, secret).encode("ascii")


class Flusher:
    """The thread that fsyncs journals after their appends (one per process)."""

    def __init__(self) -> None:
        self._wake = threading.Condition()
        self._dirty: dict[int, JournalWriter] = {}
        self._thread: threading.Thread | None = None

    def request(self, writer: JournalWriter) -> None:
        with self._wake:
            self._dirty[id(writer)] = writer
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="fsync", daemon=True)
                self._thread.start()
            self._wake.notify()

    def _run(self) -> None:
        while True:
            with self._wake:
                while not self._dirty:
                    self._wake.wait()
                # Gather what comes within GATHER: one fsync for a burst of appends,
                # and fewer appends that have to wait for a page being written out.
                deadline = time.monotonic() + GATHER
                while (left := deadline - time.monotonic()) > 0:
                    self._wake.wait(left)
                writers, self._dirty = list(self._dirty.values()), {}
            for writer in writers:
                writer.sync()


FLUSHER = Flusher()


class JournalWriter:
    """Appends records to one journal; holds its lock until ``close``."""

    def __init__(
        self, path: Path, *, secret: str | None, create: bool, flusher: Flusher = FLUSHER
    ) -> None:
        flags = os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC | (os.O_CREAT | os.O_EXCL if create else 0)
        self.path = path
        self._secret = secret
        self._flusher = flusher
        self._fd = os.open(path, flags, 0o600)
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self._fd)
            raise JournalLocked(f"session {path.stem} is open in another agentls server") from None
        except BaseException:
            os.close(self._fd)
            raise
        self._size = os.fstat(self._fd).st_size
        # fsync and close never overlap (the fd could be reused); appends do not wait.
        self._sync_lock = threading.Lock()
        self._synced = threading.Condition(self._sync_lock)
        self._durable = self._size  # bytes known to be on the disk

    def cut_to(self, size: int) -> None:
        """Drop a torn last line (``size``: where the last whole line ends)."""
        if size < self._size:
            os.ftruncate(self._fd, size)
            self._size = size
            self.sync()

    def append(self, *records: Record) -> int:
        """Write the records (fsynced soon after, on the flusher's thread);
        the number of bytes written."""
        data = encode(records, self._secret)
        view = memoryview(data)
        try:
            while view:
                written = os.write(self._fd, view)
                view = view[written:]
        except OSError:
            # Never leave half a line behind (the disk is full, say): the
            # journal stays readable up to its last whole record.
            try:
                os.ftruncate(self._fd, self._size)
            except OSError:
                pass
            raise
        self._size += len(data)
        self._flusher.request(self)
        return len(data)

    def sync(self) -> None:
        """fsync what has been written so far (the flusher calls this)."""
        with self._sync_lock:
            size = self._size
            if self._fd < 0 or size <= self._durable:
                return
            try:
                # The data and the size (all a reader needs); not the mtime.
                os.fdatasync(self._fd)
            except OSError as exc:
                log.warning("could not fsync %s: %s", self.path.name, exc)
                return
            self._durable = size
            self._synced.notify_all()

    def wait_durable(self, timeout: float) -> bool:
        """Wait until everything appended so far is fsynced (benchmarks, tests)."""
        with self._synced:
            size = self._size
            return self._synced.wait_for(lambda: self._durable >= size or self._fd < 0, timeout)

    def close(self) -> None:
        self.sync()
        with self._sync_lock:
            if self._fd >= 0:
                os.close(self._fd)  # releases the lock
                self._fd = -1
                self._synced.notify_all()


@dataclass
class Contents:
    """A journal as read: its records, where its last whole line ends, and
    what was wrong with it that could be repaired."""

    records: list[Record]
    size: int
    notes: list[str] = field(default_factory=list)


def read(path: Path) -> Contents:
    """Every whole record of a journal. Raises FileNotFoundError, or
    JournalError for a journal that is not ours, from a newer agentls, or
    damaged before its last line."""
    data = path.read_bytes()
    end = data.rfind(b"\n") + 1
    notes = []
    if end < len(data):
        notes.append("its last record was cut short (the server stopped while writing it)")
    records: list[Record] = []
    for number, line in enumerate(data[:end].splitlines(), 1):
        try:
            record = json.loads(line)
        except ValueError:
            raise JournalError(f"line {number} is damaged (not JSON)") from None
        if not isinstance(record, dict) or not isinstance(record.get("t"), str):
            raise JournalError(f"line {number} is not a session record")
        records.append(record)
    if not records:
        raise JournalError("it is empty")
    check_header(records[0])
    return Contents(records, end, notes)


def check_header(header: Record) -> None:
    if header.get("t") != "header" or header.get("format") != FORMAT:
        raise JournalError("it is not an agentls session")
    version = header.get("version")
    if not isinstance(version, int) or version > VERSION:
        raise JournalError(
            f"it was written by a newer agentls (format version {version}; "
            f"this one reads version {VERSION})"
        )


def iso(timestamp: float) -> str:
    """ISO 8601, UTC, to the second."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(timestamp))


def parse_iso(value: Any) -> float:
    """The timestamp of an ``iso`` string (0 for anything else)."""
    if isinstance(value, str):
        try:
            return float(calendar.timegm(time.strptime(value, "%Y-%m-%dT%H:%M:%SZ")))
        except ValueError:
            pass
    return 0.0
