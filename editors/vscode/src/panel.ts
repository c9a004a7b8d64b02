/**
 * Transcript webview panels, one per pane; a fork's opens beside main's.
 *
 * The host forwards each pane's transcript inputs to its view in batches (at
 * most one message per BATCH_MS), so a fast stream costs a few messages a
 * second; the view folds them into its own `Transcript` and renders.
 */

import * as vscode from 'vscode';
import type { AgentController } from './controller';
import { nonce, transcriptHtml } from './html';
import { MAIN_PANE } from './protocol';
import type { TranscriptInput } from './transcript';
import { type HostMessage, type ViewState, isViewMessage } from './viewMessages';

export const BATCH_MS = 30;

export interface PanelActions {
  ask(pane: string, text: string): void;
  steer(pane: string, text: string): void;
  cancel(pane: string): void;
  stopTool(pane: string, callId: string): void;
  /** Open a patch's unified diff in the diff editor. */
  openDiff(diff: string): void;
  fork(): void;
  closePane(pane: string): void;
}

export function viewState(controller: AgentController, pane: string): ViewState {
  const record = controller.pane(pane);
  return {
    pane,
    state: controller.paneState(pane),
    effort: record?.effort ?? 'medium',
    fastMode: record?.fastMode ?? false,
    fork: controller.forkPane(),
    context: record?.transcript.context,
  };
}

class TranscriptView implements vscode.Disposable {
  readonly panel: vscode.WebviewPanel;
  private ready = false;
  private lastState: string | undefined;
  private pending: TranscriptInput[] = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(
    readonly pane: string,
    column: vscode.ViewColumn,
    preserveFocus: boolean,
    extensionUri: vscode.Uri,
    private readonly controller: AgentController,
    private readonly actions: PanelActions,
    onDispose: (view: TranscriptView) => void,
  ) {
    const dist = vscode.Uri.joinPath(extensionUri, 'dist');
    const media = vscode.Uri.joinPath(extensionUri, 'media');
    this.panel = vscode.window.createWebviewPanel(
      'agentls.transcript',
      `AgentLS: ${pane}`,
      { viewColumn: column, preserveFocus },
      { enableScripts: true, enableFindWidget: true, localResourceRoots: [dist, media] },
    );
    const webview = this.panel.webview;
    webview.html = transcriptHtml({
      cspSource: webview.cspSource,
      nonce: nonce(),
      scriptUri: webview.asWebviewUri(vscode.Uri.joinPath(dist, 'webview.js')).toString(),
      styleUri: webview.asWebviewUri(vscode.Uri.joinPath(media, 'transcript.css')).toString(),
      pane,
    });
    this.subscriptions.push(
      webview.onDidReceiveMessage((message: unknown) => this.receive(message)),
      this.panel.onDidChangeViewState(({ webviewPanel }) => {
        if (webviewPanel.active) {
          controller.setActivePane(pane);
        }
        if (!webviewPanel.visible) {
          // A hidden webview is unloaded; it says 'ready' again when shown.
          this.ready = false;
        }
      }),
      this.panel.onDidDispose(() => {
        this.dispose();
        onDispose(this);
      }),
    );
  }

  append(inputs: TranscriptInput[]): void {
    if (!this.ready) {
      return; // replayed in full on 'ready'
    }
    this.pending.push(...inputs);
    if (this.timer === undefined) {
      this.timer = setTimeout(() => this.flush(), BATCH_MS);
    }
  }

  replay(): void {
    this.cancelTimer();
    this.pending = [];
    const log = this.controller.pane(this.pane)?.log ?? [];
    const state = viewState(this.controller, this.pane);
    this.lastState = JSON.stringify(state);
    this.post({ type: 'replay', inputs: log, state });
  }

  postState(): void {
    if (!this.ready) {
      return;
    }
    const state = viewState(this.controller, this.pane);
    const key = JSON.stringify(state);
    if (key !== this.lastState) {
      this.lastState = key;
      this.post({ type: 'state', state });
    }
  }

  dispose(): void {
    this.cancelTimer();
    for (const subscription of this.subscriptions.splice(0)) {
      subscription.dispose();
    }
  }

  private flush(): void {
    this.timer = undefined;
    if (this.pending.length > 0) {
      const inputs = this.pending;
      this.pending = [];
      this.post({ type: 'append', inputs });
    }
  }

  private cancelTimer(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
  }

  private post(message: HostMessage): void {
    void this.panel.webview.postMessage(message);
  }

  private receive(message: unknown): void {
    if (!isViewMessage(message)) {
      return;
    }
    switch (message.type) {
      case 'ready':
        this.ready = true;
        this.replay();
        return;
      case 'ask':
        this.actions.ask(this.pane, message.text);
        return;
      case 'steer':
        this.actions.steer(this.pane, message.text);
        return;
      case 'cancel':
        this.actions.cancel(this.pane);
        return;
      case 'stopTool':
        this.actions.stopTool(this.pane, message.callId);
        return;
      case 'openDiff':
        this.actions.openDiff(message.diff);
        return;
      case 'fork':
        this.actions.fork();
        return;
      case 'closePane':
        this.actions.closePane(this.pane);
        return;
    }
  }
}

export class TranscriptPanels implements vscode.Disposable {
  private readonly views = new Map<string, TranscriptView>();
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly controller: AgentController,
    private readonly actions: PanelActions,
  ) {
    this.subscriptions.push(
      controller.onDidAppend(({ pane, inputs }) => this.views.get(pane)?.append(inputs)),
      controller.onDidReplace((pane) => this.views.get(pane)?.replay()),
      controller.onDidChangePanes(() => {
        for (const [name, view] of [...this.views]) {
          if (controller.pane(name) === undefined) {
            view.panel.dispose();
          }
        }
      }),
      controller.onDidChangeState(() => {
        for (const view of this.views.values()) {
          view.postState();
        }
      }),
      controller.onDidRequestReveal(({ pane }) => this.show(pane, true)),
    );
  }

  /** Show a pane's transcript (a fork's beside main's), creating the panel if needed. */
  show(pane: string, preserveFocus: boolean): void {
    if (this.controller.pane(pane) === undefined) {
      return;
    }
    const existing = this.views.get(pane);
    if (existing !== undefined) {
      if (!existing.panel.visible || !preserveFocus) {
        existing.panel.reveal(existing.panel.viewColumn, preserveFocus);
      }
      return;
    }
    const view = new TranscriptView(
      pane,
      this.columnFor(pane),
      preserveFocus,
      this.extensionUri,
      this.controller,
      this.actions,
      (disposed) => {
        if (this.views.get(disposed.pane) === disposed) {
          this.views.delete(disposed.pane);
        }
      },
    );
    this.views.set(pane, view);
  }

  /** Show every open pane. */
  showAll(): void {
    for (const pane of this.controller.paneNames()) {
      this.show(pane, pane !== this.controller.activePane);
    }
  }

  has(pane: string): boolean {
    return this.views.has(pane);
  }

  dispose(): void {
    for (const subscription of this.subscriptions.splice(0)) {
      subscription.dispose();
    }
    for (const view of [...this.views.values()]) {
      view.panel.dispose();
    }
    this.views.clear();
  }

  private columnFor(pane: string): vscode.ViewColumn {
    if (pane === MAIN_PANE) {
      return vscode.window.activeTextEditor !== undefined ? vscode.ViewColumn.Beside : vscode.ViewColumn.Active;
    }
    const main = this.views.get(MAIN_PANE)?.panel.viewColumn;
    return main !== undefined ? ((main + 1) as vscode.ViewColumn) : vscode.ViewColumn.Beside;
  }
}
