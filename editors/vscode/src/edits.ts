/**
 * Edits through the editor: the agent's patches arrive as
 * `workspace/applyEdit`, which vscode-languageclient checks (each open
 * document's version) and applies as one `WorkspaceEdit` — into the open
 * editors, so Undo undoes them and there is no "file changed on disk".
 * After it, each document the edit changed is saved (`agentls.saveAfterEdit`),
 * so the next command sees it on disk and format-on-save runs — except one
 * that had unsaved changes of yours: the agent's edit merges into it, and it
 * stays unsaved for you to save.
 */

import * as vscode from 'vscode';
import {
  type ApplyWorkspaceEditParams,
  ApplyWorkspaceEditRequest,
  type ApplyWorkspaceEditResult,
  CancellationToken,
  ResponseError,
  type WorkspaceEdit,
} from 'vscode-languageclient/node';

/** The URIs (as strings) whose text an edit changes. */
export function editedUris(edit: WorkspaceEdit): string[] {
  const uris = new Set<string>(Object.keys(edit.changes ?? {}));
  for (const change of edit.documentChanges ?? []) {
    if ('textDocument' in change) {
      uris.add(change.textDocument.uri);
    }
  }
  return [...uris];
}

function openDocument(uri: string): vscode.TextDocument | undefined {
  const wanted = vscode.Uri.parse(uri).toString();
  return vscode.workspace.textDocuments.find((document) => document.uri.toString() === wanted);
}

/** Middleware `workspace.handleApplyEdit`: apply (the library's way), then save what was clean. */
export async function applyAndSave(
  params: ApplyWorkspaceEditParams,
  next: ApplyWorkspaceEditRequest.HandlerSignature,
  save: () => boolean,
): Promise<ApplyWorkspaceEditResult | ResponseError<void>> {
  const uris = editedUris(params.edit);
  const dirty = new Set(uris.filter((uri) => openDocument(uri)?.isDirty === true));
  const result = await next(params, CancellationToken.None);
  if (result instanceof ResponseError || !result.applied || !save()) {
    return result;
  }
  for (const uri of uris) {
    const document = openDocument(uri);
    if (document !== undefined && document.isDirty && !dirty.has(uri)) {
      if (!(await document.save())) {
        void vscode.window.showWarningMessage(`AgentLS: could not save ${vscode.workspace.asRelativePath(document.uri)} after the agent's edit.`);
      }
    }
  }
  return result;
}
