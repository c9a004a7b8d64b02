/**
 * A patch's diff in the transcript: a collapsible block under its tool call
 * (the files and +/− counts in the summary, each line coloured) with an
 * "Open diff" button that asks the host for the diff editor.
 */

import { diffFiles } from '../approvals';

/** `+added −removed` of a unified diff (its file headers are not lines). */
export function diffCounts(diff: string): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const line of diff.split('\n')) {
    if (line.startsWith('+') && !line.startsWith('+++')) {
      added += 1;
    } else if (line.startsWith('-') && !line.startsWith('---')) {
      removed += 1;
    }
  }
  return { added, removed };
}

function lineClass(line: string): string | undefined {
  if (line.startsWith('+++') || line.startsWith('---')) {
    return 'file';
  }
  return { '+': 'add', '-': 'del', '@': 'hunk' }[line[0] ?? ''];
}

/** Shows `diff` in `node` (a tool entry) once; `open` gets it when "Open diff" is clicked. */
export function renderDiff(node: HTMLElement, diff: string, open: (diff: string) => void): void {
  if (node.querySelector(':scope > details.diff') !== null) {
    return;
  }
  const details = document.createElement('details');
  details.className = 'diff';
  const summary = document.createElement('summary');
  const { added, removed } = diffCounts(diff);
  const label = document.createElement('span');
  label.className = 'label';
  label.textContent = `Diff of ${diffFiles(diff).join(', ') || 'the patch'} (+${added} −${removed})`;
  const button = document.createElement('button');
  button.className = 'open-diff secondary';
  button.textContent = 'Open diff';
  button.title = 'Show the change in the diff editor';
  button.addEventListener('click', (event) => {
    event.preventDefault(); // not a click on the summary: the block stays as it is
    event.stopPropagation();
    open(diff);
  });
  summary.append(label, button);
  const pre = document.createElement('pre');
  for (const line of diff.replace(/\n$/, '').split('\n')) {
    const span = document.createElement('span');
    const kind = lineClass(line);
    if (kind !== undefined) {
      span.className = kind;
    }
    span.textContent = `${line}\n`;
    pre.append(span);
  }
  details.append(summary, pre);
  node.append(details);
}
