/**
 * The `agentls.*` settings and what they become: the server command line
 * (resolved in `serverCommand.ts`), `initializationOptions`, and the
 * `workspace/didChangeConfiguration` payload
 * that carries a change to the running server (no window reload needed).
 */

import {
  type Approval,
  type ConfigurationSettings,
  DEFAULT_APPROVAL,
  DEFAULT_EFFORT,
  DEFAULT_SANDBOX,
  type Effort,
  type InitializationOptions,
  type Sandbox,
  isApproval,
  isEffort,
  isSandbox,
} from './protocol';

export const SECTION = 'agentls';
export const DEFAULT_RETENTION = 200;

export interface Settings {
  model: string;
  baseUrl: string;
  effort: Effort;
  fastMode: boolean;
  /** When tool calls ask first; changes apply to the running server. */
  approval: Approval;
  /** Where commands run; a change needs a server restart. */
  sandbox: Sandbox;
  /** Sandboxed commands may use the network; a change needs a restart. */
  network: boolean;
  /** Seconds of model silence before a stream counts as stalled (0: the server's default). */
  idleTimeout: number;
  /** The full command line, already split; empty: not set. */
  serverCommand: string[];
  pythonPath: string;
  /** `agentls.mcpServers`: sent as `initializationOptions.mcpServers` (applies at start). */
  mcpServers: Record<string, unknown>;
  webSearch: boolean;
  /** Tokens; 0: the model's own window (the server's table). */
  contextWindow: number;
  /** Share of the window above which the conversation is compacted; 0: never on its own. */
  autoCompact: number;
  /** Start the server through `serve --reattach`: it outlives a window reload. */
  reattach: boolean;
  /** Sessions kept per workspace (0: none). */
  sessionRetention: number;
  /** Review mode: every patch waits in the diff editor for Accept or Reject. */
  review: boolean;
  /** Save a document after the agent edited it (never one with unsaved changes of yours). */
  saveAfterEdit: boolean;
  /** Where transcripts show: a view in the secondary side bar, or editor tabs. */
  transcriptLocation: TranscriptLocation;
}

export type TranscriptLocation = 'sideBar' | 'editor';

export const DEFAULT_AUTO_COMPACT = 0.85;

function number(value: unknown, fallback: number, valid: (n: number) => boolean): number {
  return typeof value === 'number' && Number.isFinite(value) && valid(value) ? value : fallback;
}

/** `vscode.WorkspaceConfiguration` has this shape. */
export interface ConfigurationReader {
  get<T>(key: string): T | undefined;
}

function retention(value: unknown): number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : DEFAULT_RETENTION;
}

function text(value: unknown): string {
  return typeof value === 'string' ? value.trim() : '';
}

export function readSettings(config: ConfigurationReader): Settings {
  const effort = config.get<unknown>('effort');
  const approval = config.get<unknown>('approval');
  const sandbox = config.get<unknown>('sandbox');
  const idleTimeout = config.get<unknown>('idleTimeout');
  const command = config.get<unknown>('serverCommand');
  let serverCommand: string[] = [];
  if (Array.isArray(command)) {
    serverCommand = command.filter((part): part is string => typeof part === 'string' && part !== '');
  } else if (typeof command === 'string') {
    serverCommand = splitCommandLine(command);
  }
  return {
    model: text(config.get('model')),
    baseUrl: text(config.get('baseUrl')),
    effort: isEffort(effort) ? effort : DEFAULT_EFFORT,
    fastMode: config.get<unknown>('fastMode') === true,
    approval: isApproval(approval) ? approval : DEFAULT_APPROVAL,
    sandbox: isSandbox(sandbox) ? sandbox : DEFAULT_SANDBOX,
    network: config.get<unknown>('network') === true,
    idleTimeout: typeof idleTimeout === 'number' && idleTimeout > 0 ? idleTimeout : 0,
    serverCommand,
    pythonPath: text(config.get('pythonPath')),
    mcpServers: objectOf(config.get('mcpServers')),
    webSearch: config.get<unknown>('webSearch') === true,
    contextWindow: Math.floor(number(config.get('contextWindow'), 0, (n) => n === 0 || n >= 1024)),
    autoCompact: number(config.get('autoCompact'), DEFAULT_AUTO_COMPACT, (n) => n >= 0 && n < 1),
    reattach: config.get<unknown>('reattach') !== false,
    sessionRetention: retention(config.get<unknown>('sessionRetention')),
    review: config.get<unknown>('review') === true,
    saveAfterEdit: config.get<unknown>('saveAfterEdit') !== false,
    transcriptLocation: config.get<unknown>('transcriptLocation') === 'editor' ? 'editor' : 'sideBar',
  };
}

function objectOf(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** `initializationOptions` for `initialize`: empty settings are left to the server's defaults. */
export function initializationOptions(settings: Settings, workspace?: string): InitializationOptions {
  const options: InitializationOptions = {
    effort: settings.effort,
    fastMode: settings.fastMode,
    approval: settings.approval,
    sandbox: settings.sandbox,
    network: settings.network,
    webSearch: settings.webSearch,
    autoCompact: settings.autoCompact,
  };
  if (settings.review) {
    options.review = true;
  }
  if (settings.idleTimeout > 0) {
    options.idleTimeout = settings.idleTimeout;
  }
  if (settings.contextWindow > 0) {
    options.contextWindow = settings.contextWindow;
  }
  if (settings.sessionRetention !== DEFAULT_RETENTION) {
    options.sessionRetention = settings.sessionRetention;
  }
  if (settings.model !== '') {
    options.model = settings.model;
  }
  if (settings.baseUrl !== '') {
    options.baseUrl = settings.baseUrl;
  }
  if (workspace !== undefined) {
    options.workspace = workspace;
  }
  if (Object.keys(settings.mcpServers).length > 0) {
    options.mcpServers = settings.mcpServers;
  }
  return options;
}

export type ConfigurationChange = Partial<ConfigurationSettings['agentls']>;

/**
 * The `settings` of `workspace/didChangeConfiguration` for what changed
 * between two readings, or undefined when the server need not hear of it.
 * Only changed keys are sent: an effort chosen with AgentLS: Set Effort stays
 * when, say, only the model changes. The server ignores an empty model or
 * base URL, so clearing one takes effect at the next server start.
 */
export function configurationChange(
  previous: Settings,
  next: Settings,
): { settings: { agentls: ConfigurationChange } } | undefined {
  const change: ConfigurationChange = {};
  if (next.model !== previous.model) {
    change.model = next.model;
  }
  if (next.baseUrl !== previous.baseUrl) {
    change.baseUrl = next.baseUrl;
  }
  if (next.effort !== previous.effort) {
    change.effort = next.effort;
  }
  if (next.fastMode !== previous.fastMode) {
    change.fastMode = next.fastMode;
  }
  if (next.approval !== previous.approval) {
    change.approval = next.approval;
  }
  if (next.webSearch !== previous.webSearch) {
    change.webSearch = next.webSearch;
  }
  if (next.review !== previous.review) {
    change.review = next.review;
  }
  return Object.keys(change).length === 0 ? undefined : { settings: { agentls: change } };
}

/**
 * The settings that were cleared (set to empty) and that the running server
 * keeps until it restarts: it takes an empty model or base URL as "no
 * change", so going back to the default needs a new server.
 */
export function clearedUntilRestart(previous: Settings, next: Settings): string[] {
  const cleared: string[] = [];
  if (previous.model !== '' && next.model === '') {
    cleared.push(`${SECTION}.model`);
  }
  if (previous.baseUrl !== '' && next.baseUrl === '') {
    cleared.push(`${SECTION}.baseUrl`);
  }
  return cleared;
}

/**
 * Whether the server must be restarted for the change: its command line, or
 * a setting it takes only when it starts (the context window, auto-compaction).
 */
export function needsRestart(previous: Settings, next: Settings): boolean {
  return (
    previous.pythonPath !== next.pythonPath ||
    previous.serverCommand.join('\u0000') !== next.serverCommand.join('\u0000') ||
    previous.sandbox !== next.sandbox ||
    previous.network !== next.network ||
    previous.idleTimeout !== next.idleTimeout ||
    previous.contextWindow !== next.contextWindow ||
    previous.autoCompact !== next.autoCompact ||
    previous.reattach !== next.reattach ||
    previous.sessionRetention !== next.sessionRetention
  );
}

/** What changed that needs a restart, for the offer to restart. */
export function restartReason(previous: Settings, next: Settings): string {
  if (previous.sandbox !== next.sandbox || previous.network !== next.network) {
    return 'the sandbox settings changed';
  }
  if (previous.idleTimeout !== next.idleTimeout) {
    return 'the idle timeout changed';
  }
  if (previous.contextWindow !== next.contextWindow || previous.autoCompact !== next.autoCompact) {
    return 'the context window settings changed';
  }
  if (previous.sessionRetention !== next.sessionRetention) {
    return 'the session retention changed';
  }
  return 'the server command changed';
}

/** Whether `agentls.mcpServers` changed (it applies when the server starts). */
export function mcpChanged(previous: Settings, next: Settings): boolean {
  return JSON.stringify(previous.mcpServers) !== JSON.stringify(next.mcpServers);
}

/** Split a command line like a POSIX shell would for plain words, quotes and backslashes. */
export function splitCommandLine(line: string): string[] {
  const words: string[] = [];
  let current = '';
  let inWord = false;
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (quote === "'") {
      if (ch === "'") {
        quote = undefined;
      } else {
        current += ch;
      }
    } else if (quote === '"') {
      if (ch === '"') {
        quote = undefined;
      } else if (ch === '\\' && i + 1 < line.length && '"\\$`'.includes(line[i + 1])) {
        current += line[++i];
      } else {
        current += ch;
      }
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      inWord = true;
    } else if (ch === '\\' && i + 1 < line.length) {
      current += line[++i];
      inWord = true;
    } else if (/\s/.test(ch)) {
      if (inWord) {
        words.push(current);
        current = '';
        inWord = false;
      }
    } else {
      current += ch;
      inWord = true;
    }
  }
  if (inWord) {
    words.push(current);
  }
  return words;
}
