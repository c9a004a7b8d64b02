"""generated — do not edit: made from server/agentls/schema/protocol.json by `make schema`.

What the server parses (attrs classes, snake_case: ``protocol.converter``
parses them strictly) and what it sends (TypedDicts, camelCase as on the wire).
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

import attrs

from agentls.schema.names import (  # noqa: F401
    Approval,
    CompactionMode,
    Decision,
    Effort,
    McpStatus,
    PlanStepStatus,
    Sandbox,
    ToolStatus,
    TurnStatus,
)


@attrs.define(frozen=True)
class Position:
    line: int
    character: int


@attrs.define(frozen=True)
class Range:
    """An LSP range (zero-based)."""

    start: Position
    end: Position


@attrs.define(frozen=True)
class Selection:
    uri: str
    range: Range
    text: str


@attrs.define(frozen=True)
class Context:
    """What the editor adds to a prompt."""

    selection: Selection | None = None
    # URIs of the open documents.
    documents: list[str] | None = None


# An LSP progress token.
ProgressToken = int | str


@attrs.define(frozen=True)
class SubmitParams:
    prompt: str
    pane: str = "main"
    context: Context | None = None
    work_done_token: ProgressToken | None = None


@attrs.define(frozen=True)
class SteerParams:
    prompt: str
    pane: str = "main"
    expected_turn_id: int | None = None


@attrs.define(frozen=True)
class CancelParams:
    pane: str = "main"
    turn_id: int | None = None


@attrs.define(frozen=True)
class ForkParams:
    pane: str = "main"


@attrs.define(frozen=True)
class ClosePaneParams:
    pane: str


@attrs.define(frozen=True)
class SetEffortParams:
    effort: Effort
    pane: str = "main"


@attrs.define(frozen=True)
class SetFastModeParams:
    enabled: bool
    pane: str = "main"


@attrs.define(frozen=True)
class SetApprovalParams:
    approval: Approval
    pane: str = "main"


@attrs.define(frozen=True)
class AuxiliaryParams:
    prompt: str
    pane: str = "main"
    context: Literal["clean", "conversation"] = "clean"


@attrs.define(frozen=True)
class NewSessionParams:
    pane: str = "main"


@attrs.define(frozen=True)
class CancelToolParams:
    call_id: str
    pane: str = "main"


@attrs.define(frozen=True)
class ProcessesParams:
    pane: str = "main"


@attrs.define(frozen=True)
class McpServersParams:
    pass


@attrs.define(frozen=True)
class McpRestartParams:
    name: str


@attrs.define(frozen=True)
class McpRevokeParams:
    # None: every server of the project's .mcp.json.
    name: str | None = None


@attrs.define(frozen=True)
class CompactParams:
    pane: str = "main"
    # What the summary should keep in particular.
    focus: str | None = None


@attrs.define(frozen=True)
class InstructionsParams:
    pane: str = "main"


@attrs.define(frozen=True)
class SessionsParams:
    limit: int | None = None


@attrs.define(frozen=True)
class ResumeParams:
    session_id: str
    pane: str = "main"


@attrs.define(frozen=True)
class DeleteSessionParams:
    session_id: str


@attrs.define(frozen=True)
class HistoryParams:
    pane: str = "main"
    since_seq: int = 0


@attrs.define(frozen=True)
class SetReviewParams:
    enabled: bool
    pane: str = "main"


@attrs.define(frozen=True)
class AskArguments:
    """The one argument of workspace/executeCommand agentls.ask."""

    prompt: str
    uri: str | None = None
    range: Range | None = None
    # What the code action that made it is for: ask (a question about a selection) or fix (a
    # diagnostic).
    kind: Literal["ask", "fix"] | None = None


class Usage(TypedDict):
    """Token usage; contextTokens/contextWindow: how full the window is."""

    inputTokens: int
    outputTokens: int
    reasoningTokens: int
    cachedTokens: int
    # The estimated size of the conversation the next request sends.
    contextTokens: NotRequired[int]
    # The model's context window.
    contextWindow: NotRequired[int]


class AbortedToolCall(TypedDict):
    callId: str
    tool: str


class Receipt(TypedDict):
    """What cancelling a turn did."""

    turnId: int
    abortedToolCalls: list[AbortedToolCall]
    killedProcesses: int
    survivingProcesses: int


class TurnResult(TypedDict):
    """How a turn ended (agent/submit's result)."""

    pane: str
    turnId: int
    status: TurnStatus
    # The model's answer (empty unless completed).
    finalMessage: str
    # Present when failed: a sentence for the user.
    error: NotRequired[str]
    # Present when failed: what failed (a model failure's kind, stopped or internal).
    failure: NotRequired[str]
    usage: NotRequired[Usage]
    receipt: NotRequired[Receipt]


class SessionEntry(TypedDict):
    """One displayable piece of a stored conversation."""

    role: Literal["user", "assistant", "tool", "steer", "summary"]
    text: str
    tool: NotRequired[str]
    status: NotRequired[str]


class Citation(TypedDict):
    url: str
    title: NotRequired[str]
    startIndex: NotRequired[int]
    endIndex: NotRequired[int]


class Source(TypedDict):
    """A page a web search used."""

    url: str
    title: NotRequired[str]


class PlanStep(TypedDict):
    step: str
    status: PlanStepStatus


class SessionInfo(TypedDict):
    """A stored session."""

    sessionId: str
    title: str
    createdAt: str
    updatedAt: str
    turns: int
    # Where it is open now, if it is.
    pane: str | None
    # Why it cannot be read, if it cannot.
    error: NotRequired[str]


class BackgroundProcess(TypedDict):
    processId: str
    command: str
    startedAt: str
    running: bool
    exitCode: NotRequired[int]


class McpServer(TypedDict):
    """One entry of agent/mcpServers."""

    name: str
    status: McpStatus
    tools: int
    toolNames: list[str]
    error: NotRequired[str]
    source: Literal["options", "user", "project"]
    transport: Literal["stdio", "http"]
    command: NotRequired[str]
    url: NotRequired[str]
    restarts: int
    notes: NotRequired[list[str]]


class InstructionsFile(TypedDict):
    path: str
    bytes: int


class Diagnostic(TypedDict):
    """One problem the editor shows."""

    uri: str
    range: Range
    severity: NotRequired[int]
    source: NotRequired[str]
    message: str


class SteerResult(TypedDict):
    outcome: Literal["admitted", "promoted"]
    turnId: int


class CancelResult(TypedDict):
    cancelled: int
    receipts: list[Receipt]


class ForkResult(TypedDict):
    pane: str
    items: int


class ClosePaneResult(TypedDict):
    cancelled: int


class SetEffortResult(TypedDict):
    pane: str
    effort: Effort


class SetFastModeResult(TypedDict):
    pane: str
    enabled: bool


class SetApprovalResult(TypedDict):
    pane: str
    approval: Approval


class AuxiliaryResult(TypedDict):
    text: str


class NewSessionResult(TypedDict):
    pane: str
    sessionId: str


class CancelToolResult(TypedDict):
    cancelled: bool
    killedProcesses: int


class ProcessesResult(TypedDict):
    processes: list[BackgroundProcess]


class McpServersResult(TypedDict):
    servers: list[McpServer]
    problems: NotRequired[list[str]]


class McpRevokeResult(TypedDict):
    revoked: list[str]


class CompactResult(TypedDict):
    beforeTokens: int
    afterTokens: int
    mode: CompactionMode


class InstructionsResult(TypedDict):
    files: list[InstructionsFile]
    bytes: int
    cutBytes: int


class SessionsResult(TypedDict):
    sessions: list[SessionInfo]


class ResumeResult(TypedDict):
    pane: str
    sessionId: str
    turns: int
    title: str
    interrupted: bool
    unsent: list[str]


class DeleteSessionResult(TypedDict):
    deleted: Literal[True]


class TurnStartedEvent(TypedDict):
    pane: str
    seq: int
    kind: Literal["turn.started"]
    turnId: int
    prompt: str
    # The turn's number in the pane's session, from 1, without gaps.
    number: int


class MessageDeltaEvent(TypedDict):
    pane: str
    seq: int
    kind: Literal["message.delta"]
    turnId: int
    text: str


class ReasoningDeltaEvent(TypedDict):
    pane: str
    seq: int
    kind: Literal["reasoning.delta"]
    turnId: int
    text: str


class ToolStartedEvent(TypedDict):
    pane: str
    seq: int
    kind: Literal["tool.started"]
    turnId: int
    callId: str
    tool: str
    title: str
    # The call's arguments.
    arguments: dict[str, Any]


class ToolOutputEvent(TypedDict):
    pane: str
    seq: int
    kind: Literal["tool.output"]
    turnId: int
    callId: str
    text: str


class ToolFinishedEvent(TypedDict):
    pane: str
    seq: int
    kind: Literal["tool.finished"]
    turnId: int
    callId: str
    status: ToolStatus
    exitCode: NotRequired[int]
    sources: NotRequired[list[Source]]
    # apply_patch: the unified diff of what it changed.
    diff: NotRequired[str]


class SteerAdmittedEvent(TypedDict):
    pane: str
    seq: int
    kind: Literal["steer.admitted"]
    turnId: int
    text: str


class SteerAppliedEvent(TypedDict):
    pane: str
    seq: int
    kind: Literal["steer.applied"]
    turnId: int
    text: str


class UsageEvent(TypedDict):
    pane: str
    seq: int
    kind: Literal["usage"]
    turnId: int
    inputTokens: int
    outputTokens: int
    reasoningTokens: int
    cachedTokens: int
    # The estimated size of the conversation the next request sends.
    contextTokens: NotRequired[int]
    # The model's context window.
    contextWindow: NotRequired[int]


class TurnFinishedEvent(TypedDict):
    pane: str
    seq: int
    kind: Literal["turn.finished"]
    turnId: int
    status: TurnStatus
    finalMessage: str
    error: NotRequired[str]
    failure: NotRequired[str]
    usage: Usage
    receipt: NotRequired[Receipt]


class PaneOpenedEvent(TypedDict):
    pane: str
    seq: int
    kind: Literal["pane.opened"]
    turnId: None
    sessionId: NotRequired[str]
    entries: NotRequired[list[SessionEntry]]
    items: NotRequired[int]
    promotedFrom: NotRequired[str]


class PaneClosedEvent(TypedDict):
    pane: str
    seq: int
    kind: Literal["pane.closed"]
    turnId: None
    promotedTo: NotRequired[str]


class ModelRetryEvent(TypedDict):
    pane: str
    seq: int
    kind: Literal["model.retry"]
    turnId: int
    attempt: int
    maxAttempts: int
    delayMs: int
    # When the next attempt goes (milliseconds since the epoch).
    retryAt: int
    # What failed: rate_limit, server, connection, timeout, stream.
    failure: str
    reason: str


class PlanUpdatedEvent(TypedDict):
    pane: str
    seq: int
    kind: Literal["plan.updated"]
    turnId: int
    explanation: NotRequired[str]
    plan: list[PlanStep]


class ToolPreparingEvent(TypedDict):
    pane: str
    seq: int
    kind: Literal["tool.preparing"]
    turnId: int
    tool: str
    title: str
    chars: int


class CompactionStartedEvent(TypedDict):
    pane: str
    seq: int
    kind: Literal["compaction.started"]
    # The turn it happened in; null outside a turn.
    turnId: int | None
    reason: Literal["auto", "overflow", "manual"]
    beforeTokens: int


class CompactionFinishedEvent(TypedDict):
    pane: str
    seq: int
    kind: Literal["compaction.finished"]
    # The turn it happened in; null outside a turn.
    turnId: int | None
    beforeTokens: int
    afterTokens: int
    mode: CompactionMode
    summary: NotRequired[str]


class MessageCitationsEvent(TypedDict):
    pane: str
    seq: int
    kind: Literal["message.citations"]
    turnId: int
    citations: list[Citation]


class MessageRefusalEvent(TypedDict):
    pane: str
    seq: int
    kind: Literal["message.refusal"]
    turnId: int
    text: str


class SessionResumedEvent(TypedDict):
    pane: str
    seq: int
    kind: Literal["session.resumed"]
    turnId: None
    sessionId: str
    title: str
    turns: int
    entries: list[SessionEntry]
    interrupted: bool
    unsent: list[str]
    notice: NotRequired[str]


# agent/event params: one event of a pane, in seq order.
AgentEvent = (
    TurnStartedEvent
    | MessageDeltaEvent
    | ReasoningDeltaEvent
    | ToolStartedEvent
    | ToolOutputEvent
    | ToolFinishedEvent
    | SteerAdmittedEvent
    | SteerAppliedEvent
    | UsageEvent
    | TurnFinishedEvent
    | PaneOpenedEvent
    | PaneClosedEvent
    | ModelRetryEvent
    | PlanUpdatedEvent
    | ToolPreparingEvent
    | CompactionStartedEvent
    | CompactionFinishedEvent
    | MessageCitationsEvent
    | MessageRefusalEvent
    | SessionResumedEvent
)


class HistoryResult(TypedDict):
    pane: str
    sessionId: str
    events: list[AgentEvent]
    lastSeq: int
    complete: bool
    runningTurnId: int | None


class SetReviewResult(TypedDict):
    pane: str
    enabled: bool


class ApprovalParams(TypedDict):
    """A tool call waits for the user."""

    pane: str
    turnId: int
    callId: str
    tool: str
    title: str
    # For a command: the command line; for another tool, its name and arguments.
    command: NotRequired[str]
    # For apply_patch: the unified diff of what it would change.
    diff: NotRequired[str]
    # Why the model wants to run the command outside the sandbox.
    justification: NotRequired[str]
    # Review mode asks: deny rejects the patch.
    review: NotRequired[bool]


class ApprovalResult(TypedDict):
    decision: Decision
    reason: NotRequired[str]


class DiagnosticsParams(TypedDict):
    # One document, or every file when absent.
    uri: NotRequired[str]


class DiagnosticsResult(TypedDict):
    diagnostics: list[Diagnostic]
