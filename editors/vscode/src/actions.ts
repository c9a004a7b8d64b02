/**
 * What the transcript's buttons do in the editor: Insert a code block at the
 * cursor, show the lines a selection chip names, and the buttons under an
 * error (open a setting, the API key help, a command).
 */

import * as path from 'node:path';
import * as vscode from 'vscode';
import type { AdviceAction } from './advice';
import type { FileLines } from './promptContext';

/**
 * The text editor the user worked in last: where Insert goes. (While the
 * transcript has the focus in an editor tab, there is no active text editor.)
 */
export class LastEditor implements vscode.Disposable {
  private editor: vscode.TextEditor | undefined = vscode.window.activeTextEditor;
  private readonly subscription = vscode.window.onDidChangeActiveTextEditor((editor) => {
    if (editor !== undefined) {
      this.editor = editor;
    }
  });

  get current(): vscode.TextEditor | undefined {
    const active = vscode.window.activeTextEditor;
    if (active !== undefined) {
      return active;
    }
    const last = this.editor;
    // Still open (a closed one is not among the visible editors, and its document is closed).
    return last !== undefined && !last.document.isClosed ? last : undefined;
  }

  dispose(): void {
    this.subscription.dispose();
  }
}

/** Insert: replaces each selection (at the cursor, nothing), in the editor last used; it gets the focus. */
export async function insertAtCursor(text: string, editor: vscode.TextEditor | undefined): Promise<void> {
  if (editor === undefined) {
    void vscode.window.showInformationMessage('AgentLS: open a file and put the cursor where the code should go, then Insert again.');
    return;
  }
  const shown = await vscode.window.showTextDocument(editor.document, { viewColumn: editor.viewColumn, selection: editor.selection });
  const selections = editor.selections;
  const done = await shown.edit((edit) => {
    for (const selection of selections) {
      edit.replace(selection, text);
    }
  });
  if (!done) {
    void vscode.window.showWarningMessage(`AgentLS: ${path.basename(editor.document.fileName)} could not be edited.`);
  }
}

/** The file a chip names, resolved against the workspace (the server wrote it relative to it). */
export function chipUri(ref: FileLines, workspace: vscode.Uri | undefined): vscode.Uri {
  if (path.isAbsolute(ref.path) || workspace === undefined) {
    return vscode.Uri.file(ref.path);
  }
  return vscode.Uri.joinPath(workspace, ...ref.path.split('/'));
}

/** A chip's lines, selected in their editor (beside the transcript, not over it). */
export async function revealLines(ref: FileLines, workspace: vscode.Uri | undefined): Promise<void> {
  const uri = chipUri(ref, workspace);
  try {
    const document = await vscode.workspace.openTextDocument(uri);
    const last = Math.min(ref.endLine, document.lineCount) - 1;
    const selection = new vscode.Selection(ref.startLine - 1, 0, last, document.lineAt(last).text.length);
    const editor = await vscode.window.showTextDocument(document, { selection, preview: true });
    editor.revealRange(selection, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
  } catch (error) {
    void vscode.window.showWarningMessage(`AgentLS: cannot open ${ref.path}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** A button under an error. */
export async function runAdvice(action: AdviceAction, extensionUri: vscode.Uri): Promise<void> {
  switch (action.kind) {
    case 'openSetting':
      await vscode.commands.executeCommand('workbench.action.openSettings', action.setting);
      return;
    case 'command':
      await vscode.commands.executeCommand(action.command);
      return;
    case 'apiKeyHelp':
      await showApiKeyHelp(extensionUri);
      return;
  }
}

/** How to give VS Code the API key: a page shipped with the extension, in the Markdown preview. */
export async function showApiKeyHelp(extensionUri: vscode.Uri): Promise<void> {
  const page = vscode.Uri.joinPath(extensionUri, 'media', 'api-key.md');
  try {
    await vscode.commands.executeCommand('markdown.showPreview', page);
  } catch {
    // No Markdown preview (the built-in extension disabled): the page as text.
    await vscode.window.showTextDocument(page, { preview: true });
  }
}
