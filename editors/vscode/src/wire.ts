/* generated — do not edit: made from server/agentls/schema/protocol.json by `make schema`. */

/**
 * Reasoning effort.
 */
export type Effort = "none" | "minimal" | "low" | "medium" | "high" | "xhigh";
/**
 * When a tool call asks the user first.
 */
export type Approval = "never" | "on-request" | "always";
/**
 * Where commands run: what they may write.
 */
export type Sandbox = "workspace-write" | "read-only" | "off";
export type TurnStatus = "completed" | "cancelled" | "failed";
/**
 * A tool call's outcome; cancelled when its turn was cancelled under it.
 */
export type ToolStatus = "completed" | "failed" | "cancelled";
/**
 * The user's answer to an approval request.
 */
export type Decision = "allow" | "allowSession" | "deny";
/**
 * An MCP server's state; disabled: a project server the user has not allowed.
 */
export type McpStatus = "starting" | "ready" | "failed" | "disabled";
export type CompactionMode = "summary" | "trim";
export type PlanStepStatus = "pending" | "in_progress" | "completed";
/**
 * An LSP progress token.
 */
export type ProgressToken = number | string;
/**
 * agent/event params: one event of a pane, in seq order.
 */
export type AgentEvent =
  | TurnStartedEvent
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
  | SessionResumedEvent;

/**
 * The agent/* wire protocol, described once. Edit this file, then run `make schema`: it regenerates the Python, TypeScript and Lua types (docs/architecture.md, 'The wire schema').
 */
export interface Position {
  line: number;
  character: number;
}
/**
 * An LSP range (zero-based).
 */
export interface Range {
  start: Position;
  end: Position;
}
export interface Selection {
  uri: string;
  range: Range;
  text: string;
}
/**
 * What the editor adds to a prompt.
 */
export interface Context {
  selection?: Selection;
  /**
   * URIs of the open documents.
   */
  documents?: string[];
}
/**
 * Token usage; contextTokens/contextWindow: how full the window is.
 */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  reasoningTokens: number;
  cachedTokens: number;
  /**
   * The estimated size of the conversation the next request sends.
   */
  contextTokens?: number;
  /**
   * The model's context window.
   */
  contextWindow?: number;
}
export interface AbortedToolCall {
  callId: string;
  tool: string;
}
/**
 * What cancelling a turn did.
 */
export interface Receipt {
  turnId: number;
  abortedToolCalls: AbortedToolCall[];
  killedProcesses: number;
  survivingProcesses: number;
}
/**
 * How a turn ended (agent/submit's result).
 */
export interface TurnResult {
  pane: string;
  turnId: number;
  status: TurnStatus;
  /**
   * The model's answer (empty unless completed).
   */
  finalMessage: string;
  /**
   * Present when failed: a sentence for the user.
   */
  error?: string;
  /**
   * Present when failed: what failed (a model failure's kind, stopped or internal).
   */
  failure?: string;
  usage?: Usage;
  receipt?: Receipt;
}
/**
 * One displayable piece of a stored conversation.
 */
export interface SessionEntry {
  role: "user" | "assistant" | "tool" | "steer" | "summary";
  text: string;
  tool?: string;
  status?: string;
}
export interface Citation {
  url: string;
  title?: string;
  startIndex?: number;
  endIndex?: number;
}
/**
 * A page a web search used.
 */
export interface Source {
  url: string;
  title?: string;
}
export interface PlanStep {
  step: string;
  status: PlanStepStatus;
}
/**
 * A stored session.
 */
export interface SessionInfo {
  sessionId: string;
  title: string;
  createdAt: string;
  updatedAt: string;
  turns: number;
  /**
   * Where it is open now, if it is.
   */
  pane: string | null;
  /**
   * Why it cannot be read, if it cannot.
   */
  error?: string;
}
export interface BackgroundProcess {
  processId: string;
  command: string;
  startedAt: string;
  running: boolean;
  exitCode?: number;
}
/**
 * One entry of agent/mcpServers.
 */
export interface McpServer {
  name: string;
  status: McpStatus;
  tools: number;
  toolNames: string[];
  error?: string;
  source: "options" | "user" | "project";
  transport: "stdio" | "http";
  command?: string;
  url?: string;
  restarts: number;
  notes?: string[];
}
export interface InstructionsFile {
  path: string;
  bytes: number;
}
/**
 * One problem the editor shows.
 */
export interface Diagnostic {
  uri: string;
  range: Range;
  severity?: number;
  source?: string;
  message: string;
}
export interface SubmitParams {
  pane?: string;
  prompt: string;
  context?: Context;
  workDoneToken?: ProgressToken;
}
export interface SteerParams {
  pane?: string;
  prompt: string;
  expectedTurnId?: number;
}
export interface SteerResult {
  outcome: "admitted" | "promoted";
  turnId: number;
}
export interface CancelParams {
  pane?: string;
  turnId?: number;
}
export interface CancelResult {
  cancelled: number;
  receipts: Receipt[];
}
export interface ForkParams {
  pane?: string;
}
export interface ForkResult {
  pane: string;
  items: number;
}
export interface ClosePaneParams {
  pane: string;
}
export interface ClosePaneResult {
  cancelled: number;
}
export interface SetEffortParams {
  pane?: string;
  effort: Effort;
}
export interface SetEffortResult {
  pane: string;
  effort: Effort;
}
export interface SetFastModeParams {
  pane?: string;
  enabled: boolean;
}
export interface SetFastModeResult {
  pane: string;
  enabled: boolean;
}
export interface SetApprovalParams {
  pane?: string;
  approval: Approval;
}
export interface SetApprovalResult {
  pane: string;
  approval: Approval;
}
export interface AuxiliaryParams {
  pane?: string;
  prompt: string;
  context?: "clean" | "conversation";
}
export interface AuxiliaryResult {
  text: string;
}
export interface NewSessionParams {
  pane?: string;
}
export interface NewSessionResult {
  pane: string;
  sessionId: string;
}
export interface CancelToolParams {
  pane?: string;
  callId: string;
}
export interface CancelToolResult {
  cancelled: boolean;
  killedProcesses: number;
}
export interface ProcessesParams {
  pane?: string;
}
export interface ProcessesResult {
  processes: BackgroundProcess[];
}
export interface McpServersParams {}
export interface McpServersResult {
  servers: McpServer[];
  problems?: string[];
}
export interface McpRestartParams {
  name: string;
}
export interface McpRevokeParams {
  /**
   * None: every server of the project's .mcp.json.
   */
  name?: string;
}
export interface McpRevokeResult {
  revoked: string[];
}
export interface CompactParams {
  pane?: string;
  /**
   * What the summary should keep in particular.
   */
  focus?: string;
}
export interface CompactResult {
  beforeTokens: number;
  afterTokens: number;
  mode: CompactionMode;
}
export interface InstructionsParams {
  pane?: string;
}
export interface InstructionsResult {
  files: InstructionsFile[];
  bytes: number;
  cutBytes: number;
}
export interface SessionsParams {
  limit?: number;
}
export interface SessionsResult {
  sessions: SessionInfo[];
}
export interface ResumeParams {
  pane?: string;
  sessionId: string;
}
export interface ResumeResult {
  pane: string;
  sessionId: string;
  turns: number;
  title: string;
  interrupted: boolean;
  unsent: string[];
}
export interface DeleteSessionParams {
  sessionId: string;
}
export interface DeleteSessionResult {
  deleted: true;
}
export interface HistoryParams {
  pane?: string;
  sinceSeq?: number;
}
export interface HistoryResult {
  pane: string;
  sessionId: string;
  events: AgentEvent[];
  lastSeq: number;
  complete: boolean;
  runningTurnId: number | null;
}
export interface TurnStartedEvent {
  pane: string;
  seq: number;
  kind: "turn.started";
  turnId: number;
  prompt: string;
  /**
   * The turn's number in the pane's session, from 1, without gaps.
   */
  number: number;
}
export interface MessageDeltaEvent {
  pane: string;
  seq: number;
  kind: "message.delta";
  turnId: number;
  text: string;
}
export interface ReasoningDeltaEvent {
  pane: string;
  seq: number;
  kind: "reasoning.delta";
  turnId: number;
  text: string;
}
export interface ToolStartedEvent {
  pane: string;
  seq: number;
  kind: "tool.started";
  turnId: number;
  callId: string;
  tool: string;
  title: string;
  /**
   * The call's arguments.
   */
  arguments: {
    [k: string]: unknown;
  };
}
export interface ToolOutputEvent {
  pane: string;
  seq: number;
  kind: "tool.output";
  turnId: number;
  callId: string;
  text: string;
}
export interface ToolFinishedEvent {
  pane: string;
  seq: number;
  kind: "tool.finished";
  turnId: number;
  callId: string;
  status: ToolStatus;
  exitCode?: number;
  sources?: Source[];
  /**
   * apply_patch: the unified diff of what it changed.
   */
  diff?: string;
}
export interface SteerAdmittedEvent {
  pane: string;
  seq: number;
  kind: "steer.admitted";
  turnId: number;
  text: string;
}
export interface SteerAppliedEvent {
  pane: string;
  seq: number;
  kind: "steer.applied";
  turnId: number;
  text: string;
}
export interface UsageEvent {
  pane: string;
  seq: number;
  kind: "usage";
  turnId: number;
  inputTokens: number;
  outputTokens: number;
  reasoningTokens: number;
  cachedTokens: number;
  /**
   * The estimated size of the conversation the next request sends.
   */
  contextTokens?: number;
  /**
   * The model's context window.
   */
  contextWindow?: number;
}
export interface TurnFinishedEvent {
  pane: string;
  seq: number;
  kind: "turn.finished";
  turnId: number;
  status: TurnStatus;
  finalMessage: string;
  error?: string;
  failure?: string;
  usage: Usage;
  receipt?: Receipt;
}
export interface PaneOpenedEvent {
  pane: string;
  seq: number;
  kind: "pane.opened";
  turnId: null;
  sessionId?: string;
  entries?: SessionEntry[];
  items?: number;
  promotedFrom?: string;
}
export interface PaneClosedEvent {
  pane: string;
  seq: number;
  kind: "pane.closed";
  turnId: null;
  promotedTo?: string;
}
export interface ModelRetryEvent {
  pane: string;
  seq: number;
  kind: "model.retry";
  turnId: number;
  attempt: number;
  maxAttempts: number;
  delayMs: number;
  /**
   * When the next attempt goes (milliseconds since the epoch).
   */
  retryAt: number;
  /**
   * What failed: rate_limit, server, connection, timeout, stream.
   */
  failure: string;
  reason: string;
}
export interface PlanUpdatedEvent {
  pane: string;
  seq: number;
  kind: "plan.updated";
  turnId: number;
  explanation?: string;
  plan: PlanStep[];
}
export interface ToolPreparingEvent {
  pane: string;
  seq: number;
  kind: "tool.preparing";
  turnId: number;
  tool: string;
  title: string;
  chars: number;
}
export interface CompactionStartedEvent {
  pane: string;
  seq: number;
  kind: "compaction.started";
  /**
   * The turn it happened in; null outside a turn.
   */
  turnId: number | null;
  reason: "auto" | "overflow" | "manual";
  beforeTokens: number;
}
export interface CompactionFinishedEvent {
  pane: string;
  seq: number;
  kind: "compaction.finished";
  /**
   * The turn it happened in; null outside a turn.
   */
  turnId: number | null;
  beforeTokens: number;
  afterTokens: number;
  mode: CompactionMode;
  summary?: string;
}
export interface MessageCitationsEvent {
  pane: string;
  seq: number;
  kind: "message.citations";
  turnId: number;
  citations: Citation[];
}
export interface MessageRefusalEvent {
  pane: string;
  seq: number;
  kind: "message.refusal";
  turnId: number;
  text: string;
}
export interface SessionResumedEvent {
  pane: string;
  seq: number;
  kind: "session.resumed";
  turnId: null;
  sessionId: string;
  title: string;
  turns: number;
  entries: SessionEntry[];
  interrupted: boolean;
  unsent: string[];
  notice?: string;
}
export interface SetReviewParams {
  pane?: string;
  enabled: boolean;
}
export interface SetReviewResult {
  pane: string;
  enabled: boolean;
}
/**
 * The one argument of workspace/executeCommand agentls.ask.
 */
export interface AskArguments {
  prompt: string;
  uri?: string;
  range?: Range;
  /**
   * What the code action that made it is for: ask (a question about a selection) or fix (a diagnostic).
   */
  kind?: "ask" | "fix";
}
/**
 * A tool call waits for the user.
 */
export interface ApprovalParams {
  pane: string;
  turnId: number;
  callId: string;
  tool: string;
  title: string;
  /**
   * For a command: the command line; for another tool, its name and arguments.
   */
  command?: string;
  /**
   * For apply_patch: the unified diff of what it would change.
   */
  diff?: string;
  /**
   * Why the model wants to run the command outside the sandbox.
   */
  justification?: string;
  /**
   * Review mode asks: deny rejects the patch.
   */
  review?: boolean;
}
export interface ApprovalResult {
  decision: Decision;
  reason?: string;
}
export interface DiagnosticsParams {
  /**
   * One document, or every file when absent.
   */
  uri?: string;
}
export interface DiagnosticsResult {
  diagnostics: Diagnostic[];
}

export const PROTOCOL_VERSION = 2;

/** Every method of the protocol. */
export const Method = {
  submit: 'agent/submit',
  steer: 'agent/steer',
  cancel: 'agent/cancel',
  fork: 'agent/fork',
  closePane: 'agent/closePane',
  setEffort: 'agent/setEffort',
  setFastMode: 'agent/setFastMode',
  setApproval: 'agent/setApproval',
  auxiliary: 'agent/auxiliary',
  newSession: 'agent/newSession',
  cancelTool: 'agent/cancelTool',
  processes: 'agent/processes',
  mcpServers: 'agent/mcpServers',
  mcpRestart: 'agent/mcpRestart',
  mcpRevoke: 'agent/mcpRevoke',
  compact: 'agent/compact',
  instructions: 'agent/instructions',
  sessions: 'agent/sessions',
  resume: 'agent/resume',
  deleteSession: 'agent/deleteSession',
  history: 'agent/history',
  setReview: 'agent/setReview',
  event: 'agent/event',
  requestApproval: 'agent/requestApproval',
  diagnostics: 'agent/diagnostics',
} as const;

/** The error codes the server answers with. */
export const ErrorCode = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  requestCancelled: -32800,
  paneUnavailable: -32001,
  forkAlreadyOpen: -32002,
  agentStopped: -32003,
  paneBusy: -32004,
  sessionNotFound: -32005,
} as const;

/** agent/event kinds, in the order they were added. */
export const EVENT_KINDS = [
  'turn.started',
  'message.delta',
  'reasoning.delta',
  'tool.started',
  'tool.output',
  'tool.finished',
  'steer.admitted',
  'steer.applied',
  'usage',
  'turn.finished',
  'pane.opened',
  'pane.closed',
  'model.retry',
  'plan.updated',
  'tool.preparing',
  'compaction.started',
  'compaction.finished',
  'message.citations',
  'message.refusal',
  'session.resumed',
] as const;
