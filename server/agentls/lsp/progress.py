"""Work-done progress for turns: ``begin`` once, ``report`` what the agent
does now, exactly one ``end``, then the token is forgotten."""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from lsprotocol import types as lsp
from pygls.progress import Progress

from agentls.agent import events as ev
from agentls.tools.base import shorten

log = logging.getLogger(__name__)

THINKING = "Thinking…"
WRITING = "Writing answer"


class TurnProgress:
    """The progress of one turn on one token."""

    __slots__ = ("_ended", "_last", "_on_cancel", "_progress", "token")

    def __init__(self, progress: Progress, token: int | str) -> None:
        self._progress = progress
        self.token = token
        self._last: str | None = None
        self._ended = False
        self._on_cancel: Callable[[], None] | None = None

    def begin(self, title: str, message: str, on_cancel: Callable[[], None]) -> None:
        self._on_cancel = on_cancel
        self._last = message
        self._progress.begin(
            self.token,
            lsp.WorkDoneProgressBegin(title=title, cancellable=True, message=message),
        )
        # window/workDoneProgress/cancel only cancels this future; we turn it
        # into a cancel of the turn itself.
        future: Future[Any] = self._progress.tokens[self.token]
        future.add_done_callback(self._cancelled)

    def _cancelled(self, future: Future[Any]) -> None:
        if future.cancelled() and not self._ended and self._on_cancel is not None:
            self._on_cancel()

    def report(self, message: str) -> None:
        if self._ended or message == self._last:
            return
        self._last = message
        self._progress.report(self.token, lsp.WorkDoneProgressReport(message=message))

    def end(self, message: str) -> None:
        if self._ended:
            return
        self._ended = True
        self._progress.end(self.token, lsp.WorkDoneProgressEnd(message=message))
        self._progress.tokens.pop(self.token, None)


def describe(event: ev.AgentEvent) -> str | None:
    """What the agent is doing now, in a few words, or None to keep the last message."""
    match event:
        case (
            ev.TurnStarted()
            | ev.ReasoningDelta()
            | ev.ToolFinished()
            | ev.SteerApplied()
            | ev.CompactionFinished()
        ):
            return THINKING
        case ev.TextDelta():
            return WRITING
        case ev.ToolStarted():
            return event.title
        case ev.ModelRetry():
            return (
                f"Model unavailable, retrying in {event.delay:.0f} s "
                f"(attempt {event.attempt + 1} of {event.max_attempts})"
            )
        case ev.ToolPreparing():
            return event.title
        case ev.CompactionStarted():
            return "Compacting the conversation…"
        case ev.PlanUpdated():
            current = next((s.step for s in event.plan if s.status == "in_progress"), None)
            return f"Plan: {shorten(current, 60)}" if current else None
    return None


def end_message(status: str, error: str | None) -> str:
    if status == "completed":
        return "Done"
    if status == "cancelled":
        return "Cancelled"
    return f"Failed: {shorten(error or 'unknown error', 120)}"
