/** `ApprovalUi` in VS Code: warning dialogs and notifications, an input box, diff editors. */

import * as vscode from 'vscode';
import { type ApprovalUi, applyHunks, parseDiff } from './approvals';
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

  /** Each file of the patch in a diff editor: as it is on disk, and as the patch would leave it. */
  async showDiff(params: ApprovalParams): Promise<void> {
    const diff = params.diff ?? '';
    const root = this.workspace();
    const round = ++this.shown;
    for (const file of parseDiff(diff)) {
      let before = '';
      if (!file.created && root !== undefined) {
        try {
          before = new TextDecoder().decode(await vscode.workspace.fs.readFile(vscode.Uri.file(`${root}/${file.path}`)));
        } catch {
          before = '';
        }
      }
      const after = applyHunks(before, file);
      if (after === undefined) {
        // The file changed since the server computed the diff: show the diff itself.
        const document = await vscode.workspace.openTextDocument({ content: diff, language: 'diff' });
        await vscode.window.showTextDocument(document, { preview: false });
        return;
      }
      const left = vscode.Uri.from({ scheme: SCHEME, path: `/${file.path}`, query: `${round}-before` });
      const right = vscode.Uri.from({ scheme: SCHEME, path: `/${file.path}`, query: `${round}-after` });
      this.contents.set(left.toString(), before);
      this.contents.set(right.toString(), after);
      await vscode.commands.executeCommand('vscode.diff', left, right, `${file.path} (patch to approve)`, {
        preview: false,
      });
    }
  }

  dispose(): void {
    this.registration.dispose();
    this.contents.clear();
  }
}
