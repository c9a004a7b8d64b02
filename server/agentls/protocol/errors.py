"""Protocol errors: every failure has a kind, and one table — the wire
schema's ``x-errors`` (``schema/names.py``) — says which JSON-RPC code a kind
is answered with.

Nothing chooses a code by reading a message: messages are for people and may
be reworded at will. The worker's failure kinds (``worker.messages.Failure``)
are a subset of the kinds here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, get_args

from pygls.exceptions import JsonRpcException

from agentls.schema.names import CODES, NAMES, ErrorKind

if TYPE_CHECKING:
    from agentls.worker.messages import Failure

__all__ = ["ALL_KINDS", "CODES", "NAMES", "ErrorKind", "ProtocolError"]

# Every kind the wire schema gives a code (the worker's failure kinds among them).
ALL_KINDS: tuple[ErrorKind, ...] = get_args(ErrorKind)


class ProtocolError(JsonRpcException):
    """An error response: its code comes from its kind."""

    def __init__(self, kind: ErrorKind, message: str, data: Any = None) -> None:
        super().__init__(code=CODES[kind], message=message, data=data)
        self.kind = kind


def from_failure(failure: Failure) -> ProtocolError:
    """The error response for a command the worker could not carry out."""
    data = {"pane": failure.pane} if failure.pane is not None else None
    return ProtocolError(failure.kind, failure.message, data)


def invalid_params(message: str) -> ProtocolError:
    return ProtocolError("invalid_params", f"invalid params: {message}")


def invalid_request(message: str) -> ProtocolError:
    return ProtocolError("invalid_request", message)


def pane_unavailable(pane: str) -> ProtocolError:
    from agentls.worker.messages import pane_unavailable as failure

    return from_failure(failure(pane))


def stopping(message: str = "the server is shutting down") -> ProtocolError:
    return ProtocolError("stopping", message)
