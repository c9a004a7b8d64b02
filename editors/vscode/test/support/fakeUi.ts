/** A `Ui` for tests: scripted answers, recorded messages, progress whose Cancel we can press. */

import type { Advice } from '../../src/advice';
import type { PickItem, Ui } from '../../src/controller';
import type { PaneProgressOptions, ProgressHandle } from '../../src/progress';
import type { Selection } from '../../src/protocol';

export interface ProgressRecord {
  pane: string;
  title: string;
  messages: string[];
  /** Also in the status bar (a turn), or only as a notification while hidden (a command). */
  window: boolean;
  done: boolean;
  /** Press Cancel in its notification. */
  cancel(): void;
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
  readonly shown: Array<{ items: PickItem[]; title: string; placeHolder?: string; active?: string }> = [];
  /** The items of every quick pick shown, in order. */
  readonly pickItems: PickItem[][] = [];
  /** The buttons of every info message shown, in order. */
  readonly infoActions: string[][] = [];

  async quickPick<T extends string>(
    items: PickItem<T>[],
    options: { title: string; placeHolder?: string; active?: T } = { title: '' },
  ): Promise<T | undefined> {
    this.shown.push({ items, ...options });
    this.pickItems.push(items);
    const wanted = this.picks.shift();
    return items.find((item) => item.value === wanted)?.value;
  }

  paneProgress(pane: string, title: string, onCancel: () => void, options: PaneProgressOptions): ProgressHandle {
    const record: ProgressRecord = { pane, title, messages: [], window: options.window, done: false, cancel: onCancel };
    this.progress.push(record);
    return {
      report: (message) => record.messages.push(message),
      end: () => {
        record.done = true;
      },
    };
  }

  /** Every failed turn the user was told of, with its buttons. */
  readonly failures: Array<{ pane: string; message: string; advice: Advice[] }> = [];

  turnFailed(pane: string, message: string, advice: Advice[]): void {
    this.failures.push({ pane, message, advice });
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
