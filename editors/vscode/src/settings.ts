/**
 * The `agentls.*` settings and what they become: the server command line
 * (resolved in `serverCommand.ts`), `initializationOptions`, and the
 * `workspace/didChangeConfiguration` payload
 * that carries a change to the running server (no window reload needed).
 */

import {
  type ConfigurationSettings,
  DEFAULT_EFFORT,
  type Effort,
  type InitializationOptions,
  isEffort,
} from './protocol';

export const SECTION = 'agentls';
export const DEFAULT_RETENTION = 200;

export interface Settings {
  model: string;
  baseUrl: string;
  effort: Effort;
  fastMode: boolean;
  /** The full command line, already split; empty: not set. */
  serverCommand: string[];
  pythonPath: string;
  /** Start the server through `serve --reattach`: it outlives a window reload. */
  reattach: boolean;
  /** Sessions kept per workspace (0: none). */
  sessionRetention: number;
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
    serverCommand,
    pythonPath: text(config.get('pythonPath')),
    reattach: config.get<unknown>('reattach') !== false,
    sessionRetention: retention(config.get<unknown>('sessionRetention')),
  };
}

/** `initializationOptions` for `initialize`: empty settings are left to the server's defaults. */
export function initializationOptions(settings: Settings, workspace?: string): InitializationOptions {
  const options: InitializationOptions = { effort: settings.effort, fastMode: settings.fastMode };
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
  return Object.keys(change).length === 0 ? undefined : { settings: { agentls: change } };
}

/** Whether the server must be restarted for the change (its command line changed). */
export function needsRestart(previous: Settings, next: Settings): boolean {
  return (
    previous.pythonPath !== next.pythonPath ||
    previous.serverCommand.join('\u0000') !== next.serverCommand.join('\u0000') ||
    previous.reattach !== next.reattach ||
    previous.sessionRetention !== next.sessionRetention
  );
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
