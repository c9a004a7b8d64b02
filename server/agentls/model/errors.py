"""Model failures, classified so the caller knows whether to retry and what to tell the user."""

from __future__ import annotations

from typing import Literal

FailureKind = Literal[
    "auth", "invalid_request", "rate_limit", "server", "connection", "timeout", "stream", "refused"
]

_RETRYABLE: frozenset[str] = frozenset({"rate_limit", "server", "connection", "timeout", "stream"})


class ModelError(Exception):
    """A model request failed. ``str(error)`` is a sentence for the user."""

    def __init__(
        self, kind: FailureKind, message: str, *, retry_after: float | None = None
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.retry_after = retry_after

    @property
    def retryable(self) -> bool:
        return self.kind in _RETRYABLE
