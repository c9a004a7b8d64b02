/**
 * A stub of the `vscode` module for unit tests in plain Node: just what the
 * extension uses, recording what it was asked to do. `register.ts` makes
 * `require('vscode')` return this module.
 */

/* eslint-disable @typescript-eslint/no-explicit-any */

export const version = '1.139.0';

export class Disposable {
  constructor(private readonly callOnDispose: () => void = () => undefined) {}
  static from(...items: Array<{ dispose(): unknown }>): Disposable {
    return new Disposable(() => items.forEach((item) => item.dispose()));
  }
  dispose(): void {
    this.callOnDispose();
  }
}

export class EventEmitter<T> {
  private readonly listeners = new Set<(value: T) => unknown>();
  readonly event = (listener: (value: T) => unknown): Disposable => {
    this.listeners.add(listener);
    return new Disposable(() => this.listeners.delete(listener));
  };
  fire(value: T): void {
    for (const listener of [...this.listeners]) {
      listener(value);
    }
  }
  dispose(): void {
    this.listeners.clear();
  }
}

export class CancellationTokenSource {
  private readonly emitter = new EventEmitter<void>();
  private cancelled = false;
  readonly token = {
    isCancellationRequested: false,
    onCancellationRequested: this.emitter.event,
  };
  cancel(): void {
    if (!this.cancelled) {
      this.cancelled = true;
      this.token.isCancellationRequested = true;
      this.emitter.fire();
    }
  }
  dispose(): void {
    this.emitter.dispose();
  }
}

export class Uri {
  private constructor(
    readonly scheme: string,
    readonly path: string,
  ) {}
  static file(path: string): Uri {
    return new Uri('file', path);
  }
  static parse(value: string): Uri {
    const match = /^([a-z-]+):\/\/(.*)$/.exec(value);
    return match ? new Uri(match[1], match[2]) : new Uri('file', value);
  }
  static joinPath(base: Uri, ...parts: string[]): Uri {
    return new Uri(base.scheme, [base.path, ...parts].join('/'));
  }
  get fsPath(): string {
    return this.path;
  }
  toString(): string {
    return `${this.scheme}://${this.path}`;
  }
}

export class Position {
  constructor(
    readonly line: number,
    readonly character: number,
  ) {}
}

export class Selection {
  constructor(
    readonly start: Position,
    readonly end: Position,
  ) {}
  get isEmpty(): boolean {
    return this.start.line === this.end.line && this.start.character === this.end.character;
  }
}

export class ThemeColor {
  constructor(readonly id: string) {}
}

export enum ProgressLocation {
  SourceControl = 1,
  Window = 10,
  Notification = 15,
}

export enum StatusBarAlignment {
  Left = 1,
  Right = 2,
}

export enum ViewColumn {
  Active = -1,
  Beside = -2,
  One = 1,
  Two = 2,
  Three = 3,
}

// --- what the tests look at ------------------------------------------------------------

export interface ProgressCall {
  options: { location: ProgressLocation; title?: string; cancellable?: boolean };
  reports: Array<{ message?: string }>;
  source: CancellationTokenSource;
  /** The task's promise settled: the progress is gone. */
  ended: boolean;
}

export class StatusBarItem {
  text = '';
  tooltip: string | undefined;
  command: string | undefined;
  name: string | undefined;
  backgroundColor: ThemeColor | undefined;
  visible = false;
  constructor(
    readonly id: string,
    readonly alignment: StatusBarAlignment,
    readonly priority: number,
  ) {}
  show(): void {
    this.visible = true;
  }
  hide(): void {
    this.visible = false;
  }
  dispose(): void {
    this.visible = false;
  }
}

export class Webview {
  html = '';
  options: Record<string, unknown> = {};
  readonly cspSource = 'vscode-resource:';
  readonly posted: any[] = [];
  readonly received = new EventEmitter<unknown>();
  readonly onDidReceiveMessage = this.received.event;
  asWebviewUri(uri: Uri): Uri {
    return Uri.parse(`vscode-resource://${uri.path}`);
  }
  async postMessage(message: unknown): Promise<boolean> {
    this.posted.push(message);
    return true;
  }
}

export class WebviewPanel {
  readonly webview = new Webview();
  active = true;
  visible = true;
  disposed = false;
  readonly viewStateChanged = new EventEmitter<{ webviewPanel: WebviewPanel }>();
  readonly disposeEmitter = new EventEmitter<void>();
  readonly onDidChangeViewState = this.viewStateChanged.event;
  readonly onDidDispose = this.disposeEmitter.event;
  constructor(
    readonly viewType: string,
    public title: string,
    readonly showOptions: { viewColumn: ViewColumn; preserveFocus?: boolean },
    readonly options: Record<string, unknown>,
  ) {}
  get viewColumn(): ViewColumn {
    return this.showOptions.viewColumn > 0 ? this.showOptions.viewColumn : ViewColumn.One;
  }
  reveal(): void {
    this.visible = true;
  }
  dispose(): void {
    if (!this.disposed) {
      this.disposed = true;
      this.disposeEmitter.fire();
    }
  }
}

/** A view in a side bar (`registerWebviewViewProvider`), resolved when it is first shown. */
export class WebviewView {
  readonly webview = new Webview();
  visible = true;
  disposed = false;
  /** The last `show(preserveFocus)`. */
  shown: boolean[] = [];
  readonly visibilityChanged = new EventEmitter<void>();
  readonly disposeEmitter = new EventEmitter<void>();
  readonly onDidChangeVisibility = this.visibilityChanged.event;
  readonly onDidDispose = this.disposeEmitter.event;
  constructor(readonly viewType: string) {}
  show(preserveFocus?: boolean): void {
    this.shown.push(preserveFocus === true);
    this.setVisible(true);
  }
  setVisible(visible: boolean): void {
    if (this.visible !== visible) {
      this.visible = visible;
      this.visibilityChanged.fire();
    }
  }
  dispose(): void {
    if (!this.disposed) {
      this.disposed = true;
      this.disposeEmitter.fire();
    }
  }
}

/** `createQuickPick`: shown, it takes the next of `stub.picks` (by label) and hides. */
export class QuickPick<T extends { label: string }> {
  title: string | undefined;
  placeholder: string | undefined;
  items: T[] = [];
  activeItems: T[] = [];
  selectedItems: T[] = [];
  private readonly accepted = new EventEmitter<void>();
  private readonly hidden = new EventEmitter<void>();
  readonly onDidAccept = this.accepted.event;
  readonly onDidHide = this.hidden.event;
  show(): void {
    stub.quickPicks.push({ items: this.items, options: { title: this.title, placeHolder: this.placeholder, active: this.activeItems } });
    const wanted = stub.picks.shift();
    const item = this.items.find((candidate) => candidate.label === wanted);
    queueMicrotask(() => {
      if (item !== undefined) {
        this.selectedItems = [item];
        this.accepted.fire();
      } else {
        this.hide();
      }
    });
  }
  hide(): void {
    this.hidden.fire();
  }
  dispose(): void {}
}

export class OutputChannel {
  readonly lines: string[] = [];
  shown = false;
  constructor(readonly name: string) {}
  private log(level: string, message: string): void {
    this.lines.push(`${level}: ${message}`);
  }
  info(message: string): void {
    this.log('info', message);
  }
  warn(message: string): void {
    this.log('warn', message);
  }
  error(message: string): void {
    this.log('error', message);
  }
  appendLine(message: string): void {
    this.log('line', message);
  }
  show(): void {
    this.shown = true;
  }
  dispose(): void {}
}

/** Recorded calls and scripted answers, reset with `resetStub()`. */
export const stub = {
  settings: {} as Record<string, unknown>,
  inputs: [] as Array<string | undefined>,
  picks: [] as Array<string | undefined>,
  messages: [] as Array<{
    kind: 'info' | 'warning' | 'error';
    message: string;
    actions: string[];
    modal?: boolean;
    detail?: string;
  }>,
  quickPicks: [] as Array<{ items: Array<{ label: string; detail?: string }>; options: unknown }>,
  answer: undefined as string | undefined,
  progress: [] as ProgressCall[],
  statusBarItems: [] as StatusBarItem[],
  panels: [] as WebviewPanel[],
  /** Side bar views by id, resolved through `<id>.focus` (as VS Code does when one is first shown). */
  viewProviders: new Map<string, { resolveWebviewView(view: WebviewView): void }>(),
  views: [] as WebviewView[],
  clipboard: '',
  outputChannels: [] as OutputChannel[],
  commands: new Map<string, (...args: any[]) => unknown>(),
  executed: [] as unknown[][],
  configurationChanged: new EventEmitter<{ affectsConfiguration(section: string): boolean }>(),
};

export function resetStub(): void {
  stub.settings = {};
  stub.inputs = [];
  stub.picks = [];
  stub.messages = [];
  stub.quickPicks = [];
  stub.answer = undefined;
  stub.progress = [];
  stub.statusBarItems = [];
  stub.panels = [];
  stub.viewProviders.clear();
  stub.views = [];
  stub.clipboard = '';
  stub.outputChannels = [];
  stub.commands.clear();
  stub.executed = [];
  window.activeTextEditor = undefined;
}

/** Change settings and fire onDidChangeConfiguration, as the Settings editor does. */
export function changeSettings(values: Record<string, unknown>): void {
  Object.assign(stub.settings, values);
  stub.configurationChanged.fire({ affectsConfiguration: (section: string) => section === 'agentls' });
}

const activeTextEditorChanged = new EventEmitter<unknown>();

export const window = {
  activeTextEditor: undefined as any,
  onDidChangeActiveTextEditor: activeTextEditorChanged.event,
  registerWebviewViewProvider(id: string, provider: { resolveWebviewView(view: WebviewView): void }): Disposable {
    stub.viewProviders.set(id, provider);
    return new Disposable(() => stub.viewProviders.delete(id));
  },
  createQuickPick<T extends { label: string }>(): QuickPick<T> {
    return new QuickPick<T>();
  },
  async showInputBox(): Promise<string | undefined> {
    return stub.inputs.shift();
  },
  async showQuickPick<T extends { label: string }>(items: T[], options?: unknown): Promise<T | undefined> {
    stub.quickPicks.push({ items, options });
    const wanted = stub.picks.shift();
    return items.find((item) => item.label === wanted);
  },
  async showInformationMessage(message: string, ...actions: string[]): Promise<string | undefined> {
    stub.messages.push({ kind: 'info', message, actions });
    return stub.answer;
  },
  async showWarningMessage(message: string, ...rest: unknown[]): Promise<string | undefined> {
    // An options object ({modal, detail}) may come before the actions.
    const options = typeof rest[0] === 'object' && rest[0] !== null ? (rest.shift() as { modal?: boolean; detail?: string }) : {};
    stub.messages.push({ kind: 'warning', message, actions: rest as string[], modal: options.modal, detail: options.detail });
    return stub.answer;
  },
  async showErrorMessage(message: string, ...actions: string[]): Promise<string | undefined> {
    stub.messages.push({ kind: 'error', message, actions });
    return stub.answer;
  },
  withProgress<R>(
    options: ProgressCall['options'],
    task: (progress: { report(value: { message?: string }): void }, token: CancellationTokenSource['token']) => Thenable<R>,
  ): Thenable<R> {
    const call: ProgressCall = { options, reports: [], source: new CancellationTokenSource(), ended: false };
    stub.progress.push(call);
    const result = task({ report: (value) => call.reports.push(value) }, call.source.token);
    void Promise.resolve(result).finally(() => {
      call.ended = true;
    });
    return result;
  },
  createStatusBarItem(id: string, alignment: StatusBarAlignment, priority: number): StatusBarItem {
    const item = new StatusBarItem(id, alignment, priority);
    stub.statusBarItems.push(item);
    return item;
  },
  createWebviewPanel(
    viewType: string,
    title: string,
    showOptions: { viewColumn: ViewColumn; preserveFocus?: boolean },
    options: Record<string, unknown>,
  ): WebviewPanel {
    const panel = new WebviewPanel(viewType, title, showOptions, options);
    stub.panels.push(panel);
    return panel;
  },
  createOutputChannel(name: string): OutputChannel {
    const channel = new OutputChannel(name);
    stub.outputChannels.push(channel);
    return channel;
  },
};

type Thenable<T> = PromiseLike<T>;

export const workspace = {
  workspaceFolders: undefined as Array<{ uri: Uri }> | undefined,
  getConfiguration(section?: string) {
    return {
      get<T>(key: string, fallback?: T): T | undefined {
        const full = section !== undefined ? `${section}.${key}` : key;
        return (full in stub.settings ? stub.settings[full] : fallback) as T | undefined;
      },
    };
  },
  onDidChangeConfiguration: stub.configurationChanged.event,
  registerTextDocumentContentProvider(): Disposable {
    return new Disposable();
  },
};

export const commands = {
  registerCommand(id: string, run: (...args: any[]) => unknown): Disposable {
    stub.commands.set(id, run);
    return new Disposable(() => stub.commands.delete(id));
  },
  async executeCommand(id: string, ...args: unknown[]): Promise<unknown> {
    stub.executed.push([id, ...args]);
    const view = /^(.*)\.focus$/.exec(id)?.[1];
    const provider = view !== undefined ? stub.viewProviders.get(view) : undefined;
    if (provider !== undefined && !stub.views.some((candidate) => candidate.viewType === view && !candidate.disposed)) {
      const resolved = new WebviewView(view!);
      stub.views.push(resolved);
      provider.resolveWebviewView(resolved);
      return undefined;
    }
    const run = stub.commands.get(id);
    return run?.(...args);
  },
};

export const extensions = {
  getExtension(): undefined {
    return undefined;
  },
};

export const env = {
  clipboard: {
    async writeText(text: string): Promise<void> {
      stub.clipboard = text;
    },
  },
};
