/** Short texts shown to the user (status bar, transcript footers); pure, shared with the webview. */

import type { ContextMeter, Effort, Receipt, Usage } from './protocol';
import type { Compaction, PaneState, RetryEntry, ToolCallEntry, Turn, TurnState } from './transcript';

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

/** The status bar text: "$(sync~spin) AgentLS main: running · high · fast · 12%". */
export function statusText(
  pane: string,
  state: PaneState,
  effort: Effort,
  fastMode: boolean,
  context?: ContextMeter,
): string {
  const parts = [`${STATE_ICONS[state]} AgentLS ${pane}: ${state}`, effort];
  if (fastMode) {
    parts.push('fast');
  }
  if (context !== undefined) {
    parts.push(`${contextPercent(context)}%`);
  }
  return parts.join(' · ');
}

/** A token count the way people read it: 950, 12.3k, 272k, 1.0M. */
export function formatTokens(count: number): string {
  if (count < 1000) {
    return String(count);
  }
  if (count < 100_000) {
    return `${(count / 1000).toFixed(1)}k`;
  }
  if (count < 1_000_000) {
    return `${Math.floor(count / 1000)}k`;
  }
  return `${(count / 1_000_000).toFixed(1)}M`;
}

export function contextPercent(context: ContextMeter): number {
  return context.window > 0 ? Math.min(100, Math.round((100 * context.tokens) / context.window)) : 0;
}

/** "context 12.3k of 272k tokens (5%)" */
export function contextSummary(context: ContextMeter): string {
  return `context ${formatTokens(context.tokens)} of ${formatTokens(context.window)} tokens (${contextPercent(context)}%)`;
}

/** "Compacting the conversation (48.2k tokens)…" / "Compacted: 48.2k → 3.1k tokens (summary)". */
export function compactionSummary(compaction: Compaction): string {
  const before = formatTokens(compaction.beforeTokens);
  if (compaction.state === 'running') {
    return `Compacting the conversation (${before} tokens)…`;
  }
  const why = compaction.reason === 'overflow' ? ' after the model found it too long' : '';
  const how = compaction.mode === 'trim' ? 'old tool outputs cut' : 'summary';
  return `Compacted${why}: ${before} → ${formatTokens(compaction.afterTokens ?? 0)} tokens (${how}).`;
}

/** "instructions: 2 files, 3.1 KiB (AGENTS.md, pkg/AGENTS.md)" */
export function instructionsSummary(files: Array<{ path: string; bytes: number }>, bytes: number, cut = 0): string {
  if (files.length === 0) {
    return 'instructions: no AGENTS.md files';
  }
  const size = bytes < 1024 ? `${bytes} B` : `${(bytes / 1024).toFixed(1)} KiB`;
  const note = cut > 0 ? `; ${cut} bytes cut to stay within 32 KiB` : '';
  return `instructions: ${plural(files.length, 'file')}, ${size} (${files.map((file) => file.path).join(', ')})${note}`;
}

/** "turn 3 · Completed" (the number from `turn.started`; none yet: the status alone). */
export function turnHeading(turn: Pick<Turn, 'number' | 'status'>): string {
  const status = turnStatusLabel(turn.status);
  return turn.number !== undefined ? `turn ${turn.number} · ${status}` : status;
}

const RETRY_FAILURES: Record<string, string> = {
  rate_limit: 'Rate limited by the model server',
  server: 'The model server failed',
  connection: 'Cannot reach the model',
  timeout: 'The model stopped sending',
  stream: 'The connection to the model broke',
};

/**
 * The one line a turn's retries make, as of `now` (ms since the epoch):
 * "Cannot reach the model — retrying in 4 s (attempt 3 of 5)", then
 * "… the model answered after 2 retries." or "… gave up after 5 attempts.".
 */
export function retryLine(
  entry: Pick<RetryEntry, 'state' | 'attempt' | 'maxAttempts' | 'delayMs' | 'retryAt' | 'failure' | 'reason'>,
  now: number,
): string {
  const what = (entry.failure !== undefined ? RETRY_FAILURES[entry.failure] : undefined) ?? `Model unavailable (${entry.reason})`;
  switch (entry.state) {
    case 'waiting': {
      // Never longer than the delay the server gave (clocks may differ), never below 0.
      const left = Math.min(entry.delayMs, Math.max(0, (entry.retryAt ?? now + entry.delayMs) - now));
      const when = left >= 1000 ? `retrying in ${Math.ceil(left / 1000)} s` : 'retrying now';
      return `${what} — ${when} (attempt ${entry.attempt + 1} of ${entry.maxAttempts}).`;
    }
    case 'recovered':
      return `${what}: the model answered after ${plural(entry.attempt, 'retry', 'retries')}.`;
    case 'failed':
      return `${what}: gave up after ${plural(entry.attempt + 1, 'attempt')}.`;
    case 'cancelled':
      return `${what}: cancelled while waiting to retry.`;
  }
}
