/** A `Ui` for tests: scripted answers, recorded messages, a progress Cancel button we can press. */

import type { CancellationToken, Disposable } from '../../src/client';
import type { PickItem, ProgressReporter, Ui } from '../../src/controller';
import type { Selection } from '../../src/protocol';

export class TokenSource {
  private cancelled = false;
  private readonly listeners = new Set<() => void>();
  readonly token: CancellationToken;

  constructor() {
    const source = this;
    this.token = {
      get isCancellationRequested(): boolean {
        return source.cancelled;
      },
      onCancellationRequested(listener: () => void): Disposable {
        source.listeners.add(listener);
        return { dispose: () => source.listeners.delete(listener) };
      },
    };
  }

  /** Press Cancel. */
  cancel(): void {
    if (!this.cancelled) {
      this.cancelled = true;
      for (const listener of [...this.listeners]) {
        listener();
      }
    }
  }
}

export interface ProgressRecord {
  title: string;
  messages: string[];
  source: TokenSource;
  done: boolean;
}

export class FakeUi implements Ui {
  readonly inputs: string[] = [];
  readonly picks: string[] = [];
  readonly infos: string[] = [];
  readonly errors: string[] = [];
  readonly progress: ProgressRecord[] = [];
  readonly prompts: Array<{ title: string; prompt: string }> = [];
  /** Which button of an info/error message to press. */
  answer: string | undefined;
  selection: Selection | undefined;
  private tokens = 0;

  async inputBox(options: { title: string; prompt: string }): Promise<string | undefined> {
    this.prompts.push(options);
    return this.inputs.shift();
  }

  /** Every quick pick shown, in order. */
  readonly shown: Array<{ items: PickItem[]; title: string; placeHolder?: string }> = [];
  /** The items of every quick pick shown, in order. */
  readonly pickItems: PickItem[][] = [];
  /** The buttons of every info message shown, in order. */
  readonly infoActions: string[][] = [];

  async quickPick<T extends string>(
    items: PickItem<T>[],
    options: { title: string; placeHolder?: string } = { title: '' },
  ): Promise<T | undefined> {
    this.shown.push({ items, ...options });
    this.pickItems.push(items);
    const wanted = this.picks.shift();
    return items.find((item) => item.value === wanted)?.value;
  }

  async withProgress<T>(title: string, task: (progress: ProgressReporter, token: CancellationToken) => Promise<T>): Promise<T> {
    const record: ProgressRecord = { title, messages: [], source: new TokenSource(), done: false };
    this.progress.push(record);
    try {
      return await task({ report: (message) => record.messages.push(message) }, record.source.token);
    } finally {
      record.done = true;
    }
  }

  async info(message: string, ...actions: string[]): Promise<string | undefined> {
    this.infos.push(message);
    this.infoActions.push(actions);
    return this.answer;
  }

  async error(message: string): Promise<string | undefined> {
    this.errors.push(message);
    return this.answer;
  }

  activeSelection(): Selection | undefined {
    return this.selection;
  }

  newToken(): string {
    this.tokens += 1;
    return `test-token-${this.tokens}`;
  }
}
