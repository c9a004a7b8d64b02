/**
 * Where the transcripts show. By default one view in the secondary side bar
 * (`agentls.transcript`, beside the code, never over it) holds every pane,
 * a tab each; with `agentls.transcriptLocation` set to "editor", each pane
 * has an editor tab instead (a fork's beside main's). Both host the same page
 * (`html.ts`, `webview/main.ts`).
 *
 * The host forwards each pane's transcript inputs to its view in batches (at
 * most one message per pane per BATCH_MS), so a fast stream costs a few
 * messages a second; the view folds them into its own `Transcript` and renders.
 */

import * as vscode from 'vscode';
import type { AdviceAction } from './advice';
import type { AgentController } from './controller';
import { nonce, transcriptHtml } from './html';
import type { FileLines } from './promptContext';
import type { TranscriptLocation } from './settings';
import type { Visibility } from './progress';
import { MAIN_PANE } from './protocol';
import type { TranscriptInput } from './transcript';
import { type HostMessage, type PaneTab, type ViewState, isViewMessage } from './viewMessages';

export const BATCH_MS = 30;
/** The transcript view in the secondary side bar (package.json `views`). */
export const VIEW_ID = 'agentls.transcript';

export interface PanelActions {
  ask(pane: string, text: string): void;
  steer(pane: string, text: string): void;
  /** The transcript's Stop: the pane's turns end (their requests are cancelled). */
  stop(pane: string): void;
  stopTool(pane: string, callId: string): void;
  /** Open a patch's unified diff in the diff editor. */
  openDiff(diff: string): void;
  fork(): void;
  closePane(pane: string): void;
  /** The effort button: the picker for this pane. */
  pickEffort(pane: string): void;
  /** A code block's Insert: at the cursor of the editor last used. */
  insert(text: string): void;
  /** A code block's Copy, when the webview could not write the clipboard itself. */
  copy(text: string): void;
  /** A selection chip: show those lines. */
  reveal(ref: FileLines): void;
  /** A button under an error. */
  advise(action: AdviceAction): void;
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

/** Where a transcript webview lives: the side bar's view, or an editor tab. */
interface WebviewHost {
  readonly webview: vscode.Webview;
  readonly visible: boolean;
}

/** One webview and the panes it holds: it shows one at a time (tabs switch in the side bar). */
class TranscriptView implements vscode.Disposable {
  private ready = false;
  private shown: string;
  private readonly lastStates = new Map<string, string>();
  private lastPanes: string | undefined;
  private readonly pending = new Map<string, TranscriptInput[]>();
  private timer: NodeJS.Timeout | undefined;
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(
    readonly host: WebviewHost,
    /** The panes it holds: every open pane (the side bar), or one (an editor tab). */
    private readonly panes: () => string[],
    shown: string,
    private readonly tabs: boolean,
    extensionUri: vscode.Uri,
    private readonly controller: AgentController,
    private readonly actions: PanelActions,
  ) {
    this.shown = shown;
    const dist = vscode.Uri.joinPath(extensionUri, 'dist');
    const media = vscode.Uri.joinPath(extensionUri, 'media');
    const webview = host.webview;
    webview.options = { enableScripts: true, localResourceRoots: [dist, media] };
    webview.html = transcriptHtml({
      cspSource: webview.cspSource,
      nonce: nonce(),
      scriptUri: webview.asWebviewUri(vscode.Uri.joinPath(dist, 'webview.js')).toString(),
      styleUri: webview.asWebviewUri(vscode.Uri.joinPath(media, 'transcript.css')).toString(),
      pane: shown,
    });
    this.subscriptions.push(webview.onDidReceiveMessage((message: unknown) => this.receive(message)));
  }

  /** The pane it shows: what its messages act on. */
  get pane(): string {
    return this.shown;
  }

  holds(pane: string): boolean {
    return this.panes().includes(pane);
  }

  /** Show this pane (a tab). */
  show(pane: string): void {
    if (this.holds(pane) && pane !== this.shown) {
      this.shown = pane;
      this.postPanes();
    }
  }

  append(pane: string, inputs: TranscriptInput[]): void {
    if (!this.ready) {
      return; // replayed in full on 'ready'
    }
    const pending = this.pending.get(pane);
    if (pending !== undefined) {
      pending.push(...inputs);
    } else {
      this.pending.set(pane, [...inputs]);
    }
    if (this.timer === undefined) {
      this.timer = setTimeout(() => this.flush(), BATCH_MS);
    }
  }

  /** Start the pane over in the view (its log was replaced, or it is new here). */
  replay(pane: string): void {
    if (!this.ready || !this.holds(pane)) {
      return;
    }
    this.flush();
    this.pending.delete(pane);
    const log = this.controller.pane(pane)?.log ?? [];
    const state = viewState(this.controller, pane);
    this.lastStates.set(pane, JSON.stringify(state));
    this.post({ type: 'replay', pane, inputs: log, state });
  }

  /** Panes opened or closed, states changed: tabs, new panes' transcripts, header. */
  update(): void {
    if (!this.ready) {
      return;
    }
    const panes = this.panes();
    if (!panes.includes(this.shown)) {
      this.shown = panes.includes(this.controller.activePane) ? this.controller.activePane : MAIN_PANE;
    }
    for (const pane of panes) {
      if (!this.lastStates.has(pane)) {
        this.replay(pane); // new here: a fork that just opened
      }
    }
    for (const pane of [...this.lastStates.keys()]) {
      if (!panes.includes(pane)) {
        this.lastStates.delete(pane);
        this.pending.delete(pane);
      }
    }
    this.postPanes();
    for (const pane of panes) {
      const state = viewState(this.controller, pane);
      const key = JSON.stringify(state);
      if (key !== this.lastStates.get(pane)) {
        this.lastStates.set(pane, key);
        this.post({ type: 'state', state });
      }
    }
  }

  /** The webview was hidden: its page is gone, and says 'ready' again when shown. */
  unload(): void {
    this.ready = false;
    this.cancelTimer();
    this.pending.clear();
  }

  dispose(): void {
    this.unload();
    for (const subscription of this.subscriptions.splice(0)) {
      subscription.dispose();
    }
  }

  private postPanes(): void {
    if (!this.ready) {
      return;
    }
    const panes: PaneTab[] = this.panes().map((pane) => ({ pane, state: this.controller.paneState(pane) }));
    const message: HostMessage = { type: 'panes', panes, shown: this.shown, tabs: this.tabs };
    const key = JSON.stringify(message);
    if (key !== this.lastPanes) {
      this.lastPanes = key;
      this.post(message);
    }
  }

  private flush(): void {
    this.cancelTimer();
    for (const [pane, inputs] of [...this.pending]) {
      if (inputs.length > 0) {
        this.post({ type: 'append', pane, inputs });
      }
    }
    this.pending.clear();
  }

  private cancelTimer(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
  }

  private post(message: HostMessage): void {
    void this.host.webview.postMessage(message);
  }

  private receive(message: unknown): void {
    if (!isViewMessage(message)) {
      return;
    }
    switch (message.type) {
      case 'ready':
        this.ready = true;
        this.lastStates.clear();
        this.lastPanes = undefined;
        this.postPanes();
        for (const pane of this.panes()) {
          this.replay(pane);
        }
        return;
      case 'ask':
        this.actions.ask(this.pane, message.text);
        return;
      case 'steer':
        this.actions.steer(this.pane, message.text);
        return;
      case 'stop':
        this.actions.stop(this.pane);
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
      case 'showPane':
        if (this.holds(message.pane)) {
          this.shown = message.pane;
          this.controller.setActivePane(message.pane);
        }
        return;
      case 'effort':
        this.actions.pickEffort(this.pane);
        return;
      case 'insert':
        this.actions.insert(message.text);
        return;
      case 'copy':
        this.actions.copy(message.text);
        return;
      case 'reveal':
        this.actions.reveal(message.ref);
        return;
      case 'advice':
        this.actions.advise(message.action);
        return;
    }
  }
}

export class TranscriptPanels implements vscode.Disposable, vscode.WebviewViewProvider, Visibility {
  /** The side bar's view, once VS Code has resolved it (it does when it is first shown). */
  private sideBar: { view: vscode.WebviewView; transcript: TranscriptView } | undefined;
  /** Editor tabs by pane (`agentls.transcriptLocation` "editor"). */
  private readonly editors = new Map<string, { panel: vscode.WebviewPanel; transcript: TranscriptView }>();
  private readonly visibilityChanged = new vscode.EventEmitter<void>();
  private readonly subscriptions: vscode.Disposable[] = [];
  /** The pane the side bar is to show (before it is resolved, too). */
  private wanted = MAIN_PANE;

  /** A transcript was shown or hidden. */
  readonly onDidChangeVisibility = this.visibilityChanged.event;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly controller: AgentController,
    private readonly actions: PanelActions,
    private location: TranscriptLocation = 'sideBar',
  ) {
    this.subscriptions.push(
      vscode.window.registerWebviewViewProvider(VIEW_ID, this),
      controller.onDidAppend(({ pane, inputs }) => this.forEach(pane, (view) => view.append(pane, inputs))),
      controller.onDidReplace((pane) => this.forEach(pane, (view) => view.replay(pane))),
      controller.onDidChangePanes(() => {
        for (const [name, editor] of [...this.editors]) {
          if (controller.pane(name) === undefined) {
            editor.panel.dispose();
          }
        }
        this.sideBar?.transcript.update();
      }),
      controller.onDidChangeState(() => {
        this.sideBar?.transcript.update();
        for (const editor of this.editors.values()) {
          editor.transcript.update();
        }
      }),
      controller.onDidRequestReveal(({ pane }) => this.show(pane, true)),
    );
  }

  /** The side bar's view is being shown for the first time (or again after it was disposed). */
  resolveWebviewView(view: vscode.WebviewView): void {
    this.sideBar?.transcript.dispose();
    const transcript = new TranscriptView(
      view,
      () => this.controller.paneNames(),
      this.controller.pane(this.wanted) !== undefined ? this.wanted : MAIN_PANE,
      true,
      this.extensionUri,
      this.controller,
      this.actions,
    );
    const sideBar = { view, transcript };
    this.sideBar = sideBar;
    transcript.show(this.wanted);
    view.onDidChangeVisibility(() => {
      if (!view.visible) {
        transcript.unload();
      }
      this.visibilityChanged.fire();
    });
    view.onDidDispose(() => {
      transcript.dispose();
      if (this.sideBar === sideBar) {
        this.sideBar = undefined;
      }
      this.visibilityChanged.fire();
    });
    this.visibilityChanged.fire();
  }

  /** Show a pane's transcript (in the side bar: its tab; in editor tabs: a fork's beside main's). */
  show(pane: string, preserveFocus: boolean): void {
    if (this.controller.pane(pane) === undefined) {
      return;
    }
    if (this.location === 'sideBar') {
      this.wanted = pane;
      const sideBar = this.sideBar;
      if (sideBar === undefined) {
        // Not resolved yet: opening the view resolves it (and shows `wanted`).
        void vscode.commands.executeCommand(`${VIEW_ID}.focus`, { preserveFocus });
        return;
      }
      sideBar.transcript.show(pane);
      if (!sideBar.view.visible || !preserveFocus) {
        sideBar.view.show(preserveFocus);
      }
      return;
    }
    const existing = this.editors.get(pane);
    if (existing !== undefined) {
      if (!existing.panel.visible || !preserveFocus) {
        existing.panel.reveal(existing.panel.viewColumn, preserveFocus);
      }
      return;
    }
    this.openEditor(pane, preserveFocus);
  }

  /** Show every open pane (the side bar: the active one's tab). */
  showAll(): void {
    if (this.location === 'sideBar') {
      this.show(this.controller.activePane, false);
      return;
    }
    for (const pane of this.controller.paneNames()) {
      this.show(pane, pane !== this.controller.activePane);
    }
  }

  /** `agentls.transcriptLocation` changed: the transcripts move (the side bar's view hides through its `when`). */
  setLocation(location: TranscriptLocation): void {
    if (location === this.location) {
      return;
    }
    this.location = location;
    for (const editor of [...this.editors.values()]) {
      editor.panel.dispose();
    }
    this.showAll();
  }

  isVisible(pane: string): boolean {
    if (this.location === 'sideBar') {
      return this.sideBar !== undefined && this.sideBar.view.visible;
    }
    return this.editors.get(pane)?.panel.visible === true;
  }

  /** Whether a pane has a transcript (an editor tab, or the side bar's view). */
  has(pane: string): boolean {
    return this.editors.has(pane) || (this.sideBar !== undefined && this.controller.pane(pane) !== undefined);
  }

  dispose(): void {
    for (const subscription of this.subscriptions.splice(0)) {
      subscription.dispose();
    }
    for (const editor of [...this.editors.values()]) {
      editor.panel.dispose();
    }
    this.editors.clear();
    this.sideBar?.transcript.dispose();
    this.sideBar = undefined;
    this.visibilityChanged.dispose();
  }

  private forEach(pane: string, run: (view: TranscriptView) => void): void {
    if (this.sideBar !== undefined) {
      run(this.sideBar.transcript);
    }
    const editor = this.editors.get(pane);
    if (editor !== undefined) {
      run(editor.transcript);
    }
  }

  private openEditor(pane: string, preserveFocus: boolean): void {
    const panel = vscode.window.createWebviewPanel(
      'agentls.transcript',
      `AgentLS: ${pane}`,
      { viewColumn: this.columnFor(pane), preserveFocus },
      { enableScripts: true, enableFindWidget: true },
    );
    const transcript = new TranscriptView(
      panel,
      () => (this.controller.pane(pane) !== undefined ? [pane] : []),
      pane,
      false,
      this.extensionUri,
      this.controller,
      this.actions,
    );
    const editor = { panel, transcript };
    this.editors.set(pane, editor);
    panel.onDidChangeViewState(({ webviewPanel }) => {
      if (webviewPanel.active) {
        this.controller.setActivePane(pane);
      }
      if (!webviewPanel.visible) {
        transcript.unload(); // a hidden webview is unloaded; it says 'ready' again when shown
      }
      this.visibilityChanged.fire();
    });
    panel.onDidDispose(() => {
      transcript.dispose();
      if (this.editors.get(pane) === editor) {
        this.editors.delete(pane);
      }
      this.visibilityChanged.fire();
    });
    this.visibilityChanged.fire();
  }

  private columnFor(pane: string): vscode.ViewColumn {
    if (pane === MAIN_PANE) {
      return vscode.window.activeTextEditor !== undefined ? vscode.ViewColumn.Beside : vscode.ViewColumn.Active;
    }
    const main = this.editors.get(MAIN_PANE)?.panel.viewColumn;
    return main !== undefined ? ((main + 1) as vscode.ViewColumn) : vscode.ViewColumn.Beside;
  }
}
