"""Reading a journal back: its records, replayed into a conversation, and the
repair of a session whose server stopped in the middle of a turn.

Records (one JSON object per line, ``t`` says which):

``header``    first line: format, version, sessionId, createdAt, title, model,
              workspace, parent (a fork's origin), turns (inherited by a fork)
``settings``  effort, fastMode, approval, webSearch (at the start and at every change)
``turn``      a turn started (its prompt follows in a ``commit``)
``commit``    a committed step: its items, and ``m`` (the roles of the
              people's messages in it: "user", "steer", "summary")
``step``      a model response whose tool calls are about to run
``output``    one of those calls answered
``seal``      the step in progress is committed, with these items after it
``replace``   the whole conversation replaced (a compaction)
``repair``    the step in progress is dropped, these items committed instead
``end``       the turn ended (status)
``pending``   prompts queued behind the turn and steers the model has not seen
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentls.agent import snapshot as snapshots
from agentls.agent.errors import InvalidSnapshot
from agentls.agent.settings import Settings
from agentls.model.types import Item
from agentls.sessions.journal import JournalError, Record

INTERRUPTED_OUTPUT = (
    "interrupted: the agentls server stopped before this tool call finished; "
    "it may or may not have taken effect"
)

Marks = dict[int, str]


@dataclass
class Replayed:
    """A session's state as its journal says."""

    header: Record
    settings: Settings
    items: list[Item] = field(default_factory=list)
    marks: Marks = field(default_factory=dict)
    turns: int = 0
    # A turn started and never ended: the server stopped under it.
    open_turn: bool = False
    # The step in progress: a model response and the outputs of its calls so far.
    step: list[Item] | None = None
    queued: list[str] = field(default_factory=list)
    steers: list[str] = field(default_factory=list)


def replay(records: Sequence[Record]) -> Replayed:
    """The state the records describe; JournalError if they make no sense."""
    header = records[0]
    state: Replayed | None = None
    for number, record in enumerate(records[1:], 2):
        try:
            state = _apply(state, header, record)
        except (KeyError, TypeError, ValueError, AttributeError, InvalidSnapshot) as exc:
            raise JournalError(f"line {number} ({record.get('t')}) is malformed: {exc}") from None
    if state is None:
        raise JournalError("it has no settings")
    state.turns += _int(header.get("turns", 0))
    return state


def _apply(state: Replayed | None, header: Record, record: Record) -> Replayed:
    kind = record["t"]
    if kind == "settings":
        settings = snapshots.load_settings(record)
        if state is None:
            return Replayed(header, settings)
        state.settings = settings
        return state
    if state is None:
        raise ValueError("it comes before the session's settings")
    if kind == "turn":
        if state.open_turn:
            _drop_step(state)  # an older interruption that was never repaired
        state.open_turn = True
        state.turns += 1
    elif kind in ("commit", "seal", "repair"):
        if kind == "seal" and state.step is not None:
            _extend(state, state.step, None)
        elif kind == "commit":
            _drop_step(state)
        state.step = None
        _extend(state, _items(record), record.get("m"))
    elif kind == "replace":
        state.items, state.marks, state.step = [], {}, None
        _extend(state, _items(record), record.get("m"))
    elif kind == "step":
        state.step = list(_items(record))
    elif kind == "output":
        if state.step is None:
            raise ValueError("a tool output with no step in progress")
        item = record["item"]
        if not isinstance(item, dict):
            raise TypeError("the output is not an object")
        state.step.append(item)
    elif kind == "end":
        state.open_turn = False
        _drop_step(state)
    elif kind == "pending":
        state.queued = _texts(record["queued"])
        state.steers = _texts(record["steers"])
    # Other kinds are additions of a later version 1: nothing to replay.
    return state


def _drop_step(state: Replayed) -> None:
    state.step = None


def _extend(state: Replayed, items: list[Item], marks: Any) -> None:
    base = len(state.items)
    state.items.extend(items)
    if marks:
        for index, mark in dict(marks).items():
            state.marks[base + int(index)] = str(mark)


def _items(record: Record) -> list[Item]:
    items = record["items"]
    if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
        raise TypeError("items must be a list of objects")
    return items


def _texts(value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(text, str) for text in value):
        raise TypeError("expected a list of strings")
    return value


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def marks_record(marks: Marks, base: int, count: int) -> dict[str, str]:
    """The marks of items ``base .. base+count`` as a record's ``m`` (relative indices)."""
    return {str(i - base): marks[i] for i in range(base, base + count) if i in marks}


# --- repair ------------------------------------------------------------------------------


@dataclass
class Repair:
    """What resuming a session had to fix, and what the user must be told."""

    records: list[Record] = field(default_factory=list)
    interrupted: bool = False
    # Prompts that were queued when the server stopped: never sent to the model.
    unsent: list[str] = field(default_factory=list)
    notice: str | None = None


def repair(state: Replayed, title: Callable[[Item], str]) -> Repair:
    """Make a session the server stopped under resumable, in place: every tool
    call answered (as interrupted), the steers the model had not seen yet
    kept as messages, the turn ended. The records say the same for the
    journal; the notice says it for the user."""
    fixed = Repair()
    said: list[str] = []
    if state.step is not None:
        step, cut = _answer_open_calls(state.step)
        state.items.extend(step)
        state.step = None
        fixed.records.append({"t": "repair", "items": step})
        if cut:
            shown = ", ".join(f"“{title(call)}”" for call in cut)
            said.append(f"{shown} did not finish; the model is told it was interrupted.")
    if state.steers:
        # Only resuming repairs, and it loads the agent anyway; listing does not.
        from agentls.agent.items import user_message

        base = len(state.items)
        state.items.extend(user_message(text) for text in state.steers)
        for index in range(base, len(state.items)):
            state.marks[index] = "steer"
        fixed.records.append(
            {
                "t": "commit",
                "items": state.items[base:],
                "m": marks_record(state.marks, base, len(state.steers)),
            }
        )
        count = len(state.steers)
        said.append(
            f"{_plural(count, 'steer')} the model had not seen yet "
            f"{'is' if count == 1 else 'are'} kept: it gets "
            f"{'it' if count == 1 else 'them'} with your next prompt."
        )
    if state.open_turn:
        fixed.interrupted = True
        state.open_turn = False
        fixed.records.append({"t": "end", "status": "interrupted"})
        said.insert(0, "The last turn was interrupted: the agentls server stopped during it.")
    if state.queued:
        fixed.unsent = list(state.queued)
        shown = ", ".join(f"“{_short(text)}”" for text in state.queued)
        said.append(f"{_plural(len(state.queued), 'queued prompt')} never sent: {shown}.")
    if state.queued or state.steers:
        state.queued, state.steers = [], []
        fixed.records.append({"t": "pending", "queued": [], "steers": []})
    fixed.notice = " ".join(said) or None
    return fixed


def _answer_open_calls(step: list[Item]) -> tuple[list[Item], list[Item]]:
    """The step with an "interrupted" output for each unanswered call, and those calls."""
    unanswered = snapshots.unanswered_calls(step)
    outputs = [snapshots.synthesized_output(call, INTERRUPTED_OUTPUT) for call in unanswered]
    return step + outputs, unanswered


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _short(text: str, limit: int = 60) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
