/** `Ui` for the commands, backed by the VS Code window API. */

import { randomUUID } from 'node:crypto';
import * as vscode from 'vscode';
import type { Advice, AdviceAction } from './advice';
import type { PickItem, Ui } from './controller';
import {
  NOTHING_VISIBLE,
  PaneProgress,
  type PaneProgressOptions,
  type ProgressHandle,
  type ProgressSurfaces,
  type Visibility,
} from './progress';
import type { Range, Selection } from './protocol';

/** Progress in VS Code: a cancellable notification, or the status bar's (window) progress. */
export const VS_CODE_PROGRESS: ProgressSurfaces = {
  notification: (title, onCancel) => progress(vscode.ProgressLocation.Notification, title, onCancel),
  window: (title) => progress(vscode.ProgressLocation.Window, title),
};

function progress(location: vscode.ProgressLocation, title: string, onCancel?: () => void): ProgressHandle {
  let end: () => void = () => undefined;
  let reporter: vscode.Progress<{ message?: string }> | undefined;
  let pending: string | undefined;
  const done = new Promise<void>((resolve) => {
    end = resolve;
  });
  void vscode.window.withProgress({ location, title, cancellable: onCancel !== undefined }, (report, token) => {
    reporter = report;
    if (pending !== undefined) {
      report.report({ message: pending });
    }
    if (onCancel !== undefined) {
      token.onCancellationRequested(onCancel);
    }
    return done;
  });
  return {
    report: (message) => {
      pending = message;
      reporter?.report({ message });
    },
    end: () => end(),
  };
}

export class VsCodeUi implements Ui {
  /** Whether a pane's transcript is on screen (the transcripts set it once they exist). */
  visibility: Visibility = NOTHING_VISIBLE;

  /** @param runAdvice what a button under an error does (open a setting, the API key help, a command) */
  constructor(private readonly runAdvice: (action: AdviceAction) => void) {}

  async inputBox(options: { title: string; prompt: string; placeHolder?: string; value?: string }): Promise<string | undefined> {
    return vscode.window.showInputBox({ ...options, ignoreFocusOut: true });
  }

  async quickPick<T extends string>(
    items: PickItem<T>[],
    options: { title: string; placeHolder?: string; active?: T },
  ): Promise<T | undefined> {
    const pick = vscode.window.createQuickPick<vscode.QuickPickItem & { value: T }>();
    pick.title = options.title;
    pick.placeholder = options.placeHolder;
    pick.items = items.map((item) => ({ label: item.label, description: item.description, detail: item.detail, value: item.value }));
    const active = pick.items.find((item) => item.value === options.active);
    if (active !== undefined) {
      pick.activeItems = [active]; // the cursor starts on the current value
    }
    return new Promise<T | undefined>((resolve) => {
      let picked: T | undefined;
      pick.onDidAccept(() => {
        picked = pick.selectedItems[0]?.value ?? pick.activeItems[0]?.value;
        pick.hide();
      });
      pick.onDidHide(() => {
        pick.dispose();
        resolve(picked);
      });
      pick.show();
    });
  }

  paneProgress(pane: string, title: string, onCancel: () => void, options: PaneProgressOptions): ProgressHandle {
    return new PaneProgress(VS_CODE_PROGRESS, this.visibility, pane, title, onCancel, options);
  }

  turnFailed(pane: string, message: string, advice: Advice[]): void {
    if (this.visibility.isVisible(pane)) {
      return; // the transcript shows the error and its buttons: no toast over its input
    }
    void vscode.window.showErrorMessage(message, 'Show Transcript', ...advice.map((item) => item.label)).then((choice) => {
      if (choice === 'Show Transcript') {
        void vscode.commands.executeCommand('agentls.showTranscript');
      }
      const chosen = advice.find((item) => item.label === choice);
      if (chosen !== undefined) {
        this.runAdvice(chosen.action);
      }
    });
  }

  async info(message: string, ...actions: string[]): Promise<string | undefined> {
    return vscode.window.showInformationMessage(message, ...actions);
  }

  async error(message: string, ...actions: string[]): Promise<string | undefined> {
    return vscode.window.showErrorMessage(message, ...actions);
  }

  activeSelection(): Selection | undefined {
    return selectionOf(vscode.window.activeTextEditor);
  }

  newToken(): string {
    return `agentls/${randomUUID()}`;
  }
}

/** `context.selection` for an editor's (primary) selection, if it selects anything. */
export function selectionOf(editor: vscode.TextEditor | undefined): Selection | undefined {
  if (editor === undefined || editor.selection.isEmpty) {
    return undefined;
  }
  const { start, end } = editor.selection;
  return {
    uri: editor.document.uri.toString(),
    range: {
      start: { line: start.line, character: start.character },
      end: { line: end.line, character: end.character },
    },
    text: editor.document.getText(editor.selection),
  };
}

/** Whole lines `range` covers in the document `uri` (as the server quotes a selection), if it opens. */
export async function linesOf(uri: string, range: Range): Promise<string | undefined> {
  try {
    const document = await vscode.workspace.openTextDocument(vscode.Uri.parse(uri));
    const last = Math.min(range.end.line, document.lineCount - 1);
    if (range.start.line > last) {
      return undefined;
    }
    return document.getText(new vscode.Range(range.start.line, 0, last, document.lineAt(last).text.length));
  } catch {
    return undefined;
  }
}
