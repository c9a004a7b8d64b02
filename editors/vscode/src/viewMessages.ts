/**
 * Messages between the extension host and a transcript webview (the side
 * bar's view, which holds every pane, or a pane's editor tab). Messages from
 * the view act on the pane it shows.
 */

import { type AdviceAction, isAdviceAction } from './advice';
import type { FileLines } from './promptContext';
import type { ContextMeter, Effort } from './protocol';
import type { PaneState, TranscriptInput } from './transcript';

export interface ViewState {
  pane: string;
  state: PaneState;
  effort: Effort;
  fastMode: boolean;
  /** The open fork, if any. */
  fork?: string;
  /** How full the model's context window is (undefined: no report yet). */
  context?: ContextMeter;
}

/** A pane's tab. */
export interface PaneTab {
  pane: string;
  state: PaneState;
}

export type HostMessage =
  /** Start the pane over from these inputs (the view loaded, or the pane's log was replaced). */
  | { type: 'replay'; pane: string; inputs: TranscriptInput[]; state: ViewState }
  /** The pane's inputs since the last message, batched. */
  | { type: 'append'; pane: string; inputs: TranscriptInput[] }
  | { type: 'state'; state: ViewState }
  /** The panes the view holds (tabs, when `tabs`) and the one it shows. */
  | { type: 'panes'; panes: PaneTab[]; shown: string; tabs: boolean };

export type ViewMessage =
  | { type: 'ready' }
  | { type: 'ask'; text: string }
  | { type: 'steer'; text: string }
  /** Stop: the pane's turns end (their requests are cancelled). */
  | { type: 'stop' }
  /** The Stop button of a running tool call. */
  | { type: 'stopTool'; callId: string }
  | { type: 'fork' }
  | { type: 'closePane' }
  /** "Open diff" of a patch in the transcript: its unified diff, in the diff editor. */
  | { type: 'openDiff'; diff: string }
  /** A tab was clicked: the view shows this pane now. */
  | { type: 'showPane'; pane: string }
  /** The effort button: the picker, with the current effort. */
  | { type: 'effort' }
  /** A code block's Insert (at the cursor of the last editor). */
  | { type: 'insert'; text: string }
  /** A code block's Copy, when the webview could not write the clipboard itself. */
  | { type: 'copy'; text: string }
  /** A selection chip: show those lines. */
  | { type: 'reveal'; ref: FileLines }
  /** A button under an error. */
  | { type: 'advice'; action: AdviceAction };

function isFileLines(value: unknown): value is FileLines {
  if (typeof value !== 'object' || value === null) {
    return false;
  }
  const ref = value as Partial<FileLines>;
  return (
    typeof ref.path === 'string' &&
    Number.isInteger(ref.startLine) &&
    Number.isInteger(ref.endLine) &&
    (ref.startLine as number) >= 1 &&
    (ref.endLine as number) >= (ref.startLine as number)
  );
}

export function isViewMessage(value: unknown): value is ViewMessage {
  if (typeof value !== 'object' || value === null) {
    return false;
  }
  const message = value as { type?: unknown; text?: unknown; callId?: unknown; pane?: unknown; ref?: unknown; action?: unknown };
  switch (message.type) {
    case 'ready':
    case 'stop':
    case 'fork':
    case 'closePane':
    case 'effort':
      return true;
    case 'ask':
    case 'steer':
    case 'insert':
    case 'copy':
      return typeof message.text === 'string';
    case 'stopTool':
      return typeof message.callId === 'string';
    case 'openDiff':
      return typeof (value as { diff?: unknown }).diff === 'string';
    case 'showPane':
      return typeof message.pane === 'string';
    case 'reveal':
      return isFileLines(message.ref);
    case 'advice':
      return isAdviceAction(message.action);
    default:
      return false;
  }
}
