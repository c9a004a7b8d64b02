"""The method table of the protocol: every method the server serves or sends,
once. ``docs/protocol.md`` documents each of them (a test keeps the two in
step), the server registers a handler for each client request (and checks at
start-up that none is missing), and ``initialize`` advertises them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from agentls.domain import EFFORTS
from agentls.model.models import model_info

PROTOCOL_VERSION = 2
MAX_FORKS = 1

SUBMIT = "agent/submit"
STEER = "agent/steer"
CANCEL = "agent/cancel"
FORK = "agent/fork"
CLOSE_PANE = "agent/closePane"
SET_EFFORT = "agent/setEffort"
SET_FAST_MODE = "agent/setFastMode"
SET_APPROVAL = "agent/setApproval"
AUXILIARY = "agent/auxiliary"
NEW_SESSION = "agent/newSession"
CANCEL_TOOL = "agent/cancelTool"
PROCESSES = "agent/processes"
MCP_SERVERS = "agent/mcpServers"
MCP_RESTART = "agent/mcpRestart"
MCP_REVOKE = "agent/mcpRevoke"
COMPACT = "agent/compact"
INSTRUCTIONS = "agent/instructions"
SESSIONS = "agent/sessions"
RESUME = "agent/resume"
DELETE_SESSION = "agent/deleteSession"
HISTORY = "agent/history"
SET_REVIEW = "agent/setReview"
EVENT = "agent/event"
REQUEST_APPROVAL = "agent/requestApproval"
DIAGNOSTICS = "agent/diagnostics"
# workspace/executeCommand: runs a turn, for clients with nothing of ours.
ASK_COMMAND = "agentls.ask"

Direction = Literal["client→server", "server→client"]


@dataclass(frozen=True, slots=True)
class Method:
    name: str
    direction: Direction
    kind: Literal["request", "notification"]
    # Its params type in ``protocol.types`` (client requests), by name: the
    # classes are defined on first use, so that start-up does not pay for them.
    params: str | None = None


METHODS: tuple[Method, ...] = (
    Method(SUBMIT, "client→server", "request", "SubmitParams"),
    Method(STEER, "client→server", "request", "SteerParams"),
    Method(CANCEL, "client→server", "request", "CancelParams"),
    Method(FORK, "client→server", "request", "ForkParams"),
    Method(CLOSE_PANE, "client→server", "request", "ClosePaneParams"),
    Method(SET_EFFORT, "client→server", "request", "SetEffortParams"),
    Method(SET_FAST_MODE, "client→server", "request", "SetFastModeParams"),
    Method(SET_APPROVAL, "client→server", "request", "SetApprovalParams"),
    Method(AUXILIARY, "client→server", "request", "AuxiliaryParams"),
    Method(NEW_SESSION, "client→server", "request", "NewSessionParams"),
    Method(CANCEL_TOOL, "client→server", "request", "CancelToolParams"),
    Method(PROCESSES, "client→server", "request", "ProcessesParams"),
    Method(MCP_SERVERS, "client→server", "request", "McpServersParams"),
    Method(MCP_RESTART, "client→server", "request", "McpRestartParams"),
    Method(MCP_REVOKE, "client→server", "request", "McpRevokeParams"),
    Method(COMPACT, "client→server", "request", "CompactParams"),
    Method(INSTRUCTIONS, "client→server", "request", "InstructionsParams"),
    Method(SESSIONS, "client→server", "request", "SessionsParams"),
    Method(RESUME, "client→server", "request", "ResumeParams"),
    Method(DELETE_SESSION, "client→server", "request", "DeleteSessionParams"),
    Method(HISTORY, "client→server", "request", "HistoryParams"),
    Method(SET_REVIEW, "client→server", "request", "SetReviewParams"),
    Method(EVENT, "server→client", "notification"),
    Method(REQUEST_APPROVAL, "server→client", "request"),
    Method(DIAGNOSTICS, "server→client", "request"),
)

BY_NAME: dict[str, Method] = {method.name: method for method in METHODS}
# The requests a client may send, in table order.
CLIENT_REQUESTS: tuple[str, ...] = tuple(
    m.name for m in METHODS if m.direction == "client→server" and m.kind == "request"
)

EVENT_KINDS = (
    "turn.started",
    "message.delta",
    "reasoning.delta",
    "tool.started",
    "tool.output",
    "tool.finished",
    "steer.admitted",
    "steer.applied",
    "usage",
    "turn.finished",
    "pane.opened",
    "pane.closed",
    "model.retry",
    "plan.updated",
    "tool.preparing",
    "compaction.started",
    "compaction.finished",
    "message.citations",
    "message.refusal",
    "session.resumed",
)


def params_type(name: str) -> type:
    """The params class of a client request."""
    from agentls.protocol import types

    params = BY_NAME[name].params
    assert params is not None, f"{name} takes no params type"
    cls: type = getattr(types, params)
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
