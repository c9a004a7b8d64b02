"""generated — do not edit: made from server/agentls/schema/protocol.json by `make schema`.

The method table, event kinds, error codes and literal types
of the wire.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

PROTOCOL_VERSION = 2

# Reasoning effort.
Effort = Literal["none", "minimal", "low", "medium", "high", "xhigh"]
# When a tool call asks the user first.
Approval = Literal["never", "on-request", "always"]
# Where commands run: what they may write.
Sandbox = Literal["workspace-write", "read-only", "off"]
TurnStatus = Literal["completed", "cancelled", "failed"]
# A tool call's outcome; cancelled when its turn was cancelled under it.
ToolStatus = Literal["completed", "failed", "cancelled"]
# The user's answer to an approval request.
Decision = Literal["allow", "allowSession", "deny"]
# An MCP server's state; disabled: a project server the user has not allowed.
McpStatus = Literal["starting", "ready", "failed", "disabled"]
CompactionMode = Literal["summary", "trim"]
PlanStepStatus = Literal["pending", "in_progress", "completed"]


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

# workspace/executeCommand commands (for clients with nothing of ours).
ASK_COMMAND = "agentls.ask"


@dataclass(frozen=True, slots=True)
class Method:
    name: str
    # Who sends it.
    sender: Literal["client", "server"]
    kind: Literal["request", "notification"]
    # The names of its params and result types (in ``wire``).
    params: str | None = None
    result: str | None = None


METHODS: tuple[Method, ...] = (
    Method(SUBMIT, "client", "request", "SubmitParams", "TurnResult"),
    Method(STEER, "client", "request", "SteerParams", "SteerResult"),
    Method(CANCEL, "client", "request", "CancelParams", "CancelResult"),
    Method(FORK, "client", "request", "ForkParams", "ForkResult"),
    Method(CLOSE_PANE, "client", "request", "ClosePaneParams", "ClosePaneResult"),
    Method(SET_EFFORT, "client", "request", "SetEffortParams", "SetEffortResult"),
    Method(SET_FAST_MODE, "client", "request", "SetFastModeParams", "SetFastModeResult"),
    Method(SET_APPROVAL, "client", "request", "SetApprovalParams", "SetApprovalResult"),
    Method(AUXILIARY, "client", "request", "AuxiliaryParams", "AuxiliaryResult"),
    Method(NEW_SESSION, "client", "request", "NewSessionParams", "NewSessionResult"),
    Method(CANCEL_TOOL, "client", "request", "CancelToolParams", "CancelToolResult"),
    Method(PROCESSES, "client", "request", "ProcessesParams", "ProcessesResult"),
    Method(MCP_SERVERS, "client", "request", "McpServersParams", "McpServersResult"),
    Method(MCP_RESTART, "client", "request", "McpRestartParams", "McpServer"),
    Method(MCP_REVOKE, "client", "request", "McpRevokeParams", "McpRevokeResult"),
    Method(COMPACT, "client", "request", "CompactParams", "CompactResult"),
    Method(INSTRUCTIONS, "client", "request", "InstructionsParams", "InstructionsResult"),
    Method(SESSIONS, "client", "request", "SessionsParams", "SessionsResult"),
    Method(RESUME, "client", "request", "ResumeParams", "ResumeResult"),
    Method(DELETE_SESSION, "client", "request", "DeleteSessionParams", "DeleteSessionResult"),
    Method(HISTORY, "client", "request", "HistoryParams", "HistoryResult"),
    Method(SET_REVIEW, "client", "request", "SetReviewParams", "SetReviewResult"),
    Method(EVENT, "server", "notification", "AgentEvent"),
    Method(REQUEST_APPROVAL, "server", "request", "ApprovalParams", "ApprovalResult"),
    Method(DIAGNOSTICS, "server", "request", "DiagnosticsParams", "DiagnosticsResult"),
)

# agent/event: each kind and its type (in ``wire``), oldest first.
EVENT_KINDS: dict[str, str] = {
    "turn.started": "TurnStartedEvent",
    "message.delta": "MessageDeltaEvent",
    "reasoning.delta": "ReasoningDeltaEvent",
    "tool.started": "ToolStartedEvent",
    "tool.output": "ToolOutputEvent",
    "tool.finished": "ToolFinishedEvent",
    "steer.admitted": "SteerAdmittedEvent",
    "steer.applied": "SteerAppliedEvent",
    "usage": "UsageEvent",
    "turn.finished": "TurnFinishedEvent",
    "pane.opened": "PaneOpenedEvent",
    "pane.closed": "PaneClosedEvent",
    "model.retry": "ModelRetryEvent",
    "plan.updated": "PlanUpdatedEvent",
    "tool.preparing": "ToolPreparingEvent",
    "compaction.started": "CompactionStartedEvent",
    "compaction.finished": "CompactionFinishedEvent",
    "message.citations": "MessageCitationsEvent",
    "message.refusal": "MessageRefusalEvent",
    "session.resumed": "SessionResumedEvent",
}

# What failed, as the code of the error response says it.
ErrorKind = Literal[
    "parse_error",
    "invalid_request",
    "refused",
    "method_not_found",
    "invalid_params",
    "invalid",
    "internal",
    "cancelled",
    "pane_unavailable",
    "fork_already_open",
    "stopping",
    "pane_busy",
    "session_not_found",
]

# The one table of error codes.
CODES: dict[ErrorKind, int] = {
    "parse_error": -32700,
    "invalid_request": -32600,
    "refused": -32600,
    "method_not_found": -32601,
    "invalid_params": -32602,
    "invalid": -32602,
    "internal": -32603,
    "cancelled": -32800,
    "pane_unavailable": -32001,
    "fork_already_open": -32002,
    "stopping": -32003,
    "pane_busy": -32004,
    "session_not_found": -32005,
}

# How docs/protocol.md names each code.
NAMES: dict[int, str] = {
    -32700: "ParseError",
    -32600: "InvalidRequest",
    -32601: "MethodNotFound",
    -32602: "InvalidParams",
    -32603: "InternalError",
    -32800: "RequestCancelled",
    -32001: "PaneUnavailable",
    -32002: "ForkAlreadyOpen",
    -32003: "AgentStopped",
    -32004: "PaneBusy",
    -32005: "SessionNotFound",
}
