/** Messages between the extension host and a transcript webview. */

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

export type HostMessage =
  /** Start over from these inputs (the view loaded, or the pane's log was replaced). */
  | { type: 'replay'; inputs: TranscriptInput[]; state: ViewState }
  /** Inputs since the last message, batched. */
  | { type: 'append'; inputs: TranscriptInput[] }
  | { type: 'state'; state: ViewState };

export type ViewMessage =
  | { type: 'ready' }
  | { type: 'ask'; text: string }
  | { type: 'steer'; text: string }
  | { type: 'cancel' }
  /** The Stop button of a running tool call. */
  | { type: 'stopTool'; callId: string }
  | { type: 'fork' }
  | { type: 'closePane' }
  /** "Open diff" of a patch in the transcript: its unified diff, in the diff editor. */
  | { type: 'openDiff'; diff: string };

export function isViewMessage(value: unknown): value is ViewMessage {
  if (typeof value !== 'object' || value === null) {
    return false;
  }
  const message = value as { type?: unknown; text?: unknown; callId?: unknown };
  switch (message.type) {
    case 'ready':
    case 'cancel':
    case 'fork':
    case 'closePane':
      return true;
    case 'ask':
    case 'steer':
      return typeof message.text === 'string';
    case 'stopTool':
      return typeof message.callId === 'string';
    case 'openDiff':
      return typeof (value as { diff?: unknown }).diff === 'string';
    default:
      return false;
  }
}
