/**
 * A running command gets a cancellable progress notification of its own
 * ("AgentLS: Running `pytest -q`"): its Cancel stops that command only
 * (`agent/cancelTool`); the turn goes on with what it printed so far. The
 * notification ends when the command does (or its turn, or the server).
 */

import type { CancellationToken } from './client';
import type { ProgressReporter } from './controller';
import type { AgentEvent } from './protocol';

/** The tools that run a command the user may want to stop while the turn goes on. */
export const STOPPABLE_TOOLS = new Set(['exec_command']);

export interface ProgressUi {
  withProgress<T>(title: string, task: (progress: ProgressReporter, token: CancellationToken) => Promise<T>): Promise<T>;
}

export class ToolProgress {
  /** Running commands by call id: what ends their notification. */
  private readonly running = new Map<string, { turnId: number; end: () => void }>();

  constructor(
    private readonly ui: ProgressUi,
    private readonly stop: (pane: string, callId: string) => Promise<unknown>,
  ) {}

  handle(event: AgentEvent): void {
    if (event.kind === 'tool.started' && STOPPABLE_TOOLS.has(event.tool)) {
      const { pane, callId, turnId } = event;
      void this.ui.withProgress(
        `AgentLS: ${event.title}`,
        (_progress, token) =>
          new Promise<void>((resolve) => {
            this.running.set(callId, { turnId, end: resolve });
            token.onCancellationRequested(() => void this.stop(pane, callId));
          }),
      );
    } else if (event.kind === 'tool.finished') {
      this.end(event.callId);
    } else if (event.kind === 'turn.finished') {
      for (const [callId, entry] of [...this.running]) {
        if (entry.turnId === event.turnId) {
          this.end(callId);
        }
      }
    }
  }

  /** The server went away: every command with it. */
  endAll(): void {
    for (const callId of [...this.running.keys()]) {
      this.end(callId);
    }
  }

  private end(callId: string): void {
    const entry = this.running.get(callId);
    if (entry !== undefined) {
      this.running.delete(callId);
      entry.end();
    }
  }
}
