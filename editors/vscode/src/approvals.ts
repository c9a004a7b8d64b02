/**
 * Approvals: the server asks (`agent/requestApproval`) before a tool call its
 * approval policy guards — a command the model wants to run outside the
 * sandbox, a patch where no sandbox confines it, every call under `always`.
 *
 * The question is a modal dialog showing the command and the model's reason,
 * or the files a patch changes; "Show Diff" opens the patch in diff editors
 * and asks again in a notification, so the diff can be read while deciding.
 * Allow once, Allow for this session (exactly this command, or edits to these
 * files), Deny — with an optional reason the model reads. Dismissing denies.
 *
 * Nothing here imports `vscode`: the dialogs are an `ApprovalUi`.
 */

import type { ApprovalParams, ApprovalResult } from './protocol';
import { askReview } from './review';

export const ALLOW_ONCE = 'Allow once';
export const ALLOW_SESSION = 'Allow for this session';
export const DENY = 'Deny';
export const SHOW_DIFF = 'Show Diff';

/** Tools whose `command` is a shell command line (others: the tool and its arguments). */
const SHELL_TOOLS = new Set(['exec_command', 'start_process']);

export interface ApprovalUi {
  /** A question with buttons: a modal dialog, or a notification; undefined when dismissed. */
  choose(message: string, detail: string, buttons: string[], modal: boolean): Promise<string | undefined>;
  inputBox(options: { title: string; prompt: string; placeHolder?: string }): Promise<string | undefined>;
  /** Open the patch in diff editors (one per file). */
  showDiff(params: ApprovalParams): Promise<void>;
}

/** The files a unified diff changes (`b/` names; `a/` for a deletion). */
export function diffFiles(diff: string): string[] {
  const files: string[] = [];
  let previous: string | undefined;
  for (const line of diff.split('\n')) {
    if (line.startsWith('--- ')) {
      previous = line.slice(4);
    } else if (line.startsWith('+++ ')) {
      const next = line.slice(4);
      const name = next === '/dev/null' ? previous : next;
      if (name !== undefined && name !== '/dev/null') {
        files.push(name.replace(/^[ab]\//, ''));
      }
    }
  }
  return files;
}

/** The question's text: what, and the detail (the command and why, or the files). */
export function describe(params: ApprovalParams): { message: string; detail: string } {
  const message = `AgentLS (${params.pane}) wants to: ${params.title}`;
  const lines: string[] = [];
  if (params.command !== undefined) {
    lines.push(SHELL_TOOLS.has(params.tool) ? `$ ${params.command}` : params.command);
  }
  if (params.justification !== undefined) {
    lines.push('', `Why: ${params.justification}`);
  }
  if (params.diff !== undefined) {
    const files = diffFiles(params.diff);
    const added = params.diff.split('\n').filter((line) => line.startsWith('+') && !line.startsWith('+++')).length;
    const removed = params.diff.split('\n').filter((line) => line.startsWith('-') && !line.startsWith('---')).length;
    lines.push(`Changes ${files.join(', ') || 'files'} (+${added} −${removed}).`);
  }
  return { message, detail: lines.join('\n') };
}

function decision(choice: string | undefined): ApprovalResult['decision'] {
  return choice === ALLOW_ONCE ? 'allow' : choice === ALLOW_SESSION ? 'allowSession' : 'deny';
}

export async function askApproval(params: ApprovalParams, ui: ApprovalUi): Promise<ApprovalResult> {
  if (params.review === true && params.diff !== undefined) {
    return askReview(params, ui);
  }
  const { message, detail } = describe(params);
  const answers = [ALLOW_ONCE, ALLOW_SESSION, DENY];
  let choice = await ui.choose(message, detail, params.diff !== undefined ? [...answers, SHOW_DIFF] : answers, true);
  if (choice === SHOW_DIFF) {
    await ui.showDiff(params);
    choice = await ui.choose(`${message} (see the diff)`, detail, answers, false);
  }
  if (choice === DENY) {
    return denyWithReason(ui, 'AgentLS: Deny', 'e.g. use the test database instead');
  }
  return { decision: decision(choice) };
}

/** A denial, with the reason the user types (optional: Enter skips it). */
export async function denyWithReason(ui: ApprovalUi, title: string, placeHolder: string): Promise<ApprovalResult> {
  const result: ApprovalResult = { decision: 'deny' };
  const reason = await ui.inputBox({ title, prompt: 'Why? The agent reads this (optional; Enter to skip)', placeHolder });
  if (reason !== undefined && reason.trim() !== '') {
    result.reason = reason.trim();
  }
  return result;
}

// --- the diff editor: each file of a unified diff as before and after ---------------------

export interface FileDiff {
  /** Workspace-relative path (the new one). */
  path: string;
  created: boolean;
  deleted: boolean;
  hunks: Hunk[];
}

interface Hunk {
  oldStart: number;
  newStart: number;
  lines: string[];
}

/** Parse a unified diff (as the server sends it) into files and hunks. */
export function parseDiff(diff: string): FileDiff[] {
  const files: FileDiff[] = [];
  let file: FileDiff | undefined;
  let hunk: Hunk | undefined;
  let oldName: string | undefined;
  for (const line of diff.split('\n')) {
    if (line.startsWith('--- ')) {
      oldName = line.slice(4);
      hunk = undefined;
    } else if (line.startsWith('+++ ') && oldName !== undefined) {
      const newName = line.slice(4);
      const path = (newName === '/dev/null' ? oldName : newName).replace(/^[ab]\//, '');
      file = { path, created: oldName === '/dev/null', deleted: newName === '/dev/null', hunks: [] };
      files.push(file);
      oldName = undefined;
    } else if (line.startsWith('@@') && file !== undefined) {
      const match = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(line);
      hunk = { oldStart: match ? Number(match[1]) : 1, newStart: match ? Number(match[2]) : 1, lines: [] };
      file.hunks.push(hunk);
    } else if (hunk !== undefined && /^[ +\-\\]/.test(line)) {
      hunk.lines.push(line);
    }
  }
  return files;
}

/** The same change backwards: applied to the file as the patch left it, gives it as it was. */
export function reverseFile(file: FileDiff): FileDiff {
  const flip: Record<string, string> = { '+': '-', '-': '+' };
  return {
    path: file.path,
    created: file.deleted,
    deleted: file.created,
    hunks: file.hunks.map((hunk) => ({
      oldStart: hunk.newStart,
      newStart: hunk.oldStart,
      lines: hunk.lines.map((line) => (flip[line[0] ?? ''] ?? line[0]) + line.slice(1)),
    })),
  };
}

/** `before` with the file's hunks applied; undefined if they do not fit it (it changed since). */
export function applyHunks(before: string, file: FileDiff): string | undefined {
  if (file.deleted) {
    return '';
  }
  const source = before === '' ? [] : before.split('\n');
  const endsWithNewline = before.endsWith('\n');
  if (endsWithNewline) {
    source.pop();
  }
  const out: string[] = [];
  // Whether the last line written ends with a newline.
  let newline = true;
  let cursor = 0;
  const copy = (until: number): void => {
    if (until > cursor) {
      out.push(...source.slice(cursor, until));
      newline = until < source.length || endsWithNewline;
      cursor = until;
    }
  };
  for (const hunk of file.hunks) {
    const start = Math.max(0, hunk.oldStart - 1);
    if (start < cursor || start > source.length) {
      return undefined;
    }
    copy(start);
    let last = '';
    for (const line of hunk.lines) {
      const kind = line[0];
      const text = line.slice(1);
      if (kind === '\\') {
        // "\ No newline at end of file": about the line just before it.
        if (last === ' ' || last === '+') {
          newline = false;
        }
        continue;
      }
      last = kind;
      if (kind === ' ' || kind === '-') {
        if (source[cursor] !== text) {
          return undefined;
        }
        cursor += 1;
      }
      if (kind === ' ' || kind === '+') {
        out.push(text);
        newline = true;
      }
    }
  }
  copy(source.length);
  return out.join('\n') + (out.length > 0 && newline ? '\n' : '');
}
