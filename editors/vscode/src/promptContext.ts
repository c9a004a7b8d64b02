/**
 * A prompt as the server composed it for the model (`turn.started.prompt`,
 * a session's user entries): the user's words, then what they pointed at —
 * "The user selected this in app.py (lines 8-12):" and the text in a fence
 * (server/agentls/lsp/context.py). The transcript shows the words and the
 * selection as a chip (`app.py:8–12`), not the pasted text. Pure, shared with
 * the webview.
 */

export interface SelectionRef {
  /** As the server wrote it: relative to the workspace, or absolute. */
  path: string;
  /** 1-based, inclusive. */
  startLine: number;
  endLine: number;
  /** The selected text the model got. */
  text: string;
}

/** Lines of a file (what a chip opens). */
export type FileLines = Pick<SelectionRef, 'path' | 'startLine' | 'endLine'>;

export interface SplitPrompt {
  /** The user's own words. */
  text: string;
  selection?: SelectionRef;
  /** "Documents open in the editor: …" as files. */
  documents?: string[];
}

const SELECTION =
  /\n\nThe user selected this in (.+?) \((?:lines (\d+)-(\d+)|line (\d+))\):\n(`{3,})\n([\s\S]*?)\n\5(?=\n\nDocuments open in the editor: |$)/;
const DOCUMENTS = /\n\nDocuments open in the editor: (.*)$/;

export function splitPrompt(prompt: string): SplitPrompt {
  let text = prompt;
  const result: SplitPrompt = { text };
  const documents = DOCUMENTS.exec(text);
  if (documents !== null) {
    result.documents = documents[1].split(', ');
    text = text.slice(0, documents.index);
  }
  const selection = SELECTION.exec(text);
  if (selection !== null && selection.index + selection[0].length === text.length) {
    const start = Number(selection[2] ?? selection[4]);
    result.selection = {
      path: selection[1],
      startLine: start,
      endLine: Number(selection[3] ?? selection[4]),
      text: selection[6],
    };
    text = text.slice(0, selection.index);
  }
  result.text = text;
  return result;
}

/** "app.py:8–12", "app.py:8" — the chip's label (the file's name, not its folders). */
export function selectionLabel(ref: FileLines): string {
  const name = ref.path.split(/[\\/]/).filter((part) => part !== '').at(-1) ?? ref.path;
  const lines = ref.startLine === ref.endLine ? `${ref.startLine}` : `${ref.startLine}–${ref.endLine}`;
  return `${name}:${lines}`;
}
