/** Short texts shown to the user (status bar, transcript footers); pure, shared with the webview. */

import type { Effort, Receipt, Usage } from './protocol';
import type { PaneState, ToolCallEntry, TurnState } from './transcript';

export function plural(count: number, word: string, many = `${word}s`): string {
  return `${count} ${count === 1 ? word : many}`;
}

/** "Cancelled: aborted exec_command; killed 2 processes, none survived." */
export function receiptSummary(receipt: Receipt): string {
  const parts: string[] = [];
  if (receipt.abortedToolCalls.length > 0) {
    parts.push(`aborted ${receipt.abortedToolCalls.map((call) => call.tool).join(', ')}`);
  } else {
    parts.push('no tool call was running');
  }
  const processes = plural(receipt.killedProcesses, 'process', 'processes');
  if (receipt.survivingProcesses === 0) {
    parts.push(`killed ${processes}, none survived`);
  } else {
    parts.push(`killed ${processes}, ${receipt.survivingProcesses} survived`);
  }
  return `Cancelled: ${parts.join('; ')}.`;
}

export function usageSummary(usage: Usage): string {
  const parts = [`${usage.inputTokens} in`, `${usage.outputTokens} out`];
  if (usage.reasoningTokens > 0) {
    parts.push(`${usage.reasoningTokens} reasoning`);
  }
  if (usage.cachedTokens > 0) {
    parts.push(`${usage.cachedTokens} cached`);
  }
  return `${parts.join(' · ')} tokens`;
}

export function turnStatusLabel(status: TurnState): string {
  switch (status) {
    case 'running':
      return 'Running';
    case 'completed':
      return 'Completed';
    case 'cancelled':
      return 'Cancelled';
    case 'failed':
      return 'Failed';
  }
}

export function toolStatusLabel(entry: Pick<ToolCallEntry, 'status' | 'exitCode'>): string {
  const exit = entry.exitCode !== undefined ? ` (exit ${entry.exitCode})` : '';
  switch (entry.status) {
    case 'running':
      return 'running';
    case 'completed':
      return `done${exit}`;
    case 'failed':
      return `failed${exit}`;
    case 'cancelled':
      return 'cancelled';
  }
}

export const STATE_ICONS: Record<PaneState, string> = {
  idle: '$(hubot)',
  running: '$(sync~spin)',
  cancelled: '$(circle-slash)',
  failed: '$(error)',
};

/** The status bar text: "$(sync~spin) AgentLS main: running · high · fast". */
export function statusText(pane: string, state: PaneState, effort: Effort, fastMode: boolean): string {
  const parts = [`${STATE_ICONS[state]} AgentLS ${pane}: ${state}`, effort];
  if (fastMode) {
    parts.push('fast');
  }
  return parts.join(' · ');
}
