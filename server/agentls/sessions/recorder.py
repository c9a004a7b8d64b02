"""The recorder of one session: follows one agent and writes its journal.

A session reaches the disk only once it has something to keep (its first
turn, or a prompt waiting for one): an empty pane is no session worth
listing. From then on every change is appended and fsynced before the agent
goes on, so a ``kill -9`` loses at most the step in flight — and not even
that for a step's model response and finished tool calls, which are written
as they come (``step``, ``output``) and committed with one short ``seal``.

The recorder also knows which user messages were steers and which messages
are a compaction's summary (``marks``): what a client needs to show a
conversation it did not see happen (a fork's, a resumed one's).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

from agentls.agent.history import History
from agentls.agent.settings import Settings
from agentls.domain import TurnStatus
from agentls.model.types import Item
from agentls.sessions import entries
from agentls.sessions.journal import JournalWriter, Record, iso
from agentls.sessions.replay import Marks, marks_record

log = logging.getLogger(__name__)

TITLE_LIMIT = 60


def title_from(prompt: str) -> str:
    """A session's title: its first prompt's first line, shortened."""
    for line in prompt.splitlines():
        words = " ".join(line.split())
        if words:
            return words if len(words) <= TITLE_LIMIT else words[: TITLE_LIMIT - 1] + "…"
    return "(empty prompt)"


class Keeper(Protocol):
    """What a recorder needs of the store that keeps its session (``store``)."""

    model: str
    workspace: Path

    @property
    def enabled(self) -> bool: ...

    def recorder(
        self,
        *,
        parent: str | None = None,
        title: str | None = None,
        turns: int = 0,
        marks: Marks | None = None,
    ) -> SessionRecorder: ...

    def create(self, recorder: SessionRecorder) -> JournalWriter: ...

    def opened(self, recorder: SessionRecorder) -> None: ...

    def forget(self, recorder: SessionRecorder) -> None: ...

    def write_meta(self, recorder: SessionRecorder) -> None: ...


class SessionRecorder:
    def __init__(
        self,
        store: Keeper,
        session_id: str,
        *,
        created_at: float,
        title: str | None = None,
        parent: str | None = None,
        turns: int = 0,
        marks: Marks | None = None,
        writer: JournalWriter | None = None,
    ) -> None:
        self._store = store
        self._session_id = session_id
        self.created_at = created_at
        self.title = title
        self.parent = parent
        # Turns started in this session (a fork counts those it inherited).
        self.turns = turns
        self.inherited_turns = turns
        self.marks: Marks = dict(marks or {})
        # A resumed session's journal is open already; a new one's is made on first need.
        self._writer = writer
        self._broken = False
        self._closed = False
        self._history: History | None = None
        self._settings = Settings()
        self._in_turn = False
        self._expect_prompt = False
        # The step in progress: the model response and the outputs so far (the
        # very objects the agent will commit, so the commit is recognised).
        self._step: list[Item] | None = None
        self._waiting: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())
        self._base: list[Item] = []
        self._later: list[Item] = []

    # --- the Recorder interface -------------------------------------------------------

    @property
    def session_id(self) -> str:
        return self._session_id

    @property
    def saved(self) -> bool:
        """True once the session is on disk."""
        return self._writer is not None

    @property
    def writer(self) -> JournalWriter | None:
        return self._writer

    def attach(self, history: History, settings: Settings) -> None:
        self._history = history
        self._settings = settings
        # The conversation as of now (a cheap reference), and what is committed
        # after: what a compaction's messages are compared with.
        self._base = history.items()

    def turn_started(self, turn_id: int, prompt: str) -> None:
        self.turns += 1
        self._in_turn = True
        self._expect_prompt = True
        if self.title is None:
            self.title = title_from(prompt)
        records: list[Record] = [{"t": "turn", "turnId": turn_id}]
        queued, steers = self._waiting
        if queued and queued[0] == prompt:
            # The prompt left the queue: said in the same write.
            self._waiting = (queued[1:], steers)
            records.append({"t": "pending", "queued": list(queued[1:]), "steers": list(steers)})
        self._write(*records)
        self._store.write_meta(self)

    def committed(self, items: tuple[Item, ...]) -> None:
        base = len(self._history or ()) - len(items)
        self._later.extend(items)
        self._mark(base, items)
        step = self._step
        self._step = None
        if step is not None and len(items) >= len(step) and all(map(_same, items, step)):
            extra = list(items[len(step) :])
            record: Record = {"t": "seal", "items": extra}
            marks = marks_record(self.marks, base + len(step), len(extra))
        else:
            record = {"t": "commit", "items": list(items)}
            marks = marks_record(self.marks, base, len(items))
        if marks:
            record["m"] = marks
        self._write(record, before=base)

    def replaced(self, items: tuple[Item, ...]) -> None:
        # A compaction keeps some messages word for word (the user's own, or
        # everything when it only trims tool outputs): those keep their role.
        # Any other message is the summary.
        known: dict[tuple[object, str], str] = {}
        for index, item in enumerate([*self._base, *self._later]):
            if item.get("type") == "message":
                role = item.get("role")
                known[(role, entries.message_text(item))] = self.marks.get(index, str(role))
        self._base, self._later = list(items), []
        self.marks = {}
        for index, item in enumerate(items):
            if item.get("type") != "message":
                continue
            mark = known.get((item.get("role"), entries.message_text(item)))
            if mark is None:
                self.marks[index] = "summary"
            elif mark not in ("user", "assistant"):
                self.marks[index] = mark
        self._step = None
        record: Record = {"t": "replace", "items": list(items)}
        marks = marks_record(self.marks, 0, len(items))
        if marks:
            record["m"] = marks
        self._write(record, before=0)

    def step_started(self, items: Sequence[Item]) -> None:
        self._step = list(items)
        self._write({"t": "step", "items": list(items)})

    def tool_answered(self, item: Item) -> None:
        if self._step is not None:
            self._step.append(item)
        self._write({"t": "output", "item": item})

    def turn_finished(self, turn_id: int, status: TurnStatus) -> None:
        self._in_turn = False
        self._expect_prompt = False
        self._write({"t": "end", "turnId": turn_id, "status": status})

    def waiting(self, queued: Sequence[str], steers: Sequence[str]) -> None:
        now = (tuple(queued), tuple(steers))
        if now == self._waiting:
            return
        self._waiting = now
        if self.title is None and queued:
            self.title = title_from(queued[0])
        if self._writer is None and not (queued or steers):
            return  # nothing kept yet, nothing waiting: still nothing to save
        self._write({"t": "pending", "queued": list(queued), "steers": list(steers)})

    def settings_changed(self) -> None:
        if self._writer is not None:
            self._write(self._settings_record())

    def sibling(self, inherited: History, settings: Settings) -> SessionRecorder:
        if len(inherited) == 0:
            return self._store.recorder()
        title = self.title
        if title is not None and not title.endswith(" (fork)"):
            title += " (fork)"
        return self._store.recorder(
            parent=self._session_id,
            title=title,
            turns=self.turns,
            marks={i: m for i, m in self.marks.items() if i < len(inherited)},
        )

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._writer is not None:
            self._writer.close()
        self._store.forget(self)
        # No cycle through the history: a finished conversation is freed at
        # once, not by a full garbage collection (long for a long one).
        self._history, self._base, self._later = None, [], []

    # --- what clients see ---------------------------------------------------------------

    def entries(self, title: Callable[[Item], str]) -> list[entries.Entry]:
        return entries.build(list(self._history or ()), self.marks, title)

    # --- internals ----------------------------------------------------------------------

    def _mark(self, base: int, items: Sequence[Item]) -> None:
        for offset, item in enumerate(items):
            if item.get("type") != "message" or item.get("role") != "user":
                continue
            if self._expect_prompt:
                self._expect_prompt = False  # the turn's own prompt
            elif self._in_turn:
                self.marks[base + offset] = "steer"

    def _settings_record(self) -> Record:
        settings = self._settings
        return {
            "t": "settings",
            "effort": settings.effort,
            "fastMode": settings.fast_mode,
            "approval": settings.approval,
            "webSearch": settings.web_search,
        }

    def _write(self, *records: Record, before: int | None = None) -> None:
        """Append records, creating the journal first if need be (``before``:
        how many of the history's items precede them, when they add items)."""
        if self._broken or self._closed or not self._store.enabled:
            return
        try:
            if self._writer is None:
                self._writer = self._store.create(self)
                opening = self._opening(before)
                self._writer.append(*opening, *records)
                self._store.opened(self)
            else:
                self._writer.append(*records)
        except OSError as exc:
            self._broken = True
            log.warning(
                "session %s is no longer saved: %s (the conversation goes on)",
                self._session_id,
                exc,
            )

    def _opening(self, before: int | None) -> list[Record]:
        items = list(self._history or ())
        if before is not None:
            items = items[:before]
        header: Record = {
            "t": "header",
            "format": "agentls.session",
            "version": 1,
            "sessionId": self._session_id,
            "createdAt": iso(self.created_at),
            "title": self.title,
            "model": self._store.model,
            "workspace": str(self._store.workspace),
            "turns": self.inherited_turns,
        }
        if self.parent is not None:
            header["parent"] = self.parent
        opening = [header, self._settings_record()]
        if items:
            commit: Record = {"t": "commit", "items": items}
            marks = marks_record(self.marks, 0, len(items))
            if marks:
                commit["m"] = marks
            opening.append(commit)
        return opening


def _same(a: Item, b: Item) -> bool:
    return a is b
