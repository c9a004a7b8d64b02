/** Stopping what a protocol test started (servers, fake models), after each test. */

import { afterEach } from 'node:test';

/** What a test started and must stop: stopped after each test, the last started first. */
export function stoppedAfterEach(): { push(process: { stop(): Promise<unknown> }): void } {
  let running: Array<{ stop(): Promise<unknown> }> = [];
  afterEach(async () => {
    const stopping = running.reverse();
    running = [];
    for (const process of stopping) {
      await process.stop();
    }
  });
  return { push: (process) => void running.push(process) };
}
