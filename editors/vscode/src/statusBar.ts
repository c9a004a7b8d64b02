/**
 * The status bar item: the active pane's state (idle / running / cancelled)
 * and its effort while the server runs; "AgentLS: not running" (with Restart
 * and Settings one click away) when it does not; "AgentLS: no API key" when
 * the server runs but can reach no model (found at start-up, not at the
 * first Ask), with what to do one click away.
 */

import * as vscode from 'vscode';
import { API_KEY_HELP, type AdviceAction, adviceFor } from './advice';
import type { AgentController } from './controller';
import { contextSummary, statusText } from './format';
import type { ServerStatus } from './languageClient';
import type { ServerCommand } from './serverCommand';

/** What the status bar needs of the server (`AgentServer`). */
export interface ServerStatusSource {
  readonly status: ServerStatus;
  readonly onDidChangeStatus: vscode.Event<ServerStatus>;
  readonly lastCommand: ServerCommand | undefined;
  /** What to set when the running server can reach no model (its `missingCredentials`). */
  readonly missingCredentials: string | undefined;
  /** Run what the user picked: Restart Server, Open Settings or Show Server Log. */
  followUp(choice: string | undefined): void;
}

export class AgentStatusBar implements vscode.Disposable {
  readonly item: vscode.StatusBarItem;
  private readonly subscriptions: Array<{ dispose(): void }>;

  constructor(
    private readonly controller: AgentController,
    private readonly server: ServerStatusSource,
  ) {
    this.item = vscode.window.createStatusBarItem('agentls.status', vscode.StatusBarAlignment.Left, 10);
    this.item.name = 'AgentLS';
    this.subscriptions = [controller.onDidChangeState(() => this.update()), server.onDidChangeStatus(() => this.update())];
    this.update();
    this.item.show();
  }

  update(): void {
    const server = this.server.status;
    const missing = this.server.missingCredentials;
    if (server.state === 'running' && missing !== undefined) {
      this.item.text = '$(warning) AgentLS: no API key';
      this.item.tooltip = `The server can reach no model: ${missing}. Click for what to do.`;
      this.item.backgroundColor = new vscode.ThemeColor('statusBarItem.warningBackground');
      this.item.command = 'agentls.showServerStatus';
    } else if (server.state === 'running') {
      this.showPane();
    } else {
      const starting = server.state === 'starting';
      this.item.text = starting ? '$(sync~spin) AgentLS: starting' : '$(warning) AgentLS: not running';
      this.item.tooltip = starting
        ? 'The agentls server is starting.'
        : `${server.reason ?? 'The agentls server is not running.'} Click for Restart Server and Settings.`;
      this.item.backgroundColor = starting ? undefined : new vscode.ThemeColor('statusBarItem.warningBackground');
      this.item.command = 'agentls.showServerStatus';
    }
    this.setContext('agentls.running', server.state === 'running' && this.controller.paneState(this.controller.activePane) === 'running');
    this.setContext('agentls.forkOpen', this.controller.forkPane() !== undefined);
  }

  private showPane(): void {
    const name = this.controller.activePane;
    const pane = this.controller.pane(name);
    const state = this.controller.paneState(name);
    const effort = pane?.effort ?? 'medium';
    const fast = pane?.fastMode ?? false;
    const context = pane?.transcript.context;
    this.item.text = statusText(name, state, effort, fast, context);
    const meter = context !== undefined ? ` ${contextSummary(context).replace(/^c/, 'C')}.` : '';
    this.item.tooltip = `AgentLS pane ${name}: ${state}. Effort: ${effort}${fast ? ', fast mode' : ''}.${meter} Click to show the transcript.`;
    this.item.backgroundColor = state === 'failed' ? new vscode.ThemeColor('statusBarItem.errorBackground') : undefined;
    this.item.command = 'agentls.showTranscript';
  }

  private readonly contexts = new Map<string, boolean>();

  private setContext(key: string, value: boolean): void {
    if (this.contexts.get(key) !== value) {
      this.contexts.set(key, value);
      void vscode.commands.executeCommand('setContext', key, value);
    }
  }

  dispose(): void {
    for (const subscription of this.subscriptions) {
      subscription.dispose();
    }
    this.item.dispose();
  }
}

/**
 * AgentLS: Show Server Status — what the server is doing, with Restart
 * Server, Open Settings and Show Server Log; when it can reach no model,
 * how to give it one first.
 */
export async function showServerStatus(
  server: ServerStatusSource,
  runAdvice: (action: AdviceAction) => void,
): Promise<void> {
  const { state, reason } = server.status;
  const command = server.lastCommand;
  const line = command !== undefined ? `${[command.command, ...command.args].join(' ')} (from ${command.source})` : undefined;
  const missing = state === 'running' ? server.missingCredentials : undefined;
  const title =
    missing !== undefined
      ? 'AgentLS: the server runs, but can reach no model'
      : state === 'running'
        ? 'AgentLS: the server is running'
        : state === 'starting'
          ? 'AgentLS: the server is starting'
          : 'AgentLS: the server is not running';
  const advice = missing !== undefined ? adviceFor('missingCredentials') : [];
  const picked = await vscode.window.showQuickPick(
    [
      ...advice.map((item) => ({
        label: item.label,
        detail: item.label === API_KEY_HELP ? missing : 'Or a Responses-compatible server (a local one may need no key)',
      })),
      { label: 'Restart Server', detail: state === 'notRunning' ? reason : line },
      { label: 'Open Settings', detail: 'agentls.serverCommand, agentls.pythonPath and the rest' },
      { label: 'Show Server Log', detail: 'The AgentLS output channel' },
    ],
    { title, placeHolder: line ?? 'Restart Server starts it again with the current settings' },
  );
  const chosen = advice.find((item) => item.label === picked?.label);
  if (chosen !== undefined) {
    runAdvice(chosen.action);
  } else {
    server.followUp(picked?.label);
  }
}
