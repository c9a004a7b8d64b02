/**
 * Progress that never covers the transcript's input: a turn shows in the
 * status bar (window progress) for as long as it runs, and as a cancellable
 * notification only while its transcript is hidden — a notification toast
 * sits over the bottom right, where the transcript's input box is. Shown
 * again, the transcript has the Stop button, and the notification goes.
 *
 * No `vscode` here: the surfaces and the transcript's visibility come in
 * through small interfaces (`ui.ts` and `panel.ts` implement them).
 */

import type { Disposable } from './client';

export interface ProgressHandle {
  report(message: string): void;
  end(): void;
}

/** Where progress can show. */
export interface ProgressSurfaces {
  /** A cancellable notification until `end`; `onCancel` when its Cancel is pressed. */
  notification(title: string, onCancel: () => void): ProgressHandle;
  /** Progress in the status bar until `end`. */
  window(title: string): ProgressHandle;
}

/** Whether a pane's transcript is on screen. */
export interface Visibility {
  isVisible(pane: string): boolean;
  onDidChangeVisibility(listener: () => void): Disposable;
}

/** Nothing is on screen (before the transcripts exist). */
export const NOTHING_VISIBLE: Visibility = {
  isVisible: () => false,
  onDidChangeVisibility: () => ({ dispose: () => undefined }),
};

export interface PaneProgressOptions {
  /** Also in the status bar, whether or not the transcript shows (a turn: yes; a command: no). */
  window: boolean;
}

export class PaneProgress implements ProgressHandle {
  private windowHandle: ProgressHandle | undefined;
  private notification: ProgressHandle | undefined;
  private readonly subscription: Disposable;
  private message: string | undefined;
  private cancelled = false;
  private ended = false;

  constructor(
    private readonly surfaces: ProgressSurfaces,
    private readonly visibility: Visibility,
    private readonly pane: string,
    private readonly title: string,
    private readonly onCancel: () => void,
    options: PaneProgressOptions,
  ) {
    if (options.window) {
      this.windowHandle = surfaces.window(title);
    }
    this.subscription = visibility.onDidChangeVisibility(() => this.follow());
    this.follow();
  }

  report(message: string): void {
    if (this.ended) {
      return;
    }
    this.message = message;
    this.windowHandle?.report(message);
    this.notification?.report(message);
  }

  end(): void {
    if (this.ended) {
      return;
    }
    this.ended = true;
    this.subscription.dispose();
    this.windowHandle?.end();
    this.notification?.end();
    this.windowHandle = undefined;
    this.notification = undefined;
  }

  /** A notification while hidden (unless its Cancel was pressed already), none while shown. */
  private follow(): void {
    if (this.ended) {
      return;
    }
    const wanted = !this.cancelled && !this.visibility.isVisible(this.pane);
    if (wanted && this.notification === undefined) {
      this.notification = this.surfaces.notification(this.title, () => {
        this.cancelled = true;
        this.onCancel();
      });
      if (this.message !== undefined) {
        this.notification.report(this.message);
      }
    } else if (!wanted && this.notification !== undefined) {
      this.notification.end();
      this.notification = undefined;
    }
  }
}
