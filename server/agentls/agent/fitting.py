"""Fitting the conversation into the context window: compacting it when the
next request would cross the threshold (``autoCompact``), when the model says
it does not fit, or when the user asks (``agent/compact``)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

import anyio

from agentls.agent import compaction
from agentls.agent.compaction import CompactionMode
from agentls.agent.events import CompactionFinished, CompactionStarted
from agentls.agent.history import History
from agentls.agent.requests import Requests
from agentls.agent.stream import EventStream
from agentls.config import AgentConfig
from agentls.model.client import ResponsesClient
from agentls.model.types import QuietSink, Retry, Usage

log = logging.getLogger(__name__)

# The compaction threshold when ``autoCompact`` is off and the model says the
# conversation no longer fits: compact to below this share of the window.
_OVERFLOW_SHARE = 0.85


@dataclass(slots=True)
class CompactionJob:
    """An ``agent/compact``: run by the owner task between turns."""

    focus: str | None
    done: anyio.Event = field(default_factory=anyio.Event)
    outcome: tuple[int, int, CompactionMode] | None = None
    error: Exception | None = None

    async def result(self) -> tuple[int, int, CompactionMode]:
        """Tokens before and after, and the mode ("summary" or "trim")."""
        await self.done.wait()
        if self.error is not None:
            raise self.error
        assert self.outcome is not None
        return self.outcome


class Compactor:
    """Compacts one conversation, reporting it on the agent's event stream."""

    def __init__(
        self,
        model: ResponsesClient,
        config: AgentConfig,
        history: History,
        requests: Requests,
        events: EventStream,
    ) -> None:
        self._model = model
        self._config = config
        self._history = history
        self._requests = requests
        self._events = events

    def due(self) -> bool:
        """Whether the next request would cross the ``autoCompact`` threshold."""
        share = self._config.auto_compact
        if share <= 0:
            return False
        return self._requests.context_size().tokens > self._requests.context_window * share

    async def compact(
        self, reason: str, turn_id: int | None, sink: Any, focus: str | None = None
    ) -> tuple[int, int, CompactionMode, Usage]:
        """Compact the conversation (on the owner task, between steps)."""
        requests = self._requests
        before = requests.context_size().tokens
        if not len(self._history):
            return before, before, "trim", Usage()
        self._events.send(CompactionStarted(turn_id=turn_id, reason=reason, before_tokens=before))
        window = requests.context_window
        share = self._config.auto_compact if self._config.auto_compact > 0 else _OVERFLOW_SHARE
        budget = compaction.Budget(window, int(window * share), requests.meter.offset)
        summariser = compaction.Summariser(self._model, requests.request(), _RetryOnlySink(sink))
        result = await compaction.compact(
            self._history.items(),
            fixed=requests.fixed_tokens(),
            budget=budget,
            summarise=summariser,
            focus=focus,
        )
        self._history.replace(result.items)
        requests.meter.reset()
        requests.reload_project()
        after = requests.context_size().tokens
        log.info("compacted the conversation (%s): %d -> %d tokens", result.mode, before, after)
        self._events.send(
            CompactionFinished(
                turn_id=turn_id,
                before_tokens=before,
                after_tokens=after,
                mode=result.mode,
                summary=result.summary,
            )
        )
        return before, after, result.mode, result.usage


class _RetryOnlySink(QuietSink):
    """What a compaction's summary request shows: only that it is retried."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def retrying(self, retry: Retry) -> None:
        self._inner.retrying(retry)
