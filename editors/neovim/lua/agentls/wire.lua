-- generated — do not edit: made from server/agentls/schema/protocol.json by `make schema`.
-- The wire's types as LuaCATS annotations; its method names and error codes.

--- Reasoning effort.
---@alias agentls.Effort "none"|"minimal"|"low"|"medium"|"high"|"xhigh"

--- When a tool call asks the user first.
---@alias agentls.Approval "never"|"on-request"|"always"

--- Where commands run: what they may write.
---@alias agentls.Sandbox "workspace-write"|"read-only"|"off"

---@alias agentls.TurnStatus "completed"|"cancelled"|"failed"

--- A tool call's outcome; cancelled when its turn was cancelled under it.
---@alias agentls.ToolStatus "completed"|"failed"|"cancelled"

--- The user's answer to an approval request.
---@alias agentls.Decision "allow"|"allowSession"|"deny"

--- An MCP server's state; disabled: a project server the user has not allowed.
---@alias agentls.McpStatus "starting"|"ready"|"failed"|"disabled"

---@alias agentls.CompactionMode "summary"|"trim"

---@alias agentls.PlanStepStatus "pending"|"in_progress"|"completed"

--- An LSP progress token.
---@alias agentls.ProgressToken integer|string

---@class agentls.Position
---@field line integer
---@field character integer

--- An LSP range (zero-based).
---@class agentls.Range
---@field start agentls.Position
---@field end agentls.Position

---@class agentls.Selection
---@field uri string
---@field range agentls.Range
---@field text string

--- What the editor adds to a prompt.
---@class agentls.Context
---@field selection? agentls.Selection
---@field documents? string[] URIs of the open documents.

--- Token usage; contextTokens/contextWindow: how full the window is.
---@class agentls.Usage
---@field inputTokens integer
---@field outputTokens integer
---@field reasoningTokens integer
---@field cachedTokens integer
---@field contextTokens? integer The estimated size of the conversation the next request sends.
---@field contextWindow? integer The model's context window.

---@class agentls.AbortedToolCall
---@field callId string
---@field tool string

--- What cancelling a turn did.
---@class agentls.Receipt
---@field turnId integer
---@field abortedToolCalls agentls.AbortedToolCall[]
---@field killedProcesses integer
---@field survivingProcesses integer

--- How a turn ended (agent/submit's result).
---@class agentls.TurnResult
---@field pane string
---@field turnId integer
---@field status agentls.TurnStatus
---@field finalMessage string The model's answer (empty unless completed).
---@field error? string Present when failed: a sentence for the user.
---@field failure? string Present when failed: what failed (a model failure's kind, stopped or internal).
---@field usage? agentls.Usage
---@field receipt? agentls.Receipt

--- One displayable piece of a stored conversation.
---@class agentls.SessionEntry
---@field role "user"|"assistant"|"tool"|"steer"|"summary"
---@field text string
---@field tool? string
---@field status? string

---@class agentls.Citation
---@field url string
---@field title? string
---@field startIndex? integer
---@field endIndex? integer

--- A page a web search used.
---@class agentls.Source
---@field url string
---@field title? string

---@class agentls.PlanStep
---@field step string
---@field status agentls.PlanStepStatus

--- A stored session.
---@class agentls.SessionInfo
---@field sessionId string
---@field title string
---@field createdAt string
---@field updatedAt string
---@field turns integer
---@field pane string|nil Where it is open now, if it is.
---@field error? string Why it cannot be read, if it cannot.

---@class agentls.BackgroundProcess
---@field processId string
---@field command string
---@field startedAt string
---@field running boolean
---@field exitCode? integer

--- One entry of agent/mcpServers.
---@class agentls.McpServer
---@field name string
---@field status agentls.McpStatus
---@field tools integer
---@field toolNames string[]
---@field error? string
---@field source "options"|"user"|"project"
---@field transport "stdio"|"http"
---@field command? string
---@field url? string
---@field restarts integer
---@field notes? string[]

---@class agentls.InstructionsFile
---@field path string
---@field bytes integer

--- One problem the editor shows.
---@class agentls.Diagnostic
---@field uri string
---@field range agentls.Range
---@field severity? integer
---@field source? string
---@field message string

---@class agentls.SubmitParams
---@field pane? string
---@field prompt string
---@field context? agentls.Context
---@field workDoneToken? agentls.ProgressToken

---@class agentls.SteerParams
---@field pane? string
---@field prompt string
---@field expectedTurnId? integer

---@class agentls.SteerResult
---@field outcome "admitted"|"promoted"
---@field turnId integer

---@class agentls.CancelParams
---@field pane? string
---@field turnId? integer

---@class agentls.CancelResult
---@field cancelled integer
---@field receipts agentls.Receipt[]

---@class agentls.ForkParams
---@field pane? string

---@class agentls.ForkResult
---@field pane string
---@field items integer

---@class agentls.ClosePaneParams
---@field pane string

---@class agentls.ClosePaneResult
---@field cancelled integer

---@class agentls.SetEffortParams
---@field pane? string
---@field effort agentls.Effort

---@class agentls.SetEffortResult
---@field pane string
---@field effort agentls.Effort

---@class agentls.SetFastModeParams
---@field pane? string
---@field enabled boolean

---@class agentls.SetFastModeResult
---@field pane string
---@field enabled boolean

---@class agentls.SetApprovalParams
---@field pane? string
---@field approval agentls.Approval

---@class agentls.SetApprovalResult
---@field pane string
---@field approval agentls.Approval

---@class agentls.AuxiliaryParams
---@field pane? string
---@field prompt string
---@field context? "clean"|"conversation"

---@class agentls.AuxiliaryResult
---@field text string

---@class agentls.NewSessionParams
---@field pane? string

---@class agentls.NewSessionResult
---@field pane string
---@field sessionId string

---@class agentls.CancelToolParams
---@field pane? string
---@field callId string

---@class agentls.CancelToolResult
---@field cancelled boolean
---@field killedProcesses integer

---@class agentls.ProcessesParams
---@field pane? string

---@class agentls.ProcessesResult
---@field processes agentls.BackgroundProcess[]

---@class agentls.McpServersParams

---@class agentls.McpServersResult
---@field servers agentls.McpServer[]
---@field problems? string[]

---@class agentls.McpRestartParams
---@field name string

---@class agentls.McpRevokeParams
---@field name? string None: every server of the project's .mcp.json.

---@class agentls.McpRevokeResult
---@field revoked string[]

---@class agentls.CompactParams
---@field pane? string
---@field focus? string What the summary should keep in particular.

---@class agentls.CompactResult
---@field beforeTokens integer
---@field afterTokens integer
---@field mode agentls.CompactionMode

---@class agentls.InstructionsParams
---@field pane? string

---@class agentls.InstructionsResult
---@field files agentls.InstructionsFile[]
---@field bytes integer
---@field cutBytes integer

---@class agentls.SessionsParams
---@field limit? integer

---@class agentls.SessionsResult
---@field sessions agentls.SessionInfo[]

---@class agentls.ResumeParams
---@field pane? string
---@field sessionId string

---@class agentls.ResumeResult
---@field pane string
---@field sessionId string
---@field turns integer
---@field title string
---@field interrupted boolean
---@field unsent string[]

---@class agentls.DeleteSessionParams
---@field sessionId string

---@class agentls.DeleteSessionResult
---@field deleted true

---@class agentls.HistoryParams
---@field pane? string
---@field sinceSeq? integer

---@class agentls.HistoryResult
---@field pane string
---@field sessionId string
---@field events agentls.AgentEvent[]
---@field lastSeq integer
---@field complete boolean
---@field runningTurnId integer|nil

---@class agentls.SetReviewParams
---@field pane? string
---@field enabled boolean

---@class agentls.SetReviewResult
---@field pane string
---@field enabled boolean

---@class agentls.TurnStartedEvent
---@field pane string
---@field seq integer
---@field kind "turn.started"
---@field turnId integer
---@field prompt string
---@field number integer The turn's number in the pane's session, from 1, without gaps.

---@class agentls.MessageDeltaEvent
---@field pane string
---@field seq integer
---@field kind "message.delta"
---@field turnId integer
---@field text string

---@class agentls.ReasoningDeltaEvent
---@field pane string
---@field seq integer
---@field kind "reasoning.delta"
---@field turnId integer
---@field text string

---@class agentls.ToolStartedEvent
---@field pane string
---@field seq integer
---@field kind "tool.started"
---@field turnId integer
---@field callId string
---@field tool string
---@field title string
---@field arguments table<string, any> The call's arguments.

---@class agentls.ToolOutputEvent
---@field pane string
---@field seq integer
---@field kind "tool.output"
---@field turnId integer
---@field callId string
---@field text string

---@class agentls.ToolFinishedEvent
---@field pane string
---@field seq integer
---@field kind "tool.finished"
---@field turnId integer
---@field callId string
---@field status agentls.ToolStatus
---@field exitCode? integer
---@field sources? agentls.Source[]
---@field diff? string apply_patch: the unified diff of what it changed.

---@class agentls.SteerAdmittedEvent
---@field pane string
---@field seq integer
---@field kind "steer.admitted"
---@field turnId integer
---@field text string

---@class agentls.SteerAppliedEvent
---@field pane string
---@field seq integer
---@field kind "steer.applied"
---@field turnId integer
---@field text string

---@class agentls.UsageEvent
---@field pane string
---@field seq integer
---@field kind "usage"
---@field turnId integer
---@field inputTokens integer
---@field outputTokens integer
---@field reasoningTokens integer
---@field cachedTokens integer
---@field contextTokens? integer The estimated size of the conversation the next request sends.
---@field contextWindow? integer The model's context window.

---@class agentls.TurnFinishedEvent
---@field pane string
---@field seq integer
---@field kind "turn.finished"
---@field turnId integer
---@field status agentls.TurnStatus
---@field finalMessage string
---@field error? string
---@field failure? string
---@field usage agentls.Usage
---@field receipt? agentls.Receipt

---@class agentls.PaneOpenedEvent
---@field pane string
---@field seq integer
---@field kind "pane.opened"
---@field turnId nil
---@field sessionId? string
---@field entries? agentls.SessionEntry[]
---@field items? integer
---@field promotedFrom? string

---@class agentls.PaneClosedEvent
---@field pane string
---@field seq integer
---@field kind "pane.closed"
---@field turnId nil
---@field promotedTo? string

---@class agentls.ModelRetryEvent
---@field pane string
---@field seq integer
---@field kind "model.retry"
---@field turnId integer
---@field attempt integer
---@field maxAttempts integer
---@field delayMs integer
---@field retryAt integer When the next attempt goes (milliseconds since the epoch).
---@field failure string What failed: rate_limit, server, connection, timeout, stream.
---@field reason string

---@class agentls.PlanUpdatedEvent
---@field pane string
---@field seq integer
---@field kind "plan.updated"
---@field turnId integer
---@field explanation? string
---@field plan agentls.PlanStep[]

---@class agentls.ToolPreparingEvent
---@field pane string
---@field seq integer
---@field kind "tool.preparing"
---@field turnId integer
---@field tool string
---@field title string
---@field chars integer

---@class agentls.CompactionStartedEvent
---@field pane string
---@field seq integer
---@field kind "compaction.started"
---@field turnId integer|nil The turn it happened in; null outside a turn.
---@field reason "auto"|"overflow"|"manual"
---@field beforeTokens integer

---@class agentls.CompactionFinishedEvent
---@field pane string
---@field seq integer
---@field kind "compaction.finished"
---@field turnId integer|nil The turn it happened in; null outside a turn.
---@field beforeTokens integer
---@field afterTokens integer
---@field mode agentls.CompactionMode
---@field summary? string

---@class agentls.MessageCitationsEvent
---@field pane string
---@field seq integer
---@field kind "message.citations"
---@field turnId integer
---@field citations agentls.Citation[]

---@class agentls.MessageRefusalEvent
---@field pane string
---@field seq integer
---@field kind "message.refusal"
---@field turnId integer
---@field text string

---@class agentls.SessionResumedEvent
---@field pane string
---@field seq integer
---@field kind "session.resumed"
---@field turnId nil
---@field sessionId string
---@field title string
---@field turns integer
---@field entries agentls.SessionEntry[]
---@field interrupted boolean
---@field unsent string[]
---@field notice? string

--- agent/event params: one event of a pane, in seq order.
---@alias agentls.AgentEvent agentls.TurnStartedEvent|agentls.MessageDeltaEvent|agentls.ReasoningDeltaEvent|agentls.ToolStartedEvent|agentls.ToolOutputEvent|agentls.ToolFinishedEvent|agentls.SteerAdmittedEvent|agentls.SteerAppliedEvent|agentls.UsageEvent|agentls.TurnFinishedEvent|agentls.PaneOpenedEvent|agentls.PaneClosedEvent|agentls.ModelRetryEvent|agentls.PlanUpdatedEvent|agentls.ToolPreparingEvent|agentls.CompactionStartedEvent|agentls.CompactionFinishedEvent|agentls.MessageCitationsEvent|agentls.MessageRefusalEvent|agentls.SessionResumedEvent

--- The one argument of workspace/executeCommand agentls.ask.
---@class agentls.AskArguments
---@field prompt string
---@field uri? string
---@field range? agentls.Range
---@field kind? "ask"|"fix" What the code action that made it is for: ask (a question about a selection) or fix (a diagnostic).

--- A tool call waits for the user.
---@class agentls.ApprovalParams
---@field pane string
---@field turnId integer
---@field callId string
---@field tool string
---@field title string
---@field command? string For a command: the command line; for another tool, its name and arguments.
---@field diff? string For apply_patch: the unified diff of what it would change.
---@field justification? string Why the model wants to run the command outside the sandbox.
---@field review? boolean Review mode asks: deny rejects the patch.

---@class agentls.ApprovalResult
---@field decision agentls.Decision
---@field reason? string

---@class agentls.DiagnosticsParams
---@field uri? string One document, or every file when absent.

---@class agentls.DiagnosticsResult
---@field diagnostics agentls.Diagnostic[]

local M = {}

M.PROTOCOL_VERSION = 2

--- Every method of the protocol, by its constant name.
M.methods = {
  SUBMIT = "agent/submit",
  STEER = "agent/steer",
  CANCEL = "agent/cancel",
  FORK = "agent/fork",
  CLOSE_PANE = "agent/closePane",
  SET_EFFORT = "agent/setEffort",
  SET_FAST_MODE = "agent/setFastMode",
  SET_APPROVAL = "agent/setApproval",
  AUXILIARY = "agent/auxiliary",
  NEW_SESSION = "agent/newSession",
  CANCEL_TOOL = "agent/cancelTool",
  PROCESSES = "agent/processes",
  MCP_SERVERS = "agent/mcpServers",
  MCP_RESTART = "agent/mcpRestart",
  MCP_REVOKE = "agent/mcpRevoke",
  COMPACT = "agent/compact",
  INSTRUCTIONS = "agent/instructions",
  SESSIONS = "agent/sessions",
  RESUME = "agent/resume",
  DELETE_SESSION = "agent/deleteSession",
  HISTORY = "agent/history",
  SET_REVIEW = "agent/setReview",
  EVENT = "agent/event",
  REQUEST_APPROVAL = "agent/requestApproval",
  DIAGNOSTICS = "agent/diagnostics",
}

--- The error codes the server answers with, by name.
M.errors = {
  ParseError = -32700,
  InvalidRequest = -32600,
  MethodNotFound = -32601,
  InvalidParams = -32602,
  InternalError = -32603,
  RequestCancelled = -32800,
  PaneUnavailable = -32001,
  ForkAlreadyOpen = -32002,
  AgentStopped = -32003,
  PaneBusy = -32004,
  SessionNotFound = -32005,
}

--- agent/event kinds, in the order they were added.
M.event_kinds = {
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
}

return M
