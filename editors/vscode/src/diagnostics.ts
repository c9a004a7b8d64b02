/**
 * `agent/diagnostics`: the problems the editor shows, from every language
 * server and linter (`languages.getDiagnostics`), for the model's
 * `get_diagnostics` tool — so after a patch it sees pyright's or tsserver's
 * errors.
 */

import * as vscode from 'vscode';

export interface EditorDiagnostic {
  uri: string;
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
  /** LSP severities: 1 error, 2 warning, 3 information, 4 hint. */
  severity: number;
  source?: string;
  message: string;
}

function convert(uri: vscode.Uri, diagnostic: vscode.Diagnostic): EditorDiagnostic {
  const { start, end } = diagnostic.range;
  const out: EditorDiagnostic = {
    uri: uri.toString(),
    range: {
      start: { line: start.line, character: start.character },
      end: { line: end.line, character: end.character },
    },
    // vscode.DiagnosticSeverity counts from 0 (Error); LSP from 1.
    severity: diagnostic.severity + 1,
    message: diagnostic.message,
  };
  if (diagnostic.source !== undefined && diagnostic.source !== '') {
    out.source = diagnostic.source;
  }
  return out;
}

/** The answer to `agent/diagnostics {uri?}`: one document's problems, or every file's. */
export function editorDiagnostics(params: { uri?: unknown } | undefined): { diagnostics: EditorDiagnostic[] } {
  if (typeof params?.uri === 'string') {
    const uri = vscode.Uri.parse(params.uri);
    return { diagnostics: vscode.languages.getDiagnostics(uri).map((d) => convert(uri, d)) };
  }
  const diagnostics: EditorDiagnostic[] = [];
  for (const [uri, list] of vscode.languages.getDiagnostics()) {
    if (uri.scheme === 'file') {
      diagnostics.push(...list.map((d) => convert(uri, d)));
    }
  }
  return { diagnostics };
}
