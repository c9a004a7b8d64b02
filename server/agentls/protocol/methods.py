"""The method table of the protocol, as the wire schema describes it
(``agentls/schema/protocol.json`` → ``schema/names.py``): every method the
server serves or sends, once. ``docs/protocol.md`` documents each of them (a
test keeps the two in step), the server registers a handler for each client
request (and checks at start-up that none is missing), and ``initialize``
advertises them.
"""

from __future__ import annotations

from agentls.domain import EFFORTS
from agentls.model.models import model_info
from agentls.schema.names import (
    ASK_COMMAND,
    AUXILIARY,
    CANCEL,
    CANCEL_TOOL,
    CLOSE_PANE,
    COMPACT,
    DELETE_SESSION,
    DIAGNOSTICS,
    EVENT,
    FORK,
    HISTORY,
    INSTRUCTIONS,
    MCP_RESTART,
    MCP_REVOKE,
    MCP_SERVERS,
    METHODS,
    NEW_SESSION,
    PROCESSES,
    PROTOCOL_VERSION,
    REQUEST_APPROVAL,
    RESUME,
    SESSIONS,
    SET_APPROVAL,
    SET_EFFORT,
    SET_FAST_MODE,
    SET_REVIEW,
    STEER,
    SUBMIT,
    Method,
)
from agentls.schema.names import EVENT_KINDS as EVENT_TYPES

__all__ = [
    "ASK_COMMAND",
    "AUXILIARY",
    "BY_NAME",
    "CANCEL",
    "CANCEL_TOOL",
    "CLIENT_REQUESTS",
    "CLOSE_PANE",
    "COMPACT",
    "DELETE_SESSION",
    "DIAGNOSTICS",
    "EVENT",
    "EVENT_KINDS",
    "FORK",
    "HISTORY",
    "INSTRUCTIONS",
    "MAX_FORKS",
    "MCP_RESTART",
    "MCP_REVOKE",
    "MCP_SERVERS",
    "METHODS",
    "NEW_SESSION",
    "PROCESSES",
    "PROTOCOL_VERSION",
    "REQUEST_APPROVAL",
    "RESUME",
    "SESSIONS",
    "SET_APPROVAL",
    "SET_EFFORT",
    "SET_FAST_MODE",
    "SET_REVIEW",
    "STEER",
    "SUBMIT",
    "Method",
    "capabilities",
    "params_type",
]

MAX_FORKS = 1

BY_NAME: dict[str, Method] = {method.name: method for method in METHODS}
# The requests a client may send, in table order.
CLIENT_REQUESTS: tuple[str, ...] = tuple(
    m.name for m in METHODS if m.sender == "client" and m.kind == "request"
)
EVENT_KINDS: tuple[str, ...] = tuple(EVENT_TYPES)


def params_type(name: str) -> type:
    """The params class of a client request (defined on first use, so that
    answering ``initialize`` does not pay for them)."""
    from agentls.schema import wire

    params = BY_NAME[name].params
    assert params is not None, f"{name} takes no params type"
    cls: type = getattr(wire, params)
    return cls


def capabilities(model: str | None = None, context_window: int | None = None) -> dict[str, object]:
    """``capabilities.experimental.agentls`` of the ``initialize`` result: the
    efforts and the context window are those of ``model`` (the configured one)."""
    info = model_info(model) if model else None
    result: dict[str, object] = {
        "protocolVersion": PROTOCOL_VERSION,
        "maxForks": MAX_FORKS,
        "efforts": list(info.efforts if info else EFFORTS),
        "methods": list(CLIENT_REQUESTS),
        "eventKinds": list(EVENT_KINDS),
    }
    if model:
        result["model"] = model
    window = context_window or (info.context_window if info else None)
    if window:
        result["contextWindow"] = window
    return result
