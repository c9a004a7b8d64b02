"""What the fake records of every request it receives."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Self

from .script import Reply
from .strict import Refusal
from .waiting import Notifier


@dataclass(eq=False)
class RecordedRequest:
    """One HTTP request the fake received, and what became of it.

    ``index`` counts requests from 0; ``path`` has no query string (that is
    ``query``); ``headers`` has lower-case names; ``body`` is the parsed JSON
    object (``{}`` if there was none or it did not parse; ``raw_body`` has the
    bytes). Times are ``time.perf_counter_ns()``: ``t_arrival_ns`` when the
    request head had arrived, ``t_first_delta_ns`` when the first
    ``response.output_text.delta`` was written, ``t_done_ns`` when the fake
    finished with it. ``status`` is the HTTP status sent, ``reply`` the reply
    used, ``completed`` whether the whole reply was sent through the end of the
    HTTP body, ``aborted`` whether the client went away before that,
    ``refusal`` the error strict mode answered with instead of a reply (the
    request consumed no scripted reply), and ``error`` why the fake could not
    answer (e.g. script exhausted).
    """

    index: int
    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: dict[str, Any]
    raw_body: bytes = field(repr=False)
    t_arrival_ns: int
    connection: int = 0
    """Which client connection carried the request (1, 2, ... per fake)."""
    t_first_delta_ns: int | None = None
    t_done_ns: int | None = None
    status: int | None = None
    reply: Reply | None = field(default=None, repr=False)
    aborted: bool = False
    completed: bool = False
    refusal: Refusal | None = None
    error: str | None = None
    _notifier: Notifier = field(default_factory=Notifier, repr=False)

    @property
    def stream(self) -> bool:
        """Whether the client asked for a streamed answer."""
        return self.body.get("stream") is True

    @property
    def refused(self) -> bool:
        """Whether strict mode refused the request (see ``refusal``)."""
        return self.refusal is not None

    @property
    def done(self) -> bool:
        """Whether the fake has finished with this request (however it ended)."""
        return self.t_done_ns is not None

    @property
    def input(self) -> list[dict[str, Any]]:
        """The request's ``input`` items (a string input becomes one user message)."""
        value = self.body.get("input")
        if isinstance(value, str):
            return [{"role": "user", "content": value}]
        return list(value) if isinstance(value, list) else []

    async def wait_done(self, timeout: float | None = 5.0) -> Self:
        """Wait until the fake has finished with this request; TimeoutError otherwise."""
        await self._notifier.wait_for(lambda: self.done, timeout, f"request #{self.index} to end")
        return self

    def wait_done_blocking(self, timeout: float | None = 5.0) -> Self:
        self._notifier.wait_for_blocking(
            lambda: self.done, timeout, f"request #{self.index} to end"
        )
        return self
