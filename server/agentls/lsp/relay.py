"""The event relay: the service's events → ``agent/event`` notifications
(the LSP face's ``EventSink``).

Each pane has one channel with its own ``seq`` (contiguous for the life of
the pane, across a new session or a fork promoted to main). Text deltas are
coalesced: the first one of a burst goes out at once (first-word latency), the
rest of the burst is joined and sent when the 20 ms window closes or when any
other event comes — so nothing is reordered or lost, and a fast model sends at
most about fifty notifications a second per pane instead of thousands.

Every notification sent is also kept, per pane and bounded, for
``agent/history``: a client that reloads or reconnects asks for the events
after the last ``seq`` it has and then applies the live ones after them —
gap-free and duplicate-free. What is kept starts at the pane's current
session (its ``pane.opened`` or ``session.resumed``, which carry the
conversation so far as ``entries``).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agentls.agent import events as ev
from agentls.protocol import convert
from agentls.service.events import PaneClosed, PaneEvent, PaneOpened

log = logging.getLogger(__name__)

WINDOW = 0.020  # seconds: the longest a delta may wait to be joined with the next
# What ``agent/history`` can give back, per pane: the newest events up to both bounds.
HISTORY_EVENTS = 10_000
HISTORY_BYTES = 16 << 20
_COALESCED = (ev.TextDelta, ev.ReasoningDelta, ev.ToolOutput)

Notify = Callable[[dict[str, Any]], None]
Observer = Callable[[str, ev.AgentEvent], None]


@dataclass
class _Channel:
    """The outgoing side of one pane."""

    name: str
    seq: int = 0
    # A burst of deltas being joined: (kind, turn id, call id) and its texts.
    pending_key: tuple[str, int | None, str | None] | None = None
    pending: list[str] = field(default_factory=list)
    window_ends: float = 0.0
    timer: asyncio.TimerHandle | None = None
    # The events sent since the pane's session started, newest last (seq contiguous).
    sent: deque[dict[str, Any]] = field(default_factory=deque)
    sent_bytes: int = 0
    # The newest seq dropped to keep the bounds (0: none of this session's).
    dropped: int = 0

    def keep(self, params: dict[str, Any], start: bool = False) -> None:
        if start:  # a new session: what came before is another conversation
            self.sent.clear()
            self.sent_bytes = 0
            self.dropped = 0
        self.sent.append(params)
        self.sent_bytes += _weight(params)
        while len(self.sent) > 1 and (
            len(self.sent) > HISTORY_EVENTS or self.sent_bytes > HISTORY_BYTES
        ):
            old = self.sent.popleft()
            self.sent_bytes -= _weight(old)
            self.dropped = old["seq"]


def _weight(params: dict[str, Any]) -> int:
    """Roughly what an event costs to keep (its text dominates)."""
    weight = 200 + len(params.get("text") or "")
    for entry in params.get("entries") or ():
        weight += 100 + len(entry.get("text") or "")
    return weight


@dataclass(frozen=True, slots=True)
class Retained:
    events: list[dict[str, Any]]
    last_seq: int
    complete: bool


class EventRelay:
    def __init__(self, notify: Notify, observe: Observer) -> None:
        self._notify = notify
        self._observe = observe
        self._channels: dict[str, _Channel] = {}

    def channel(self, pane: str) -> _Channel:
        channel = self._channels.get(pane)
        if channel is None:
            channel = self._channels[pane] = _Channel(pane)
        return channel

    def flush_all(self) -> None:
        for pane in list(self._channels):
            self.flush(pane)

    # --- what the service tells (the face's EventSink) -----------------------------------

    def pane_changed(self, pane: str, event: PaneEvent) -> None:
        if isinstance(event, PaneOpened):
            self.pane_event(
                pane,
                "pane.opened",
                start=True,
                sessionId=event.session_id,
                entries=event.entries,
                items=event.items,
                promotedFrom=event.promoted_from,
            )
        elif isinstance(event, PaneClosed):
            self.pane_event(pane, "pane.closed", promotedTo=event.promoted_to)
        else:
            self.pane_event(
                pane,
                "session.resumed",
                start=True,
                sessionId=event.session_id,
                title=event.title,
                turns=event.turns,
                entries=event.entries,
                interrupted=event.interrupted,
                unsent=event.unsent,
                notice=event.notice,
            )

    # --- sending -------------------------------------------------------------------

    def forward(self, pane: str, event: ev.AgentEvent) -> None:
        channel = self.channel(pane)
        if isinstance(event, _COALESCED):
            self._delta(channel, event)
        else:
            self.flush(pane)
            channel.seq += 1
            self._send(channel, convert.event_params(pane, channel.seq, event))
        # After the event: its progress report (if any) never holds it back.
        self._observe(pane, event)

    def _delta(
        self, channel: _Channel, event: ev.TextDelta | ev.ReasoningDelta | ev.ToolOutput
    ) -> None:
        call_id = event.call_id if isinstance(event, ev.ToolOutput) else None
        key = (event.kind, event.turn_id, call_id)
        now = time.monotonic()
        if channel.pending_key == key:
            channel.pending.append(event.text)
            return
        self.flush(channel.name)
        if now >= channel.window_ends:
            # Leading edge: the first delta of a burst goes out at once...
            self._send_delta(channel, key, event.text)
            channel.window_ends = now + WINDOW
            channel.pending_key = key
            channel.pending = []
        else:
            channel.pending_key = key
            channel.pending = [event.text]
        # ...and the rest of the window is joined and sent when it closes.
        loop = asyncio.get_running_loop()
        channel.timer = loop.call_at(
            loop.time() + max(channel.window_ends - now, 0.0), self._window_closed, channel
        )

    def _window_closed(self, channel: _Channel) -> None:
        channel.timer = None
        self.flush(channel.name)

    def flush(self, pane: str) -> None:
        """Send the pane's joined deltas, if any."""
        channel = self._channels.get(pane)
        if channel is None:
            return
        if channel.timer is not None:
            channel.timer.cancel()
            channel.timer = None
        key, texts = channel.pending_key, channel.pending
        channel.pending_key, channel.pending = None, []
        if key is not None and texts:
            self._send_delta(channel, key, "".join(texts))
            channel.window_ends = time.monotonic() + WINDOW

    def _send_delta(
        self, channel: _Channel, key: tuple[str, int | None, str | None], text: str
    ) -> None:
        kind, turn_id, call_id = key
        channel.seq += 1
        self._send(
            channel, convert.delta_params(channel.name, channel.seq, kind, turn_id, text, call_id)
        )

    def pane_event(self, pane: str, kind: str, *, start: bool = False, **fields: Any) -> None:
        """``pane.opened`` / ``pane.closed`` / ``session.resumed`` (turnId null), in
        order with the pane's events. ``start``: the event starts a session (what
        ``agent/history`` keeps begins with it)."""
        self.flush(pane)
        channel = self.channel(pane)
        channel.seq += 1
        self._send(channel, convert.pane_event(pane, channel.seq, kind, **fields), start)

    def _send(self, channel: _Channel, params: dict[str, Any], start: bool = False) -> None:
        channel.keep(params, start)
        self._notify(params)

    # --- agent/history ----------------------------------------------------------------

    def history(self, pane: str, since: int) -> Retained:
        """The pane's kept events with ``seq > since``, in order; ``complete``
        is false when some of them were dropped to keep the bounds. (Drain
        the pane's agents first: everything emitted so far is then kept.)"""
        channel = self._channels.get(pane)
        if channel is None or not channel.sent:
            return Retained([], channel.seq if channel else 0, True)
        first = channel.sent[0]["seq"]
        skip = max(0, since - first + 1)
        events = list(itertools.islice(channel.sent, skip, None))
        return Retained(events, channel.seq, channel.dropped <= since)
