"""Protocol errors: every failure has a kind, and this table alone says which
JSON-RPC code a kind is answered with.

Nothing chooses a code by reading a message: messages are for people and may
be reworded at will. The worker's failure kinds (``worker.messages.Failure``)
are a subset of the kinds here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, get_args

from pygls.exceptions import JsonRpcException

from agentls.domain import FailureKind

if TYPE_CHECKING:
    from agentls.worker.messages import Failure

ProtocolKind = Literal[
    "parse_error",
    "invalid_request",
    "method_not_found",
    "invalid_params",
    "cancelled",
]
ErrorKind = ProtocolKind | FailureKind

# The one table of error codes.
CODES: dict[ErrorKind, int] = {
    "parse_error": -32700,
    "invalid_request": -32600,
    "method_not_found": -32601,
    "invalid_params": -32602,
    "internal": -32603,
    "cancelled": -32800,
    "pane_unavailable": -32001,
    "fork_already_open": -32002,
    "stopping": -32003,
    "pane_busy": -32004,
    "session_not_found": -32005,
    # Worker failures that are JSON-RPC's own errors.
    "invalid": -32602,
    "refused": -32600,
}

# How docs/protocol.md names each code of ours (a test checks the doc has them all).
NAMES: dict[int, str] = {
    -32700: "ParseError",
    -32600: "InvalidRequest",
    -32602: "InvalidParams",
    -32001: "PaneUnavailable",
    -32002: "ForkAlreadyOpen",
    -32003: "AgentStopped",
    -32004: "PaneBusy",
    -32005: "SessionNotFound",
}

ALL_KINDS: tuple[ErrorKind, ...] = (*get_args(ProtocolKind), *get_args(FailureKind))


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
