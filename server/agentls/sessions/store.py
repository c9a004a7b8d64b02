"""One workspace's sessions: create, list, resume, delete, and keep their number bounded.

Each session is two files in the workspace's folder (``paths.workspace_folder``):
``ID.jsonl``, the journal (the truth), and ``ID.json``, a small summary
(title, creation time, turns) so that listing reads a few hundred bytes per
session rather than whole conversations. The summary is rewritten atomically
when it changes; a missing or damaged one is rebuilt from the journal.
A session's last change is its journal's modification time.

Everything here is plain file I/O, safe to call from a worker thread.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import re
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentls.agent import snapshot as snapshots
from agentls.agent.errors import InvalidSnapshot
from agentls.agent.settings import Settings
from agentls.model.types import Item
from agentls.sessions import journal
from agentls.sessions.journal import JournalError, JournalLocked, JournalWriter, iso, parse_iso
from agentls.sessions.recorder import SessionRecorder, title_from
from agentls.sessions.replay import Marks, Repair, repair, replay

log = logging.getLogger(__name__)

DEFAULT_RETENTION = 200
META_FORMAT = "agentls.session-summary"
_ID = re.compile(r"[0-9a-f]{32}")


class SessionNotFound(Exception):
    """No such session in this workspace, or it cannot be read (the message says which)."""


class SessionBusy(Exception):
    """The session is open (in a pane here, or in another agentls server)."""


@dataclass(frozen=True, slots=True)
class SessionInfo:
    session_id: str
    title: str
    created_at: str
    updated_at: str
    turns: int
    # Why the session cannot be resumed, for an unreadable one.
    error: str | None = None
    modified: float = 0.0

    def as_json(self) -> dict[str, object]:
        """As ``agent/sessions`` and ``agentls sessions --json`` show it."""
        out: dict[str, object] = {
            "sessionId": self.session_id,
            "title": self.title,
            "createdAt": self.created_at,
            "updatedAt": self.updated_at,
            "turns": self.turns,
        }
        if self.error is not None:
            out["error"] = self.error
        return out


@dataclass
class Resumed:
    """A session opened for a pane to continue, repaired if its server stopped under it."""

    recorder: SessionRecorder
    settings: Settings
    items: list[Item]
    marks: Marks
    title: str
    turns: int
    repair: Repair
    notes: list[str] = field(default_factory=list)

    @property
    def notice(self) -> str | None:
        said = [f"The session's {note}; that record was dropped." for note in self.notes]
        if self.repair.notice:
            said.append(self.repair.notice)
        return " ".join(said) or None


class SessionStore:
    def __init__(
        self,
        folder: Path,
        *,
        workspace: Path,
        model: str = "",
        retention: int = DEFAULT_RETENTION,
        secret: str | None = None,
    ) -> None:
        self.folder = folder
        self.workspace = workspace
        self.model = model
        self.retention = retention
        self._secret = secret
        self._lock = threading.Lock()
        self._open: dict[str, SessionRecorder] = {}

    @property
    def enabled(self) -> bool:
        """A retention of 0 keeps no session at all."""
        return self.retention > 0

    # --- sessions of this server ---------------------------------------------------------

    def recorder(
        self,
        *,
        parent: str | None = None,
        title: str | None = None,
        turns: int = 0,
        marks: Marks | None = None,
    ) -> SessionRecorder:
        """A new session (nothing is written until it has something to keep)."""
        return SessionRecorder(
            self,
            uuid.uuid4().hex,
            created_at=time.time(),
            title=title,
            parent=parent,
            turns=turns,
            marks=marks,
        )

    def create(self, recorder: SessionRecorder) -> JournalWriter:
        """The journal of a session about to be written for the first time."""
        # Conversations hold what the workspace holds: for this user's eyes only.
        self.folder.parent.parent.parent.mkdir(parents=True, exist_ok=True)
        for folder in (self.folder.parent.parent, self.folder.parent, self.folder):
            folder.mkdir(exist_ok=True, mode=0o700)
        return JournalWriter(self._journal(recorder.session_id), secret=self._secret, create=True)

    def opened(self, recorder: SessionRecorder) -> None:
        """A new session is on disk: summarise it, and make room for it."""
        with self._lock:
            self._open[recorder.session_id] = recorder
        self.write_meta(recorder)
        self.prune()

    def forget(self, recorder: SessionRecorder) -> None:
        with self._lock:
            if self._open.get(recorder.session_id) is recorder:
                del self._open[recorder.session_id]

    def write_meta(self, recorder: SessionRecorder) -> None:
        """Rewrite a session's summary (at once: a listing after a crash must
        count the turn that was running)."""
        if not recorder.saved:
            return
        meta = {
            "format": META_FORMAT,
            "version": 1,
            "sessionId": recorder.session_id,
            "title": recorder.title,
            "createdAt": recorder.created_at,
            "turns": recorder.turns,
        }
        try:
            _write_atomically(self._meta(recorder.session_id), self._clean(json.dumps(meta)))
        except OSError as exc:  # the journal is the truth; listing rebuilds from it
            log.warning("could not write the summary of session %s: %s", recorder.session_id, exc)

    # --- every session of the workspace --------------------------------------------------

    def list(self, limit: int | None = None) -> list[SessionInfo]:
        """This workspace's sessions, most recently changed first; unreadable
        ones are listed too (with ``error``), so the user sees them."""
        found: list[SessionInfo] = []
        try:
            names = os.listdir(self.folder)
        except FileNotFoundError:
            return []
        for name in names:
            session_id, dot, ext = name.partition(".")
            if ext != "jsonl" or not dot or not _ID.fullmatch(session_id):
                continue
            info = self._info(session_id)
            if info is not None:
                found.append(info)
        found.sort(key=lambda info: info.modified, reverse=True)
        return found[:limit] if limit is not None else found

    def _info(self, session_id: str) -> SessionInfo | None:
        try:
            modified = os.stat(self._journal(session_id)).st_mtime
        except FileNotFoundError:
            return None  # deleted meanwhile
        meta = self._read_meta(session_id)
        if meta is None:
            try:
                meta = self._rebuild_meta(session_id)
            except (JournalError, OSError) as exc:
                log.warning("session %s is unreadable: %s", session_id, exc)
                return SessionInfo(
                    session_id,
                    f"(unreadable: {exc})",
                    iso(modified),
                    iso(modified),
                    0,
                    str(exc),
                    modified,
                )
        return SessionInfo(
            session_id,
            str(meta.get("title") or "(untitled)"),
            iso(float(meta["createdAt"])),
            iso(modified),
            int(meta["turns"]),
            None,
            modified,
        )

    def _read_meta(self, session_id: str) -> dict[str, Any] | None:
        try:
            meta = json.loads(self._meta(session_id).read_bytes())
        except (OSError, ValueError):
            return None
        valid = (
            isinstance(meta, dict)
            and meta.get("format") == META_FORMAT
            and meta.get("version") == 1
            and isinstance(meta.get("createdAt"), int | float)
            and isinstance(meta.get("turns"), int)
            and isinstance(meta.get("title"), str | None)
        )
        return meta if valid else None

    def _rebuild_meta(self, session_id: str) -> dict[str, Any]:
        contents = journal.read(self._journal(session_id))
        header = contents.records[0]
        turns = sum(1 for record in contents.records if record["t"] == "turn")
        turns += header["turns"] if isinstance(header.get("turns"), int) else 0
        title = header.get("title")
        meta = {
            "format": META_FORMAT,
            "version": 1,
            "sessionId": session_id,
            "title": title if isinstance(title, str) else None,
            "createdAt": parse_iso(header.get("createdAt")),
            "turns": turns,
        }
        log.info("rebuilt the summary of session %s from its journal", session_id)
        try:
            _write_atomically(self._meta(session_id), self._clean(json.dumps(meta)))
        except OSError:
            pass
        return meta

    # --- resume, delete ------------------------------------------------------------------

    def resume(self, session_id: str, title: Callable[[Item], str]) -> Resumed:
        """Open a stored session for a pane to continue. Raises SessionNotFound
        (also for an unreadable one) or SessionBusy."""
        path = self._checked(session_id)
        with self._lock:
            if session_id in self._open:
                raise SessionBusy(f"session {session_id} is open in this server")
        try:
            writer = JournalWriter(path, secret=self._secret, create=False)
        except FileNotFoundError:
            raise SessionNotFound(f"no session {session_id} in this workspace") from None
        except JournalLocked as exc:
            raise SessionBusy(str(exc)) from None
        try:
            resumed = self._load(session_id, writer, title)
        except BaseException:
            writer.close()
            raise
        with self._lock:
            if session_id in self._open:  # resumed twice at once: the first one wins
                writer.close()
                raise SessionBusy(f"session {session_id} is open in this server")
            self._open[session_id] = resumed.recorder
        return resumed

    def _load(
        self, session_id: str, writer: JournalWriter, title: Callable[[Item], str]
    ) -> Resumed:
        try:
            contents = journal.read(writer.path)
            state = replay(contents.records)
            fixed = repair(state, title)
            snapshots.check_items(state.items)
        except (JournalError, InvalidSnapshot) as exc:
            log.warning("session %s is unreadable: %s", session_id, exc)
            raise SessionNotFound(f"session {session_id} is unreadable: {exc}") from None
        header = state.header
        name = header.get("title")
        recorder = SessionRecorder(
            self,
            session_id,
            created_at=parse_iso(header.get("createdAt")),
            title=name if isinstance(name, str) else None,
            parent=header.get("parent") if isinstance(header.get("parent"), str) else None,
            turns=state.turns,
            marks=state.marks,
            writer=writer,
        )
        writer.cut_to(contents.size)
        if fixed.records:
            writer.append(*fixed.records)
        self.write_meta(recorder)
        return Resumed(
            recorder,
            state.settings,
            state.items,
            state.marks,
            recorder.title or "(untitled)",
            state.turns,
            fixed,
            contents.notes,
        )

    def delete(self, session_id: str) -> None:
        """Remove a session's files. Raises SessionNotFound or SessionBusy."""
        path = self._checked(session_id)
        with self._lock:
            if session_id in self._open:
                raise SessionBusy(f"session {session_id} is open in this server")
        self._remove(session_id, path)

    def _remove(self, session_id: str, path: Path) -> None:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except FileNotFoundError:
            raise SessionNotFound(f"no session {session_id} in this workspace") from None
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise SessionBusy(
                    f"session {session_id} is open in another agentls server"
                ) from None
            self._meta(session_id).unlink(missing_ok=True)
            path.unlink(missing_ok=True)
        finally:
            os.close(fd)

    def prune(self) -> None:
        """Delete the least recently changed sessions beyond the retention
        (never one that is open, here or in another server)."""
        if not self.enabled:
            return
        sessions = self.list()
        for info in sessions[self.retention :]:
            with self._lock:
                if info.session_id in self._open:
                    continue
            try:
                self._remove(info.session_id, self._journal(info.session_id))
                log.info("session %s deleted (retention %d)", info.session_id, self.retention)
            except (SessionBusy, SessionNotFound, OSError):
                pass

    # --- files ------------------------------------------------------------------------------

    def _clean(self, text: str) -> str:
        """The API key never reaches the disk (a title is a prompt, and prompts hold anything)."""
        return journal.redact(text, self._secret)

    def _checked(self, session_id: str) -> Path:
        if not _ID.fullmatch(session_id):
            raise SessionNotFound(f"{session_id!r} is not a session id")
        path = self._journal(session_id)
        if not path.exists():
            raise SessionNotFound(f"no session {session_id} in this workspace")
        return path

    def _journal(self, session_id: str) -> Path:
        return self.folder / f"{session_id}.jsonl"

    def _meta(self, session_id: str) -> Path:
        return self.folder / f"{session_id}.json"


def _write_atomically(path: Path, text: str) -> None:
    # No fsync: the summary can always be rebuilt from the journal, which is
    # fsynced; a summary lost to a power cut is noticed (invalid) and rebuilt.
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)
    os.replace(temporary, path)


__all__ = [
    "DEFAULT_RETENTION",
    "Resumed",
    "SessionBusy",
    "SessionInfo",
    "SessionNotFound",
    "SessionStore",
    "title_from",
]
