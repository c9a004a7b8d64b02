"""JSON-RPC error codes of protocol v1, as exceptions pygls turns into error responses."""

from __future__ import annotations

from typing import Any

from pygls.exceptions import JsonRpcException

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
PANE_UNAVAILABLE = -32001
FORK_ALREADY_OPEN = -32002
AGENT_STOPPED = -32003
PANE_BUSY = -32004
REQUEST_CANCELLED = -32800

ERROR_NAMES = {
    PARSE_ERROR: "ParseError",
    INVALID_REQUEST: "InvalidRequest",
    INVALID_PARAMS: "InvalidParams",
    PANE_UNAVAILABLE: "PaneUnavailable",
    FORK_ALREADY_OPEN: "ForkAlreadyOpen",
    AGENT_STOPPED: "AgentStopped",
    PANE_BUSY: "PaneBusy",
}


class ProtocolError(JsonRpcException):
    """An error response with one of our codes."""

    CODE = INTERNAL_ERROR

    def __init__(self, message: str, data: Any = None) -> None:
        super().__init__(code=self.CODE, message=message, data=data)


class InvalidRequest(ProtocolError):
    CODE = INVALID_REQUEST


class InvalidParams(ProtocolError):
    CODE = INVALID_PARAMS


class PaneUnavailable(ProtocolError):
    CODE = PANE_UNAVAILABLE

    def __init__(self, pane: str) -> None:
        super().__init__(f"session pane is no longer available: {pane!r}", {"pane": pane})


class ForkAlreadyOpen(ProtocolError):
    CODE = FORK_ALREADY_OPEN

    def __init__(self, message: str = "a forked session is already open") -> None:
        super().__init__(message)


class AgentStopped(ProtocolError):
    CODE = AGENT_STOPPED

    def __init__(self, message: str = "the server is shutting down") -> None:
        super().__init__(message)


class PaneBusy(ProtocolError):
    CODE = PANE_BUSY

    def __init__(self, pane: str) -> None:
        super().__init__(f"pane {pane!r} has turns in flight", {"pane": pane})


class RequestCancelled(ProtocolError):
    CODE = REQUEST_CANCELLED


class InternalError(ProtocolError):
    CODE = INTERNAL_ERROR
