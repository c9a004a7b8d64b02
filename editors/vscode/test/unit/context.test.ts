import * as assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  compactionSummary,
  contextSummary,
  formatTokens,
  instructionsSummary,
  statusText,
} from '../../src/format';
import type { AgentEvent } from '../../src/protocol';
import {
  type CitationsEntry,
  type CompactionEntry,
  type CompactionItem,
  type MessageEntry,
  type ToolCallEntry,
  Transcript,
} from '../../src/transcript';

function stream(pane = 'main'): (event: Record<string, unknown>) => AgentEvent {
  let seq = 0;
  return (event) => ({ pane, seq: ++seq, turnId: 1, ...event }) as AgentEvent;
}

const usage = { inputTokens: 10, outputTokens: 5, reasoningTokens: 0, cachedTokens: 0 };

describe('the context window in the transcript', () => {
  test('the meter follows usage, the result and compactions; a new session resets it', () => {
    const e = stream();
    const t = new Transcript();
    assert.equal(t.context, undefined);
    t.apply(e({ kind: 'turn.started', prompt: 'p' }));
    t.apply(e({ kind: 'usage', ...usage, contextTokens: 9000, contextWindow: 10000 }));
    assert.deepEqual(t.context, { tokens: 9000, window: 10000 });
    t.apply(e({ kind: 'compaction.started', reason: 'auto', beforeTokens: 9000 }));
    t.apply(e({ kind: 'compaction.finished', beforeTokens: 9000, afterTokens: 1200, mode: 'summary', summary: 'S' }));
    assert.deepEqual(t.context, { tokens: 1200, window: 10000 });
    t.apply(
      e({
        kind: 'turn.finished',
        status: 'completed',
        finalMessage: 'ok',
        usage: { ...usage, contextTokens: 1500, contextWindow: 10000 },
      }),
    );
    assert.deepEqual(t.context, { tokens: 1500, window: 10000 });
    t.apply({ pane: 'main', seq: 7, turnId: null, kind: 'pane.opened', items: 0 });
    assert.equal(t.context, undefined);
  });

  test('a compaction in a turn is an entry of it; one on request is an item of its own', () => {
    const e = stream();
    const t = new Transcript();
    t.apply(e({ kind: 'turn.started', prompt: 'p' }));
    t.apply(e({ kind: 'compaction.started', reason: 'overflow', beforeTokens: 50_000 }));
    const [turn] = t.turnList();
    const entry = turn.entries[0] as CompactionEntry;
    assert.deepEqual([entry.kind, entry.state, entry.reason], ['compaction', 'running', 'overflow']);
    t.apply(e({ kind: 'compaction.finished', beforeTokens: 50_000, afterTokens: 4000, mode: 'trim' }));
    assert.deepEqual([entry.state, entry.afterTokens, entry.mode], ['done', 4000, 'trim']);
    assert.equal(turn.entries.length, 1, 'started and finished are one entry');
    t.apply(e({ kind: 'turn.finished', status: 'completed', finalMessage: 'done' }));
    t.apply(e({ kind: 'compaction.started', turnId: null, reason: 'manual', beforeTokens: 4200 }));
    t.apply(e({ kind: 'compaction.finished', turnId: null, beforeTokens: 4200, afterTokens: 900, mode: 'summary' }));
    const item = t.items.at(-1) as CompactionItem;
    assert.deepEqual([item.type, item.state, item.afterTokens], ['compaction', 'done', 900]);
    assert.ok(t.item(item.key) === item, 'found by its key');
    assert.match(compactionSummary(item), /^Compacted: 4.2k → 900 tokens \(summary\)\.$/);
    assert.match(compactionSummary(entry), /after the model found it too long.*old tool outputs cut/);
  });

  test('citations follow the answer and do not duplicate it; a refusal is marked; sources stay on the search', () => {
    const e = stream();
    const t = new Transcript();
    t.apply(e({ kind: 'turn.started', prompt: 'search' }));
    t.apply(e({ kind: 'tool.preparing', tool: 'web_search_call', title: 'Searching the web…', chars: 0 }));
    assert.equal(t.turnList()[0].activity, 'Searching the web…');
    t.apply(e({ kind: 'tool.started', callId: 'ws_1', tool: 'web_search', title: 'Searched the web: x', arguments: {} }));
    assert.equal(t.turnList()[0].activity, undefined);
    const sources = [{ url: 'https://example.com/a', title: 'A' }];
    t.apply(e({ kind: 'tool.finished', callId: 'ws_1', status: 'completed', sources }));
    t.apply(e({ kind: 'message.delta', text: 'Found it.' }));
    t.apply(e({ kind: 'message.citations', citations: [{ url: 'https://example.com/a', title: 'A', startIndex: 0 }] }));
    t.apply(e({ kind: 'turn.finished', status: 'completed', finalMessage: 'Found it.' }));
    const [turn] = t.turnList();
    assert.deepEqual(
      turn.entries.map((entry) => entry.kind),
      ['tool', 'message', 'citations'],
    );
    assert.deepEqual((turn.entries[0] as ToolCallEntry).sources, sources);
    assert.equal((turn.entries[2] as CitationsEntry).citations[0].url, 'https://example.com/a');
    t.apply(e({ kind: 'turn.started', turnId: 2, prompt: 'bad' }));
    t.apply(e({ kind: 'message.delta', turnId: 2, text: "I can't help." }));
    t.apply(e({ kind: 'message.refusal', turnId: 2, text: "I can't help." }));
    assert.equal((t.turn(2)!.entries[0] as MessageEntry).refusal, true);
  });
});

describe('the meter in words', () => {
  test('tokens, the meter, the status bar, the instructions line', () => {
    assert.deepEqual([950, 12_345, 272_000, 1_047_576].map(formatTokens), ['950', '12.3k', '272k', '1.0M']);
    assert.equal(contextSummary({ tokens: 13_600, window: 272_000 }), 'context 13.6k of 272k tokens (5%)');
    assert.equal(
      statusText('main', 'idle', 'high', false, { tokens: 136_000, window: 272_000 }),
      '$(hubot) AgentLS main: idle · high · 50%',
    );
    assert.equal(
      instructionsSummary(
        [
          { path: 'AGENTS.md', bytes: 1200 },
          { path: 'pkg/AGENTS.md', bytes: 1974 },
        ],
        3174,
      ),
      'instructions: 2 files, 3.1 KiB (AGENTS.md, pkg/AGENTS.md)',
    );
    assert.equal(instructionsSummary([], 0), 'instructions: no AGENTS.md files');
  });
});
