/** The status bar item: the active pane's state (idle / running / cancelled) and its effort. */

import * as vscode from 'vscode';
import type { AgentController } from './controller';
import { statusText } from './format';

export class AgentStatusBar implements vscode.Disposable {
  readonly item: vscode.StatusBarItem;
  private readonly subscription: { dispose(): void };

  constructor(private readonly controller: AgentController) {
    this.item = vscode.window.createStatusBarItem('agentls.status', vscode.StatusBarAlignment.Left, 10);
    this.item.name = 'AgentLS';
    this.item.command = 'agentls.showTranscript';
    this.subscription = controller.onDidChangeState(() => this.update());
    this.update();
    this.item.show();
  }

  update(): void {
    const name = this.controller.activePane;
    const pane = this.controller.pane(name);
    const state = this.controller.paneState(name);
    const effort = pane?.effort ?? 'medium';
    const fast = pane?.fastMode ?? false;
    this.item.text = statusText(name, state, effort, fast);
    this.item.tooltip = `Agent pane ${name}: ${state}. Thinking: ${effort}${fast ? ', fast mode' : ''}. Click to show the transcript.`;
    this.item.backgroundColor =
      state === 'failed' ? new vscode.ThemeColor('statusBarItem.errorBackground') : undefined;
    this.setContext('agentls.running', state === 'running');
    this.setContext('agentls.forkOpen', this.controller.forkPane() !== undefined);
  }

  private readonly contexts = new Map<string, boolean>();

  private setContext(key: string, value: boolean): void {
    if (this.contexts.get(key) !== value) {
      this.contexts.set(key, value);
      void vscode.commands.executeCommand('setContext', key, value);
    }
  }

  dispose(): void {
    this.subscription.dispose();
    this.item.dispose();
  }
}
