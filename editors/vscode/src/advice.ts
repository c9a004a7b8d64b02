/**
 * What to do about a failure, by its kind (`failure` of a failed turn or of
 * `model.retry`, `missingCredentials` at start-up): the buttons that go with
 * the error. Chosen from the typed kind, never from the message's words.
 * Pure, shared with the webview (which shows the buttons).
 */

/** The settings a button may open (the webview can ask for these and no others). */
export const ADVISED_SETTINGS = ['agentls.baseUrl', 'agentls.model', 'agentls.idleTimeout'] as const;
export type AdvisedSetting = (typeof ADVISED_SETTINGS)[number];

/** The commands a button may run. */
export const ADVISED_COMMANDS = ['agentls.compact', 'agentls.showServerLog'] as const;
export type AdvisedCommand = (typeof ADVISED_COMMANDS)[number];

export type AdviceAction =
  | { kind: 'openSetting'; setting: AdvisedSetting }
  | { kind: 'apiKeyHelp' }
  | { kind: 'command'; command: AdvisedCommand };

export interface Advice {
  /** The button's label: "Open agentls.baseUrl". */
  label: string;
  action: AdviceAction;
}

export const API_KEY_HELP = 'How to provide OPENAI_API_KEY to VS Code';

function setting(name: AdvisedSetting): Advice {
  return { label: `Open ${name}`, action: { kind: 'openSetting', setting: name } };
}

const KEY: Advice = { label: API_KEY_HELP, action: { kind: 'apiKeyHelp' } };
const LOG: Advice = { label: 'Show Server Log', action: { kind: 'command', command: 'agentls.showServerLog' } };

/** The buttons for a failure kind (none when waiting or another try is all that helps). */
export function adviceFor(failure: string | undefined): Advice[] {
  switch (failure) {
    case 'connection':
      return [setting('agentls.baseUrl')];
    case 'timeout':
      return [setting('agentls.idleTimeout'), setting('agentls.baseUrl')];
    case 'auth':
      return [KEY, setting('agentls.baseUrl')];
    case 'missingCredentials':
      return [KEY, setting('agentls.baseUrl')];
    case 'invalid_request':
      return [setting('agentls.baseUrl'), setting('agentls.model')];
    case 'unsupported':
      return [setting('agentls.model')];
    case 'context_length':
      return [{ label: 'Compact Conversation', action: { kind: 'command', command: 'agentls.compact' } }];
    case 'internal':
    case 'stopped':
      return [LOG];
    default:
      return [];
  }
}

/** An action the webview sent, checked: only the settings and commands above. */
export function isAdviceAction(value: unknown): value is AdviceAction {
  if (typeof value !== 'object' || value === null) {
    return false;
  }
  const action = value as { kind?: unknown; setting?: unknown; command?: unknown };
  switch (action.kind) {
    case 'apiKeyHelp':
      return true;
    case 'openSetting':
      return (ADVISED_SETTINGS as readonly unknown[]).includes(action.setting);
    case 'command':
      return (ADVISED_COMMANDS as readonly unknown[]).includes(action.command);
    default:
      return false;
  }
}
