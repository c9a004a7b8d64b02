"""Which editor connection is current (``serve --listen``: editors one after
another), and what belongs to it. Kept apart from ``attach`` (which serves
the socket) so that the protocol can hold one without importing the server."""

from __future__ import annotations

from typing import Any


class Attachment:
    """Which editor connection is current, and what belongs to it."""

    def __init__(self) -> None:
        self.generation = 0
        self.attached = False
        # The current editor has sent initialize.
        self.ready = False
        # Progress tokens of editors that left: their progress is not sent on.
        self.stale_tokens: set[Any] = set()
        # Ids of the requests sent to the current editor.
        self.asked: set[Any] = set()

    def inbound(self, msg_id: Any) -> str:
        """The server's id for a request of the current editor."""
        return f"{self.generation}:{'s' if isinstance(msg_id, str) else 'n'}:{msg_id}"

    def outbound(self, internal: Any) -> Any | None:
        """The editor's id for an answer; None if the editor that asked has left."""
        if not isinstance(internal, str) or internal.count(":") < 2:
            return internal  # not a mapped id (an error answered before intake)
        generation, kind, raw = internal.split(":", 2)
        if generation != str(self.generation) or not self.attached:
            return None
        if kind == "n":
            try:
                return int(raw)
            except ValueError:
                return float(raw)
        return raw
