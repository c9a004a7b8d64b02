/**
 * What a tool call's entry shows between its summary and its output, by tool:
 * each tool may register parts of its own (apply_patch: the patch it
 * applies). The transcript calls `create` once when the entry appears and
 * `update` whenever the entry changes; a tool without a renderer shows the
 * summary and the output only.
 */

import type { ToolCallEntry } from '../transcript';
import type { ViewMessage } from '../viewMessages';
import { renderDiff } from './diff';

export interface ToolEntryRenderer {
  /** Add the tool's parts to the entry (a `<details>`; the summary is in it already). */
  create(node: HTMLElement, entry: ToolCallEntry): void;
  /** The entry changed (arguments, status, output, diff): bring the parts up to date; `post` talks to the extension. */
  update(node: HTMLElement, entry: ToolCallEntry, post: (message: ViewMessage) => void): void;
}

/** apply_patch: the patch it applies, as the model wrote it; once applied, its diff (with Open diff) instead. */
const patch: ToolEntryRenderer = {
  create(node) {
    const args = document.createElement('pre');
    args.className = 'args';
    node.append(args);
  },
  update(node, entry, post) {
    const args = node.querySelector('.args');
    const text = (entry.arguments as { patch?: unknown } | undefined)?.patch;
    if (args !== null && typeof text === 'string') {
      args.textContent = text;
    }
    if (entry.diff !== undefined) {
      renderDiff(node, entry.diff, (diff) => post({ type: 'openDiff', diff }));
      args?.setAttribute('hidden', '');
    }
  },
};

export const toolRenderers = new Map<string, ToolEntryRenderer>([['apply_patch', patch]]);
