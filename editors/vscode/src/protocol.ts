/**
 * The part of the agentls protocol (version 2) this extension uses, as it is on the wire (camelCase JSON).
 *
 * The contract is `docs/protocol.md`; the server's `protocol/methods.py` and
 * `protocol/convert.py` are authoritative. This module holds types and names
 * only: it imports nothing, so the webview bundle can use it too.
 */

export const PROTOCOL_VERSION = 2;

export const Method = {
  submit: 'agent/submit',
  steer: 'agent/steer',
  cancel: 'agent/cancel',
  fork: 'agent/fork',
  closePane: 'agent/closePane',
  setEffort: 'agent/setEffort',
  setFastMode: 'agent/setFastMode',
  auxiliary: 'agent/auxiliary',
  newSession: 'agent/newSession',
  setApproval: 'agent/setApproval',
  setReview: 'agent/setReview',
  cancelTool: 'agent/cancelTool',
  processes: 'agent/processes',
  requestApproval: 'agent/requestApproval',
  diagnostics: 'agent/diagnostics',
  mcpServers: 'agent/mcpServers',
  mcpRestart: 'agent/mcpRestart',
  mcpRevoke: 'agent/mcpRevoke',
  compact: 'agent/compact',
  instructions: 'agent/instructions',
  sessions: 'agent/sessions',
  resume: 'agent/resume',
  deleteSession: 'agent/deleteSession',
  history: 'agent/history',
  event: 'agent/event',
  didChangeConfiguration: 'workspace/didChangeConfiguration',
} as const;

export const MAIN_PANE = 'main';

export const EFFORTS = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh'] as const;
export type Effort = (typeof EFFORTS)[number];
export const DEFAULT_EFFORT: Effort = 'medium';

export function isEffort(value: unknown): value is Effort {
  return typeof value === 'string' && (EFFORTS as readonly string[]).includes(value);
}

/** When a tool call asks the user first (docs/security.md). */
export const APPROVALS = ['on-request', 'always', 'never'] as const;
export type Approval = (typeof APPROVALS)[number];
export const DEFAULT_APPROVAL: Approval = 'on-request';

/** Where commands run. */
export const SANDBOXES = ['workspace-write', 'read-only', 'off'] as const;
export type Sandbox = (typeof SANDBOXES)[number];
export const DEFAULT_SANDBOX: Sandbox = 'workspace-write';

export function isApproval(value: unknown): value is Approval {
  return typeof value === 'string' && (APPROVALS as readonly string[]).includes(value);
}

export function isSandbox(value: unknown): value is Sandbox {
  return typeof value === 'string' && (SANDBOXES as readonly string[]).includes(value);
}

/** JSON-RPC error codes the server uses. */
export const ErrorCode = {
  invalidParams: -32602,
  internalError: -32603,
  paneUnavailable: -32001,
  forkAlreadyOpen: -32002,
  agentStopped: -32003,
  paneBusy: -32004,
  sessionNotFound: -32005,
  requestCancelled: -32800,
} as const;

export interface Position {
  line: number;
  character: number;
}

export interface Range {
  start: Position;
  end: Position;
}

export interface Selection {
  uri: string;
  range: Range;
  text: string;
}

export interface Context {
  selection?: Selection;
  documents?: string[];
}

export type ProgressToken = string | number;

export interface SubmitParams {
  pane?: string;
  prompt: string;
  context?: Context;
  workDoneToken?: ProgressToken;
}

export type TurnStatus = 'completed' | 'cancelled' | 'failed';

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  reasoningTokens: number;
  cachedTokens: number;
  /** The estimated size of the conversation the next request sends (the context meter). */
  contextTokens?: number;
  /** The model's context window. */
  contextWindow?: number;
}

/** How full the model's context window is. */
export interface ContextMeter {
  tokens: number;
  window: number;
}

export interface AbortedToolCall {
  callId: string;
  tool: string;
}

/** What cancelling a turn did. */
export interface Receipt {
  turnId: number;
  abortedToolCalls: AbortedToolCall[];
  killedProcesses: number;
  survivingProcesses: number;
}

export interface TurnResult {
  pane: string;
  turnId: number;
  status: TurnStatus;
  finalMessage: string;
  error?: string;
  /** What failed, when `status` is failed: a model failure's kind (`auth`, `connection`, …), `stopped` or `internal`. */
  failure?: string;
  usage?: Usage;
  receipt?: Receipt;
}

export interface SteerParams {
  pane?: string;
  prompt: string;
  expectedTurnId?: number;
}

export interface SteerResult {
  outcome: 'admitted' | 'promoted';
  turnId: number;
}

export interface CancelResult {
  cancelled: number;
  receipts: Receipt[];
}

export interface ForkResult {
  pane: string;
  items: number;
}

export interface ClosePaneResult {
  cancelled: number;
}

export interface SetEffortResult {
  pane: string;
  effort: Effort;
}

export interface SetFastModeResult {
  pane: string;
  enabled: boolean;
}

export interface NewSessionResult {
  pane: string;
  sessionId: string;
}

export interface CancelToolResult {
  cancelled: boolean;
  killedProcesses: number;
}

/** `agent/requestApproval` (server → client): a tool call waits for the user. */
export interface ApprovalParams {
  pane: string;
  turnId: number;
  callId: string;
  tool: string;
  title: string;
  /** A command (exec_command, start_process, …). */
  command?: string;
  /** A patch, as a unified diff of the files it changes. */
  diff?: string;
  /** Why the model wants to run the command outside the sandbox. */
  justification?: string;
  /** Review mode: the patch waits for Accept or Reject (whatever the approval policy). */
  review?: boolean;
}

export type ApprovalDecision = 'allow' | 'allowSession' | 'deny';

export interface ApprovalResult {
  decision: ApprovalDecision;
  reason?: string;
}

export interface BackgroundProcess {
  processId: string;
  command: string;
  startedAt: string;
  running: boolean;
  exitCode?: number;
}

export type CompactionMode = 'summary' | 'trim';

export interface CompactResult {
  beforeTokens: number;
  afterTokens: number;
  mode: CompactionMode;
}

export interface InstructionsResult {
  /** The AGENTS.md files in force, in the order the model reads them. */
  files: Array<{ path: string; bytes: number }>;
  bytes: number;
  /** Bytes cut away to stay within 32 KiB. */
  cutBytes: number;
}

/** A stored session (`agent/sessions`). */
export interface SessionInfo {
  sessionId: string;
  title: string;
  createdAt: string;
  updatedAt: string;
  turns: number;
  /** Where it is open now, if it is. */
  pane: string | null;
  /** Why it cannot be read, if it cannot. */
  error?: string;
}

export interface SessionsResult {
  sessions: SessionInfo[];
}

export interface ResumeResult {
  pane: string;
  sessionId: string;
  turns: number;
  title: string;
  interrupted: boolean;
  unsent: string[];
}

export interface HistoryResult {
  pane: string;
  sessionId: string;
  events: AgentEvent[];
  lastSeq: number;
  complete: boolean;
  runningTurnId: number | null;
}

/** One displayable piece of a stored conversation. */
export interface SessionEntry {
  role: 'user' | 'assistant' | 'tool' | 'steer' | 'summary';
  text: string;
  tool?: string;
  status?: string;
}

/** `capabilities.experimental.agentls` of the `initialize` result. */
export interface AgentCapabilities {
  protocolVersion: number;
  maxForks: number;
  efforts: string[];
  methods: string[];
  eventKinds?: string[];
  /** The configured model and its context window. */
  model?: string;
  contextWindow?: number;
  /** This connection attached to a server that was already running (`serve --reattach`). */
  attached?: boolean;
  /** The panes open in it then. */
  panes?: string[];
  /** No API key and no base URL: what to set (no model can be reached). */
  missingCredentials?: string;
}

export interface InitializationOptions {
  model?: string;
  baseUrl?: string;
  effort?: Effort;
  fastMode?: boolean;
  workspace?: string;
  approval?: Approval;
  sandbox?: Sandbox;
  network?: boolean;
  idleTimeout?: number;
  /** `{NAME: {command, args?, env?} | {type: 'http', url, headers?}}` */
  mcpServers?: Record<string, unknown>;
  webSearch?: boolean;
  contextWindow?: number;
  autoCompact?: number;
  sessionRetention?: number;
  review?: boolean;
}

// --- MCP servers ----------------------------------------------------------------------

/** `disabled`: a project server the user has not allowed. */
export type McpStatus = 'starting' | 'ready' | 'failed' | 'disabled';

/** One entry of `agent/mcpServers`. */
export interface McpServer {
  name: string;
  status: McpStatus;
  tools: number;
  toolNames: string[];
  error?: string;
  source: 'options' | 'user' | 'project';
  transport: 'stdio' | 'http';
  command?: string;
  url?: string;
  restarts: number;
  notes?: string[];
}

export interface McpServersResult {
  servers: McpServer[];
  problems?: string[];
}

export interface McpRevokeResult {
  revoked: string[];
}

/** The settings section `workspace/didChangeConfiguration` carries. */
export interface ConfigurationSettings {
  agentls: {
    model: string;
    baseUrl: string;
    effort: Effort;
    fastMode: boolean;
    approval: Approval;
    webSearch: boolean;
    review: boolean;
  };
}

// --- agent/event --------------------------------------------------------------------

interface EventBase {
  pane: string;
  seq: number;
}

interface TurnEventBase extends EventBase {
  turnId: number;
}

export interface TurnStartedEvent extends TurnEventBase {
  kind: 'turn.started';
  prompt: string;
  /** The turn's number in the pane's session, from 1, without gaps: "turn N". */
  number?: number;
}

export interface MessageDeltaEvent extends TurnEventBase {
  kind: 'message.delta';
  text: string;
}

export interface ReasoningDeltaEvent extends TurnEventBase {
  kind: 'reasoning.delta';
  text: string;
}

export interface ToolStartedEvent extends TurnEventBase {
  kind: 'tool.started';
  callId: string;
  tool: string;
  title: string;
  arguments: unknown;
}

export interface ToolOutputEvent extends TurnEventBase {
  kind: 'tool.output';
  callId: string;
  text: string;
}

export type ToolCallStatus = 'running' | 'completed' | 'failed' | 'cancelled';

/** A page a web search used. */
export interface Source {
  url: string;
  title?: string;
}

export interface ToolFinishedEvent extends TurnEventBase {
  kind: 'tool.finished';
  callId: string;
  status: Exclude<ToolCallStatus, 'running'>;
  exitCode?: number;
  sources?: Source[];
  /** `apply_patch`: the unified diff of what it changed. */
  diff?: string;
}

/** The model is writing a tool call ("Writing a patch…"). */
export interface ToolPreparingEvent extends TurnEventBase {
  kind: 'tool.preparing';
  tool: string;
  title: string;
  chars: number;
}

export interface SteerAdmittedEvent extends TurnEventBase {
  kind: 'steer.admitted';
  text: string;
}

export interface SteerAppliedEvent extends TurnEventBase {
  kind: 'steer.applied';
  text: string;
}

export interface UsageEvent extends TurnEventBase, Usage {
  kind: 'usage';
}

export interface TurnFinishedEvent extends TurnEventBase {
  kind: 'turn.finished';
  status: TurnStatus;
  finalMessage: string;
  error?: string;
  failure?: string;
  usage?: Usage;
  receipt?: Receipt;
}

export interface ModelRetryEvent extends TurnEventBase {
  kind: 'model.retry';
  attempt: number;
  maxAttempts: number;
  delayMs: number;
  /** When the next attempt goes (milliseconds since the epoch). */
  retryAt?: number;
  /** What failed: `rate_limit`, `server`, `connection`, `timeout`, `stream`. */
  failure?: string;
  reason: string;
}

export type PlanStepStatus = 'pending' | 'in_progress' | 'completed';

export interface PlanStep {
  step: string;
  status: PlanStepStatus;
}

export interface PlanUpdatedEvent extends TurnEventBase {
  kind: 'plan.updated';
  explanation?: string;
  plan: PlanStep[];
}

interface CompactionEventBase extends EventBase {
  /** The turn it happened in; null for `agent/compact`. */
  turnId: number | null;
}

export interface CompactionStartedEvent extends CompactionEventBase {
  kind: 'compaction.started';
  reason: 'auto' | 'overflow' | 'manual';
  beforeTokens: number;
}

export interface CompactionFinishedEvent extends CompactionEventBase {
  kind: 'compaction.finished';
  beforeTokens: number;
  afterTokens: number;
  mode: CompactionMode;
  summary?: string;
}

export interface Citation {
  url: string;
  title?: string;
  startIndex?: number;
  endIndex?: number;
}

export interface MessageCitationsEvent extends TurnEventBase {
  kind: 'message.citations';
  citations: Citation[];
}

export interface MessageRefusalEvent extends TurnEventBase {
  kind: 'message.refusal';
  text: string;
}

export interface PaneOpenedEvent extends EventBase {
  kind: 'pane.opened';
  turnId: null;
  sessionId?: string;
  /** The conversation the pane starts with (what a fork inherited). */
  entries?: SessionEntry[];
  items?: number;
  promotedFrom?: string;
}

export interface SessionResumedEvent extends EventBase {
  kind: 'session.resumed';
  turnId: null;
  sessionId: string;
  title: string;
  turns: number;
  entries: SessionEntry[];
  interrupted: boolean;
  unsent: string[];
  notice?: string;
}

export interface PaneClosedEvent extends EventBase {
  kind: 'pane.closed';
  turnId: null;
  promotedTo?: string;
}

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
  | ModelRetryEvent
  | PlanUpdatedEvent
  | ToolPreparingEvent
  | CompactionStartedEvent
  | CompactionFinishedEvent
  | MessageCitationsEvent
  | MessageRefusalEvent
  | PaneOpenedEvent
  | PaneClosedEvent
  | SessionResumedEvent;

export type AgentEventKind = AgentEvent['kind'];

// --- $/progress (work done) ---------------------------------------------------------

export interface WorkDoneProgressBegin {
  kind: 'begin';
  title: string;
  cancellable?: boolean;
  message?: string;
  percentage?: number;
}

export interface WorkDoneProgressReport {
  kind: 'report';
  cancellable?: boolean;
  message?: string;
  percentage?: number;
}

export interface WorkDoneProgressEnd {
  kind: 'end';
  message?: string;
}

export type WorkDoneProgress = WorkDoneProgressBegin | WorkDoneProgressReport | WorkDoneProgressEnd;
