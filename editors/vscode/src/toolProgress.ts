/**
 * A running command gets a cancellable progress notification of its own
 * ("AgentLS: Running `pytest -q`") while its transcript is hidden (shown, the
 * command's Stop button is there): its Cancel stops that command only
 * (`agent/cancelTool`); the turn goes on with what it printed so far. The
 * notification ends when the command does (or its turn, or the server).
 */

import type { Ui } from './controller';
import type { ProgressHandle } from './progress';
import type { AgentEvent } from './protocol';

/** The tools that run a command the user may want to stop while the turn goes on. */
export const STOPPABLE_TOOLS = new Set(['exec_command']);

export class ToolProgress {
  /** Running commands by call id: what ends their progress. */
  private readonly running = new Map<string, { turnId: number; progress: ProgressHandle }>();

  constructor(
    private readonly ui: Pick<Ui, 'paneProgress'>,
    private readonly stop: (pane: string, callId: string) => Promise<unknown>,
  ) {}

  handle(event: AgentEvent): void {
    if (event.kind === 'tool.started' && STOPPABLE_TOOLS.has(event.tool)) {
      const { pane, callId, turnId } = event;
      const progress = this.ui.paneProgress(pane, `AgentLS: ${event.title}`, () => void this.stop(pane, callId), {
        window: false,
      });
      this.running.set(callId, { turnId, progress });
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
      entry.progress.end();
    }
  }
}
