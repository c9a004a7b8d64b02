/** `Ui` for the commands, backed by the VS Code window API. */

import { randomUUID } from 'node:crypto';
import * as vscode from 'vscode';
import type { PickItem, ProgressReporter, Ui } from './controller';
import type { CancellationToken } from './client';
import type { Range, Selection } from './protocol';

export class VsCodeUi implements Ui {
  async inputBox(options: { title: string; prompt: string; placeHolder?: string; value?: string }): Promise<string | undefined> {
    return vscode.window.showInputBox({ ...options, ignoreFocusOut: true });
  }

  async quickPick<T extends string>(
    items: PickItem<T>[],
    options: { title: string; placeHolder?: string },
  ): Promise<T | undefined> {
    const picked = await vscode.window.showQuickPick(
      items.map((item) => ({ label: item.label, description: item.description, detail: item.detail, value: item.value })),
      options,
    );
    return picked?.value;
  }

  withProgress<T>(title: string, task: (progress: ProgressReporter, token: CancellationToken) => Promise<T>): Promise<T> {
    return Promise.resolve(
      vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title, cancellable: true },
        (progress, token) => task({ report: (message) => progress.report({ message }) }, token),
      ),
    );
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
