import * as assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { AgentEvent, Receipt, Usage } from '../../src/protocol';
import { retryLine, turnHeading } from '../../src/format';
import {
  MAX_TOOL_OUTPUT,
  type MessageEntry,
  type RetryEntry,
  type ToolCallEntry,
  Transcript,
  type TranscriptInput,
} from '../../src/transcript';

/** Events of one pane with seq counted for us. */
function stream(pane = 'main', start = 1): (event: Record<string, unknown>) => AgentEvent {
  let seq = start - 1;
  return (event) => ({ pane, seq: ++seq, turnId: 1, ...event }) as AgentEvent;
}

function applyAll(transcript: Transcript, inputs: TranscriptInput[]): void {
  for (const input of inputs) {
    transcript.apply(input);
  }
}

const receipt: Receipt = {
  turnId: 1,
  abortedToolCalls: [{ callId: 'c1', tool: 'exec_command' }],
  killedProcesses: 2,
  survivingProcesses: 0,
};

const usage: Usage = { inputTokens: 0, outputTokens: 0, reasoningTokens: 0, cachedTokens: 0 };

describe('Transcript', () => {
  test('folds a turn: prompt, coalesced deltas into one message, tool call, final status', () => {
    const e = stream();
    const t = new Transcript();
    applyAll(t, [
      e({ kind: 'turn.started', prompt: 'Fix the test' }),
      e({ kind: 'reasoning.delta', text: 'Look at ' }),
      e({ kind: 'reasoning.delta', text: 'the test.' }),
      e({ kind: 'message.delta', text: 'Running ' }),
      e({ kind: 'message.delta', text: 'it.' }),
      e({ kind: 'tool.started', callId: 'c1', tool: 'exec_command', title: 'Running `pytest`', arguments: { cmd: 'pytest' } }),
      e({ kind: 'tool.output', callId: 'c1', text: '1 passed' }),
      e({ kind: 'tool.output', callId: 'c1', text: '\n' }),
      e({ kind: 'tool.finished', callId: 'c1', status: 'completed', exitCode: 0 }),
      e({ kind: 'message.delta', text: 'All **green**.' }),
      e({ kind: 'usage', inputTokens: 10, outputTokens: 5, reasoningTokens: 1, cachedTokens: 0 }),
      e({ kind: 'turn.finished', status: 'completed', finalMessage: 'All **green**.' }),
    ]);
    const [turn] = t.turnList();
    assert.equal(turn.prompt, 'Fix the test');
    assert.equal(turn.status, 'completed');
    assert.deepEqual(
      turn.entries.map((entry) => entry.kind),
      ['reasoning', 'message', 'tool', 'message'],
    );
    assert.equal((turn.entries[1] as MessageEntry).text, 'Running it.');
    const tool = turn.entries[2] as ToolCallEntry;
    assert.deepEqual([tool.status, tool.exitCode, tool.output], ['completed', 0, '1 passed\n']);
    assert.equal((turn.entries[3] as MessageEntry).text, 'All **green**.');
    assert.equal(turn.usage?.reasoningTokens, 1);
    assert.equal(t.state(), 'idle');
    assert.deepEqual(t.gaps, []);
  });

  test('state: idle, running, cancelled (with the receipt), failed', () => {
    const e = stream();
    const t = new Transcript();
    assert.equal(t.state(), 'idle');
    t.apply(e({ kind: 'turn.started', prompt: 'p' }));
    assert.equal(t.state(), 'running');
    t.apply(e({ kind: 'tool.started', callId: 'c1', tool: 'exec_command', title: 'Running `sleep 9`', arguments: {} }));
    t.apply(e({ kind: 'turn.finished', status: 'cancelled', finalMessage: '', usage, receipt }));
    assert.equal(t.state(), 'cancelled');
    const [turn] = t.turnList();
    assert.deepEqual(turn.receipt, receipt);
    assert.equal((turn.entries[0] as ToolCallEntry).status, 'cancelled', 'a tool still running ends cancelled');
    t.apply(e({ kind: 'turn.started', prompt: 'again', turnId: 2 }));
    t.apply(e({ kind: 'turn.finished', status: 'failed', finalMessage: '', error: 'model down', turnId: 2 }));
    assert.equal(t.state(), 'failed');
    assert.equal(t.turn(2)?.error, 'model down');
  });

  test('seq: duplicates are dropped, a gap is recorded and shown, the event still applies', () => {
    const t = new Transcript();
    const base = { pane: 'main', turnId: 1 };
    assert.equal(t.apply({ ...base, seq: 1, kind: 'turn.started', prompt: 'p', number: 1 }), 'applied');
    assert.equal(t.apply({ ...base, seq: 2, kind: 'message.delta', text: 'a' }), 'applied');
    assert.equal(t.apply({ ...base, seq: 2, kind: 'message.delta', text: 'a' }), 'duplicate');
    assert.equal(t.apply({ ...base, seq: 1, kind: 'message.delta', text: 'x' }), 'duplicate');
    assert.equal(t.apply({ ...base, seq: 5, kind: 'message.delta', text: 'd' }), 'gap');
    assert.deepEqual(t.gaps, [{ channel: 'main', from: 3, to: 4 }]);
    assert.equal(t.lastSeq('main'), 5);
    const notice = t.items.find((item) => item.type === 'notice');
    assert.ok(notice !== undefined && notice.type === 'notice' && notice.level === 'warning');
    assert.match(notice.text, /2 events of main went missing \(seq 3–4\)/);
    // The final message repairs the text the lost deltas carried.
    t.apply({ ...base, seq: 6, kind: 'turn.finished', status: 'completed', finalMessage: 'abcd', usage });
    assert.equal((t.turnList()[0].entries[0] as MessageEntry).text, 'abcd');
  });

  test('seq is counted per channel', () => {
    const t = new Transcript();
    t.apply({ pane: 'main', seq: 1, turnId: null, kind: 'pane.opened', items: 0 });
    assert.equal(t.apply({ pane: 'fork-1', seq: 1, turnId: null, kind: 'pane.opened', items: 2 }), 'applied');
    assert.deepEqual(t.gaps, []);
  });

  test('steers: admitted, then applied', () => {
    const e = stream();
    const t = new Transcript();
    applyAll(t, [
      e({ kind: 'turn.started', prompt: 'p' }),
      e({ kind: 'steer.admitted', text: 'use tabs' }),
      e({ kind: 'steer.admitted', text: 'and tests' }),
    ]);
    const steers = () => t.turnList()[0].entries.map((entry) => entry.kind === 'steer' && [entry.text, entry.applied]);
    assert.deepEqual(steers(), [
      ['use tabs', false],
      ['and tests', false],
    ]);
    t.apply(e({ kind: 'steer.applied', text: 'and tests' }));
    t.apply(e({ kind: 'steer.applied', text: 'use tabs' }));
    assert.deepEqual(steers(), [
      ['use tabs', true],
      ['and tests', true],
    ]);
  });

  test('a queued turn cancelled before it started still shows, with its prompt from the submit result', () => {
    const t = new Transcript();
    t.apply({ pane: 'main', seq: 1, turnId: 7, kind: 'turn.finished', status: 'cancelled', finalMessage: '', usage, receipt });
    assert.equal(t.turn(7)?.prompt, '');
    t.apply({ kind: 'local.result', prompt: 'queued one', result: { pane: 'main', turnId: 7, status: 'cancelled', finalMessage: '' } });
    assert.equal(t.turn(7)?.prompt, 'queued one');
    assert.equal(t.turn(7)?.status, 'cancelled');
  });

  test('the submit result finishes a turn whose turn.finished went missing', () => {
    const t = new Transcript();
    t.apply({ pane: 'main', seq: 1, turnId: 1, kind: 'turn.started', prompt: 'p', number: 1 });
    t.apply({ kind: 'local.result', result: { pane: 'main', turnId: 1, status: 'completed', finalMessage: 'done' } });
    assert.equal(t.turn(1)?.status, 'completed');
    assert.equal((t.turn(1)?.entries[0] as MessageEntry).text, 'done');
  });

  test('tool output is capped, keeping the tail', () => {
    const e = stream();
    const t = new Transcript();
    t.apply(e({ kind: 'tool.started', callId: 'c', tool: 'exec_command', title: 'yes', arguments: {} }));
    t.apply(e({ kind: 'tool.output', callId: 'c', text: 'a'.repeat(MAX_TOOL_OUTPUT) }));
    t.apply(e({ kind: 'tool.output', callId: 'c', text: 'END' }));
    const tool = t.turnList()[0].entries[0] as ToolCallEntry;
    assert.equal(tool.output.length, MAX_TOOL_OUTPUT);
    assert.ok(tool.output.endsWith('END'));
    assert.equal(tool.droppedOutput, 3);
  });

  test('plan updates replace the plan; retries are listed', () => {
    const e = stream();
    const t = new Transcript();
    t.apply(e({ kind: 'plan.updated', plan: [{ step: 'read', status: 'in_progress' }] }));
    t.apply(e({ kind: 'model.retry', attempt: 1, maxAttempts: 5, delayMs: 500, reason: 'HTTP 429' }));
    t.apply(e({ kind: 'plan.updated', plan: [{ step: 'read', status: 'completed' }], explanation: 'done reading' }));
    const entries = t.turnList()[0].entries;
    assert.deepEqual(
      entries.map((entry) => entry.kind),
      ['plan', 'retry'],
    );
    assert.deepEqual(entries[0].kind === 'plan' && entries[0].plan, [{ step: 'read', status: 'completed' }]);
  });

  test('the server stopping fails running turns and restarts seq', () => {
    const t = new Transcript();
    t.apply({ pane: 'main', seq: 1, turnId: 1, kind: 'turn.started', prompt: 'p', number: 1 });
    t.apply({ kind: 'local.serverStopped', reason: 'The server stopped.' });
    assert.equal(t.turn(1)?.status, 'failed');
    assert.equal(t.turn(1)?.error, 'The server stopped.');
    assert.equal(t.apply({ pane: 'main', seq: 1, turnId: 2, kind: 'turn.started', prompt: 'q', number: 1 }), 'applied');
    assert.deepEqual(t.gaps, []);
  });

  test('pane events become notices; a reset starts over and keeps seq bases', () => {
    const t = new Transcript();
    t.apply({ pane: 'main', seq: 1, turnId: null, kind: 'pane.opened', items: 0 });
    t.apply({ pane: 'fork-1', seq: 1, turnId: null, kind: 'pane.opened', items: 4 });
    t.apply({ pane: 'main', seq: 2, turnId: null, kind: 'pane.opened', promotedFrom: 'fork-1' });
    const texts = t.items.map((item) => item.type === 'notice' && item.text);
    assert.match(String(texts[0]), /New session/);
    assert.match(String(texts[1]), /Forked: 4 conversation items/);
    assert.match(String(texts[2]), /fork-1 is now main/);
    t.takeChanges();
    t.apply({ kind: 'local.reset', seqs: { main: 9 } });
    assert.deepEqual(t.items, []);
    assert.deepEqual(t.takeChanges(), { reset: true, keys: [] });
    assert.equal(t.apply({ pane: 'main', seq: 10, turnId: null, kind: 'pane.closed' }), 'applied');
  });

  test('takeChanges lists changed items once, with revisions for redrawing only what changed', () => {
    const e = stream();
    const t = new Transcript();
    t.apply(e({ kind: 'turn.started', prompt: 'p' }));
    assert.deepEqual(t.takeChanges(), { reset: false, keys: ['t1'] });
    assert.deepEqual(t.takeChanges(), { reset: false, keys: [] });
    t.apply(e({ kind: 'message.delta', text: 'a' }));
    const entry = t.turnList()[0].entries[0];
    const rev = entry.rev;
    t.apply(e({ kind: 'message.delta', text: 'b' }));
    assert.ok(entry.rev > rev);
    assert.deepEqual(t.takeChanges().keys, ['t1']);
  });

  test('keeps up with a fast stream: 50 000 deltas fold in well under a second', () => {
    const e = stream();
    const t = new Transcript();
    t.apply(e({ kind: 'turn.started', prompt: 'p' }));
    const began = performance.now();
    for (let i = 0; i < 50_000; i++) {
      t.apply(e({ kind: i % 1000 === 999 ? 'reasoning.delta' : 'message.delta', text: 'word ' }));
    }
    const elapsed = performance.now() - began;
    assert.ok(elapsed < 1000, `${elapsed.toFixed(0)} ms`);
    assert.equal(t.turnList()[0].entries.length, 100);
    assert.deepEqual(t.takeChanges().keys, ['t1'], 'one item to redraw, however many deltas');
  });

  test('session.resumed: the pane shows the stored conversation instead, and what resuming repaired', () => {
    const e = stream();
    const t = new Transcript();
    applyAll(t, [e({ kind: 'turn.started', prompt: 'another conversation' })]);
    t.apply({
      pane: 'main',
      seq: 2,
      turnId: null,
      kind: 'session.resumed',
      sessionId: 's1',
      title: 'Fix the tests',
      turns: 2,
      entries: [
        { role: 'user', text: 'Fix the tests' },
        { role: 'tool', text: 'Running `pytest`', tool: 'exec_command', status: 'interrupted' },
        { role: 'steer', text: 'use tabs' },
      ],
      interrupted: true,
      unsent: ['and the docs'],
      notice: 'The last turn was interrupted.',
    });
    assert.deepEqual(t.turnList(), []);
    const [earlier, notice] = t.items;
    assert.equal(earlier.type, 'earlier');
    assert.equal(earlier.type === 'earlier' && earlier.title, 'Resumed “Fix the tests” (2 turns)');
    assert.equal(earlier.type === 'earlier' && earlier.entries.length, 3);
    assert.deepEqual(notice.type === 'notice' && [notice.text, notice.level], ['The last turn was interrupted.', 'warning']);
    assert.equal(t.takeChanges().reset, true);
    assert.equal(t.lastSeq('main'), 2, 'seq goes on');
  });

  test('a fork’s pane.opened shows what it inherited', () => {
    const t = new Transcript();
    t.apply({
      pane: 'fork-1',
      seq: 1,
      turnId: null,
      kind: 'pane.opened',
      items: 2,
      sessionId: 's2',
      entries: [
        { role: 'user', text: 'parent prompt' },
        { role: 'assistant', text: 'parent answer' },
      ],
    });
    const kinds = t.items.map((item) => item.type);
    assert.deepEqual(kinds, ['notice', 'earlier']);
    const earlier = t.items[1];
    assert.equal(earlier.type === 'earlier' && earlier.title, 'What this fork inherited (1 prompt)');
  });

  test('retries collapse into one line that updates, and says how it ended; turns are numbered by the server', () => {
    const e = stream();
    const t = new Transcript();
    t.apply(e({ kind: 'turn.started', prompt: 'p', number: 4 }));
    const at = 1_000_000;
    t.apply(e({ kind: 'model.retry', attempt: 1, maxAttempts: 5, delayMs: 2000, retryAt: at + 2000, failure: 'connection', reason: 'refused' }));
    t.apply(e({ kind: 'model.retry', attempt: 2, maxAttempts: 5, delayMs: 4000, retryAt: at + 4000, failure: 'connection', reason: 'refused' }));
    const turn = t.turnList()[0];
    assert.equal(turn.number, 4);
    assert.equal(turnHeading(turn), 'turn 4 · Running');
    assert.equal(turn.entries.length, 1, 'one line for both retries');
    const line = turn.entries[0] as RetryEntry;
    assert.equal(retryLine(line, at + 1500), 'Cannot reach the model — retrying in 3 s (attempt 3 of 5).');
    t.apply(e({ kind: 'message.delta', text: 'hi' }));
    assert.equal(line.state, 'recovered');
    assert.equal(retryLine(line, at), 'Cannot reach the model: the model answered after 2 retries.');
    // A later failure starts a new line; the turn failing ends it.
    t.apply(e({ kind: 'model.retry', attempt: 1, maxAttempts: 2, delayMs: 100, failure: 'rate_limit', reason: '429' }));
    t.apply(e({ kind: 'turn.finished', status: 'failed', finalMessage: '', error: 'rate limited', failure: 'rate_limit' }));
    const retries = turn.entries.filter((entry): entry is RetryEntry => entry.kind === 'retry');
    assert.deepEqual(
      retries.map((entry) => entry.state),
      ['recovered', 'failed'],
    );
    assert.equal(retryLine(retries[1], at), 'Rate limited by the model server: gave up after 2 attempts.');
    assert.equal(turn.failure, 'rate_limit');
  });

  test('New Session clears the view: the old conversation is stored, not shown', () => {
    const e = stream();
    const t = new Transcript();
    t.apply(e({ kind: 'turn.started', prompt: 'old work' }));
    t.apply(e({ kind: 'turn.finished', status: 'completed', finalMessage: 'done' }));
    t.apply(e({ kind: 'pane.opened', turnId: null, items: 0 }));
    assert.deepEqual(
      t.items.map((item) => item.type),
      ['notice'],
    );
  });
});
