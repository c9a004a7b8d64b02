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
  /** This connection attached to a server that was already running (`serve --reattach`). */
  attached?: boolean;
  /** The panes open in it then. */
  panes?: string[];
}

export interface InitializationOptions {
  model?: string;
  baseUrl?: string;
  effort?: Effort;
  fastMode?: boolean;
  workspace?: string;
  sessionRetention?: number;
}

/** The settings section `workspace/didChangeConfiguration` carries. */
export interface ConfigurationSettings {
  agentls: {
    model: string;
    baseUrl: string;
    effort: Effort;
    fastMode: boolean;
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

export interface ToolFinishedEvent extends TurnEventBase {
  kind: 'tool.finished';
  callId: string;
  status: Exclude<ToolCallStatus, 'running'>;
  exitCode?: number;
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
  usage?: Usage;
  receipt?: Receipt;
}

export interface ModelRetryEvent extends TurnEventBase {
  kind: 'model.retry';
  attempt: number;
  maxAttempts: number;
  delayMs: number;
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
