/**
 * The agentls protocol as this extension uses it (camelCase JSON, as on the wire).
 *
 * The wire's types, method names and error codes are generated from the
 * server's wire schema (`server/agentls/schema/protocol.json`) into `wire.ts`
 * (`make schema`); this module re-exports them and adds what is the
 * extension's own. It imports nothing else, so the webview bundle can use it too.
 */

import { Method as WireMethod } from './wire';
import type { AgentEvent, Approval, Decision, Effort, Sandbox } from './wire';

export type {
  AbortedToolCall,
  AgentEvent,
  Approval,
  ApprovalParams,
  ApprovalResult,
  AskArguments,
  AuxiliaryParams,
  AuxiliaryResult,
  BackgroundProcess,
  CancelParams,
  CancelResult,
  CancelToolParams,
  CancelToolResult,
  Citation,
  ClosePaneParams,
  ClosePaneResult,
  CompactParams,
  CompactResult,
  CompactionFinishedEvent,
  CompactionMode,
  CompactionStartedEvent,
  Context,
  Decision,
  DeleteSessionParams,
  DeleteSessionResult,
  Diagnostic,
  DiagnosticsParams,
  DiagnosticsResult,
  Effort,
  ForkParams,
  ForkResult,
  HistoryParams,
  HistoryResult,
  InstructionsFile,
  InstructionsParams,
  InstructionsResult,
  McpRestartParams,
  McpRevokeParams,
  McpRevokeResult,
  McpServer,
  McpServersParams,
  McpServersResult,
  McpStatus,
  MessageCitationsEvent,
  MessageDeltaEvent,
  MessageRefusalEvent,
  ModelRetryEvent,
  NewSessionParams,
  NewSessionResult,
  PaneClosedEvent,
  PaneOpenedEvent,
  PlanStep,
  PlanStepStatus,
  PlanUpdatedEvent,
  Position,
  ProcessesParams,
  ProcessesResult,
  ProgressToken,
  Range,
  ReasoningDeltaEvent,
  Receipt,
  ResumeParams,
  ResumeResult,
  Sandbox,
  Selection,
  SessionEntry,
  SessionInfo,
  SessionResumedEvent,
  SessionsParams,
  SessionsResult,
  SetApprovalParams,
  SetApprovalResult,
  SetEffortParams,
  SetEffortResult,
  SetFastModeParams,
  SetFastModeResult,
  SetReviewParams,
  SetReviewResult,
  Source,
  SteerAdmittedEvent,
  SteerAppliedEvent,
  SteerParams,
  SteerResult,
  SubmitParams,
  ToolFinishedEvent,
  ToolOutputEvent,
  ToolPreparingEvent,
  ToolStartedEvent,
  ToolStatus,
  TurnFinishedEvent,
  TurnResult,
  TurnStartedEvent,
  TurnStatus,
  Usage,
  UsageEvent,
} from './wire';
export { ErrorCode, EVENT_KINDS, PROTOCOL_VERSION } from './wire';

/** Every method of the protocol, and the LSP notification the extension sends for settings. */
export const Method = {
  ...WireMethod,
  didChangeConfiguration: 'workspace/didChangeConfiguration',
} as const;

export const MAIN_PANE = 'main';

export const EFFORTS = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh'] as const;
export const DEFAULT_EFFORT: Effort = 'medium';

export function isEffort(value: unknown): value is Effort {
  return typeof value === 'string' && (EFFORTS as readonly string[]).includes(value);
}

/** When a tool call asks the user first (docs/security.md). */
export const APPROVALS = ['on-request', 'always', 'never'] as const;
export const DEFAULT_APPROVAL: Approval = 'on-request';

/** Where commands run. */
export const SANDBOXES = ['workspace-write', 'read-only', 'off'] as const;
export const DEFAULT_SANDBOX: Sandbox = 'workspace-write';

export function isApproval(value: unknown): value is Approval {
  return typeof value === 'string' && (APPROVALS as readonly string[]).includes(value);
}

export function isSandbox(value: unknown): value is Sandbox {
  return typeof value === 'string' && (SANDBOXES as readonly string[]).includes(value);
}

/** How full the model's context window is. */
export interface ContextMeter {
  tokens: number;
  window: number;
}

/** The user's answer to an approval request. */
export type ApprovalDecision = Decision;

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

export type ToolCallStatus = 'running' | 'completed' | 'failed' | 'cancelled';

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
