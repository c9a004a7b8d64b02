"""Model failures, classified so the caller knows whether to retry and what to tell the user."""

from __future__ import annotations

from typing import Literal

FailureKind = Literal[
    "auth",
    "invalid_request",
    "rate_limit",
    "server",
    "connection",
    "timeout",
    "stream",
    "refused",
    # No credit left (``insufficient_quota``, ``billing_hard_limit_reached``):
    # waiting does not help.
    "quota",
    # One request larger than the rate limit allows at all: it never succeeds as is.
    "too_large",
    # The conversation no longer fits the model's context window.
    "context_length",
    # The server does not take one of the request's parameters (``param`` names it).
    "unsupported",
    # The response stopped early (``response.incomplete``).
    "incomplete",
]

_RETRYABLE: frozenset[str] = frozenset({"rate_limit", "server", "connection", "timeout", "stream"})


class ModelError(Exception):
    """A model request failed. ``str(error)`` is a sentence for the user."""

    def __init__(
        self,
        kind: FailureKind,
        message: str,
        *,
        retry_after: float | None = None,
        param: str | None = None,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.retry_after = retry_after
        # The request parameter the server named (``error.param``), if any.
        self.param = param

    @property
    def retryable(self) -> bool:
        return self.kind in _RETRYABLE
