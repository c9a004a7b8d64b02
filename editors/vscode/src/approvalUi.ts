/** `ApprovalUi` in VS Code: warning dialogs and notifications, an input box, diff editors. */

import * as vscode from 'vscode';
import { type ApprovalUi, type FileDiff, applyHunks, parseDiff, reverseFile } from './approvals';
import type { ApprovalParams } from './protocol';

const SCHEME = 'agentls-patch';

export class VsCodeApprovalUi implements ApprovalUi, vscode.Disposable {
  /** The text of each side of each diff shown, by URI. */
  private readonly contents = new Map<string, string>();
  private readonly registration: vscode.Disposable;
  private shown = 0;

  constructor(private readonly workspace: () => string | undefined) {
    this.registration = vscode.workspace.registerTextDocumentContentProvider(SCHEME, {
      provideTextDocumentContent: (uri) => this.contents.get(uri.toString()) ?? '',
    });
  }

  async choose(message: string, detail: string, buttons: string[], modal: boolean): Promise<string | undefined> {
    // A notification shows no detail: it goes into the message.
    const text = modal || detail === '' ? message : `${message} — ${detail.replace(/\n+/g, ' ')}`;
    return vscode.window.showWarningMessage(text, { modal, detail: modal ? detail : undefined }, ...buttons);
  }

  async inputBox(options: { title: string; prompt: string; placeHolder?: string }): Promise<string | undefined> {
    return vscode.window.showInputBox({ ...options, ignoreFocusOut: true });
  }

  /** Each file of the patch in a diff editor: as it is now, and as the patch would leave it. */
  async showDiff(params: ApprovalParams): Promise<void> {
    const label = params.review === true ? 'patch to review' : 'patch to approve';
    await this.showSides(params.diff ?? '', label, (file, now) => ({ before: now, after: applyHunks(now, file) }));
  }

  /** A patch already applied ("Open diff" in the transcript): each file as it was, and as it is now. */
  async showApplied(diff: string): Promise<void> {
    await this.showSides(diff, 'agent edit', (file, now) => ({ before: applyHunks(now, reverseFile(file)), after: now }));
  }

  private async showSides(
    diff: string,
    label: string,
    sides: (file: FileDiff, now: string) => { before: string | undefined; after: string | undefined },
  ): Promise<void> {
    const round = ++this.shown;
    for (const file of parseDiff(diff)) {
      const { before, after } = sides(file, await this.currentText(file.path));
      if (before === undefined || after === undefined) {
        // The file changed since the server computed the diff: show the diff itself.
        const document = await vscode.workspace.openTextDocument({ content: diff, language: 'diff' });
        await vscode.window.showTextDocument(document, { preview: false });
        return;
      }
      const left = vscode.Uri.from({ scheme: SCHEME, path: `/${file.path}`, query: `${round}-before` });
      const right = vscode.Uri.from({ scheme: SCHEME, path: `/${file.path}`, query: `${round}-after` });
      this.contents.set(left.toString(), before);
      this.contents.set(right.toString(), after);
      await vscode.commands.executeCommand('vscode.diff', left, right, `${file.path} (${label})`, { preview: false });
    }
  }

  /** A file's text as the editor has it (unsaved changes included), else as on disk. */
  private async currentText(path: string): Promise<string> {
    const root = this.workspace();
    if (root === undefined) {
      return '';
    }
    const uri = vscode.Uri.file(`${root}/${path}`);
    const open = vscode.workspace.textDocuments.find((document) => document.uri.toString() === uri.toString());
    if (open !== undefined) {
      return open.getText();
    }
    try {
      return new TextDecoder().decode(await vscode.workspace.fs.readFile(uri));
    } catch {
      return '';
    }
  }

  dispose(): void {
    this.registration.dispose();
    this.contents.clear();
  }
}
