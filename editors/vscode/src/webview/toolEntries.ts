/**
 * What a tool call's entry shows between its summary and its output, by tool:
 * each tool may register parts of its own (apply_patch: the patch it
 * applies). The transcript calls `create` once when the entry appears and
 * `update` whenever the entry changes; a tool without a renderer shows the
 * summary and the output only.
 */

import type { ToolCallEntry } from '../transcript';

export interface ToolEntryRenderer {
  /** Add the tool's parts to the entry (a `<details>`; the summary is in it already). */
  create(node: HTMLElement, entry: ToolCallEntry): void;
  /** The entry changed (arguments, status, output): bring the parts up to date. */
  update(node: HTMLElement, entry: ToolCallEntry): void;
}

/** apply_patch: the patch it applies, as the model wrote it. */
const patch: ToolEntryRenderer = {
  create(node) {
    const args = document.createElement('pre');
    args.className = 'args';
    node.append(args);
  },
  update(node, entry) {
    const args = node.querySelector('.args');
    const text = (entry.arguments as { patch?: unknown } | undefined)?.patch;
    if (args !== null && typeof text === 'string') {
      args.textContent = text;
    }
  },
};

export const toolRenderers = new Map<string, ToolEntryRenderer>([['apply_patch', patch]]);
