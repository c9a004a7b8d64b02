"""Soft cancellation of a submit (kept light: the protocol needs it from the
first message on)."""

from __future__ import annotations

from collections.abc import Callable


class SoftCancel:
    """``$/cancelRequest`` for a submit: cancels the turn, not the handler task,
    so the request is answered with the turn's (cancelled) result."""

    __slots__ = ("_callback", "requested")

    def __init__(self) -> None:
        self.requested = False
        self._callback: Callable[[], None] | None = None

    def request(self) -> None:
        self.requested = True
        if self._callback is not None:
            self._callback()

    def on_request(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` when cancellation is requested (now, if it already was)."""
        self._callback = callback
        if self.requested:
            callback()
