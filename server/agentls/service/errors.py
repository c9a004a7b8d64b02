"""What the service could not do, by kind: each face answers a kind with its
own error (the LSP face with the wire schema's code); the message is for
people and may be reworded freely."""

from __future__ import annotations

from typing import Any

from agentls.domain import FailureKind
from agentls.worker.messages import Failure


class ServiceError(Exception):
    def __init__(self, kind: FailureKind, message: str, data: dict[str, Any] | None = None):
        super().__init__(message)
        self.kind: FailureKind = kind
        self.message = message
        self.data = data


def from_failure(failure: Failure) -> ServiceError:
    """The error for a command the worker could not carry out."""
    data = {"pane": failure.pane} if failure.pane is not None else None
    return ServiceError(failure.kind, failure.message, data)


def pane_unavailable(pane: str) -> ServiceError:
    from agentls.worker.messages import pane_unavailable as failure

    return from_failure(failure(pane))


def stopping(message: str = "the server is shutting down") -> ServiceError:
    return ServiceError("stopping", message)
