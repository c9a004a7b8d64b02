"""The service's events, typed: every agent event of a pane (``agent.events``)
and what happens to panes (opened, closed, a session resumed, a turn that
ended with nobody waiting for it). A face receives them through an
``EventSink`` — synchronously, in order, on the event loop: no queue of
ours between an agent and the face, so the first delta costs no extra hop.

``EventRoutes`` follows each agent's event stream under its pane's current
name (a fork promoted to main carries on under "main").
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Protocol

import anyio
import anyio.abc

from agentls.agent.events import AgentEvent
from agentls.agent.stream import EventStream
from agentls.worker.messages import TurnFinished

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class PaneOpened:
    """A session starts in the pane, with what it holds already."""

    session_id: str | None = None
    # The conversation the pane starts with (sessions.entries), None: not said.
    entries: list[dict[str, Any]] | None = None
    items: int | None = None
    promoted_from: str | None = None


@dataclass(frozen=True, slots=True)
class PaneClosed:
    promoted_to: str | None = None


@dataclass(frozen=True, slots=True)
class SessionResumed:
    """A stored session continues in the pane (after ``resume``)."""

    session_id: str
    title: str
    turns: int
    entries: list[dict[str, Any]]
    interrupted: bool
    unsent: list[str]
    notice: str | None = None


@dataclass(frozen=True, slots=True)
class TurnEnded:
    """A turn nobody holds a ticket for ended (a promoted steer's)."""

    finished: TurnFinished


PaneEvent = PaneOpened | PaneClosed | SessionResumed
ServiceEvent = AgentEvent | PaneEvent | TurnEnded


class EventSink(Protocol):
    """Where a face receives the service's events, each pane's in order."""

    def event(self, pane: str, event: AgentEvent) -> None:
        """One agent event of ``pane`` (the hot path: every delta comes here)."""
        ...

    def emit(self, pane: str, event: PaneEvent | TurnEnded) -> None:
        """What happened to ``pane`` (opened, closed, resumed, a turn ended)."""
        ...

    def flush(self, pane: str) -> None:
        """Nothing more of ``pane`` is at hand: send what is held back."""
        ...


@dataclass
class _Route:
    pane: str
    stream: EventStream


class EventRoutes:
    """Each agent's events, forwarded to the sink under its pane's name."""

    def __init__(self, sink: EventSink) -> None:
        self._sink = sink
        self._routes: list[_Route] = []
        self._group: anyio.abc.TaskGroup | None = None

    def bind(self, group: anyio.abc.TaskGroup) -> None:
        self._group = group

    def attach(self, pane: str, stream: EventStream) -> None:
        """Forward an agent's events under ``pane`` until its stream ends."""
        route = _Route(pane, stream)
        self._routes.append(route)
        sink = self._sink
        # The first event after a quiet moment comes straight from the agent.
        stream.direct = lambda event: sink.event(route.pane, event)
        assert self._group is not None
        self._group.start_soon(self._pump, route, name=f"events {pane}")

    def promote(self, old: str, new: str) -> None:
        """The fork ``old`` is now ``new``: its events continue under the new name."""
        self._sink.flush(old)
        self._sink.flush(new)
        for route in self._routes:
            if route.pane == old:
                route.pane = new

    async def _pump(self, route: _Route) -> None:
        stream, emit = route.stream, self._sink.event
        try:
            async for event in stream:
                emit(route.pane, event)
                # Take everything already queued in one go: fewer wake-ups.
                while True:
                    try:
                        event = stream.receive_nowait()
                    except anyio.WouldBlock:
                        break
                    emit(route.pane, event)
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            pass
        finally:
            stream.direct = None
            self._sink.flush(route.pane)
            self._routes.remove(route)

    def drain(self, pane: str) -> None:
        """Forward everything the pane's agents have emitted so far, right
        now, and flush: the face then holds every event before it answers."""
        for route in list(self._routes):
            if route.pane != pane:
                continue
            while True:
                try:
                    event = route.stream.receive_nowait()
                except (anyio.WouldBlock, anyio.EndOfStream, anyio.ClosedResourceError):
                    break
                self._sink.event(pane, event)
        self._sink.flush(pane)

    def drain_all(self) -> None:
        for pane in {route.pane for route in self._routes}:
            self.drain(pane)
