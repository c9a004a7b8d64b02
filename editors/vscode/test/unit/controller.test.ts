import * as assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CancellationToken } from '../../src/client';
import { AgentController, age, describeError, sessionDescription, shorten } from '../../src/controller';
import type { AgentEvent } from '../../src/protocol';
import { FakeClient } from '../support/fakeClient';
import { FakeUi } from '../support/fakeUi';

function setUp(): { client: FakeClient; ui: FakeUi; controller: AgentController } {
  const client = new FakeClient();
  const ui = new FakeUi();
  const controller = new AgentController(client, ui);
  return { client, ui, controller };
}

const selection = {
  uri: 'file:///ws/a.py',
  range: { start: { line: 1, character: 0 }, end: { line: 2, character: 4 } },
  text: 'x = 1',
};

function mainEvents(): (event: Record<string, unknown>) => AgentEvent {
  const seqs = new Map<string, number>();
  return (event) => {
    const pane = (event.pane as string | undefined) ?? 'main';
    const seq = (seqs.get(pane) ?? 0) + 1;
    seqs.set(pane, seq);
    return { turnId: 1, ...event, pane, seq } as AgentEvent;
  };
}

describe('AgentController commands', () => {
  test('Ask with no prompt sends nothing; Ask About Selection needs a selection', async () => {
    const { client, ui, controller } = setUp();
    assert.equal(await controller.ask(), undefined);
    assert.equal(await controller.ask({ selection: 'require' }), undefined);
    assert.match(ui.infos[0], /Select some text/);
    assert.deepEqual(client.requests, []);
  });

  test('Ask sends the selection and a workDoneToken; $/progress feeds the progress', async () => {
    const { client, ui, controller } = setUp();
    ui.selection = selection;
    ui.inputs.push('Why is x 1?');
    let seenToken: CancellationToken | undefined;
    client.handlers.set('agent/submit', async (params, token) => {
      seenToken = token;
      assert.equal(controller.paneState('main'), 'running', 'running while the request is pending');
      const progress = client.progress.get(params.workDoneToken)!;
      progress({ kind: 'begin', title: 'AgentLS: Why is x 1?', cancellable: true, message: 'Thinking…' });
      progress({ kind: 'report', message: 'Running `pytest -q`' });
      progress({ kind: 'end', message: 'Done' });
      return { pane: 'main', turnId: 1, status: 'completed', finalMessage: 'Because.' };
    });
    const result = await controller.ask();
    assert.equal(result?.finalMessage, 'Because.');
    const [request] = client.requests;
    assert.deepEqual(request.params, {
      pane: 'main',
      prompt: 'Why is x 1?',
      workDoneToken: 'test-token-1',
      context: { selection },
    });
    assert.ok(seenToken !== undefined, 'the request carries a cancellation token');
    assert.equal(ui.progress[0].title, 'AgentLS: Why is x 1?');
    assert.equal(ui.progress[0].window, true, 'a turn shows in the status bar');
    assert.ok(ui.progress[0].done);
    assert.deepEqual(ui.progress[0].messages, ['Thinking…', 'Running `pytest -q`']);
    assert.equal(client.progress.size, 0, 'the progress handler is disposed');
    const turn = controller.pane('main')!.transcript.turn(1)!;
    assert.equal(turn.status, 'completed');
    assert.equal(turn.prompt, 'Why is x 1?');
    assert.equal(controller.paneState('main'), 'idle');
  });

  test('a cancelled request (-32800) is not an error; the turn.finished event carries the receipt', async () => {
    const { client, ui, controller } = setUp();
    client.handlers.set(
      'agent/submit',
      (_params, token) =>
        new Promise((_resolve, reject) => {
          token!.onCancellationRequested(() => reject({ code: -32800, message: 'cancelled' }));
        }),
    );
    const pending = controller.submit('main', 'long job');
    assert.equal(controller.paneState('main'), 'running');
    ui.progress[0].cancel(); // the notification's Cancel (the transcript was hidden)
    assert.equal(await pending, undefined);
    assert.deepEqual(ui.errors, []);
    const e = mainEvents();
    controller.handleEvent(e({ kind: 'turn.started', prompt: 'long job' }));
    controller.handleEvent(
      e({
        kind: 'turn.finished',
        status: 'cancelled',
        finalMessage: '',
        receipt: { turnId: 1, abortedToolCalls: [], killedProcesses: 0, survivingProcesses: 0 },
      }),
    );
    assert.equal(controller.paneState('main'), 'cancelled');
  });

  test('a failed request is shown, in the transcript too', async () => {
    const { client, ui, controller } = setUp();
    client.handlers.set('agent/submit', () => Promise.reject({ code: -32003, message: 'stopping' }));
    assert.equal(await controller.submit('main', 'x'), undefined);
    assert.deepEqual(ui.errors, ['The request failed: The agent server is shutting down.']);
    const notice = controller.pane('main')!.transcript.items[0];
    assert.equal(notice.type === 'notice' && notice.level, 'error');
    assert.equal(controller.paneState('main'), 'idle');
  });

  test('Steer, Cancel, New Session target the active pane', async () => {
    const { client, ui, controller } = setUp();
    client.handlers.set('agent/steer', async () => ({ outcome: 'admitted', turnId: 3 }));
    client.handlers.set('agent/cancel', async () => ({ cancelled: 0, receipts: [] }));
    client.handlers.set('agent/newSession', async () => ({ pane: 'main', sessionId: 's2' }));
    ui.inputs.push('also lint');
    assert.deepEqual(await controller.steer(), { outcome: 'admitted', turnId: 3 });
    await controller.cancel();
    assert.match(ui.infos.at(-1)!, /Nothing to cancel on main/);
    await controller.newSession();
    assert.deepEqual(
      client.requests.map((r) => [r.method, r.params]),
      [
        ['agent/steer', { pane: 'main', prompt: 'also lint' }],
        ['agent/cancel', { pane: 'main' }],
        ['agent/newSession', { pane: 'main' }],
      ],
    );
  });

  test('errors from commands become messages', async () => {
    const { client, ui, controller } = setUp();
    client.handlers.set('agent/newSession', () => Promise.reject({ code: -32004, message: 'busy' }));
    assert.equal(await controller.newSession(), undefined);
    assert.deepEqual(ui.errors, ['The pane has a turn in flight: cancel it first.']);
  });

  test('Set Effort offers the server’s efforts; Toggle Fast Mode flips', async () => {
    const { client, ui, controller } = setUp();
    client.handlers.set('agent/setEffort', async (params) => ({ pane: params.pane, effort: params.effort }));
    client.handlers.set('agent/setFastMode', async (params) => ({ pane: params.pane, enabled: params.enabled }));
    assert.deepEqual(controller.efforts(), ['low', 'medium', 'high']);
    ui.picks.push('high');
    assert.equal(await controller.setEffort(), 'high');
    assert.equal(controller.pane('main')!.effort, 'high');
    // The picker opens on the current effort, marked.
    const first = ui.shown.at(-1) as { active?: string; items: Array<{ value: string; label: string; description?: string }> };
    assert.equal(first.active, 'medium');
    assert.deepEqual(
      first.items.find((item) => item.value === 'medium'),
      { value: 'medium', label: '$(check) medium', description: 'current' },
    );
    assert.equal(await controller.toggleFastMode(), true);
    assert.equal(await controller.toggleFastMode(), false);
    ui.picks.push(undefined as unknown as string);
    assert.equal(await controller.setEffort(), undefined, 'dismissing the pick changes nothing');
    assert.equal(client.requests.filter((r) => r.method === 'agent/setEffort').length, 1);
  });

  test('Compact Conversation asks for a focus, refuses a running pane; a model without effort says so', async () => {
    const { client, ui, controller } = setUp();
    client.handlers.set('agent/compact', async () => ({ beforeTokens: 9000, afterTokens: 1000, mode: 'summary' }));
    ui.inputs.push('the parser');
    assert.deepEqual(await controller.compact(), { beforeTokens: 9000, afterTokens: 1000, mode: 'summary' });
    ui.inputs.push('  ');
    await controller.compact();
    const sent = client.requests.filter((r) => r.method === 'agent/compact').map((r) => r.params);
    assert.deepEqual(sent, [{ pane: 'main', focus: 'the parser' }, { pane: 'main' }]);
    ui.inputs.push(undefined as unknown as string);
    assert.equal(await controller.compact(), undefined, 'dismissing the input box compacts nothing');
    client.caps = { ...client.caps!, efforts: [], model: 'gpt-4o' };
    assert.deepEqual(controller.efforts(), []);
    assert.equal(await controller.setEffort(), undefined);
    assert.match(ui.infos.at(-1) ?? '', /gpt-4o does not reason/);
    client.handlers.set('agent/instructions', async () => ({
      files: [{ path: 'AGENTS.md', bytes: 2048 }],
      bytes: 2048,
      cutBytes: 0,
    }));
    assert.equal(await controller.instructionsSummary(), 'instructions: 1 file, 2.0 KiB (AGENTS.md)');
  });

  test('Fork opens a pane beside main with its settings; a second Fork offers Close Pane', async () => {
    const { client, ui, controller } = setUp();
    const reveals: unknown[] = [];
    controller.onDidRequestReveal((request) => reveals.push(request));
    client.handlers.set('agent/fork', async () => ({ pane: 'fork-1', items: 2 }));
    client.handlers.set('agent/closePane', async () => ({ cancelled: 0 }));
    controller.settingsApplied({ effort: 'low' });
    assert.deepEqual(await controller.fork(), { pane: 'fork-1', items: 2 });
    assert.deepEqual(controller.paneNames(), ['main', 'fork-1']);
    assert.equal(controller.pane('fork-1')!.effort, 'low');
    assert.equal(controller.activePane, 'fork-1');
    assert.deepEqual(reveals, [{ pane: 'fork-1', beside: true }]);
    ui.answer = 'Close Pane';
    assert.equal(await controller.fork(), undefined);
    assert.match(ui.infos.at(-1)!, /fork-1 is already open/);
    assert.deepEqual(client.requests.at(-1), { method: 'agent/closePane', params: { pane: 'fork-1' }, token: undefined });
    assert.deepEqual(controller.paneNames(), ['main']);
    assert.equal(controller.activePane, 'main');
    ui.answer = undefined;
    assert.equal(await controller.closePane(), undefined);
    assert.match(ui.infos.at(-1)!, /No fork is open/);
  });

  test('events are routed by pane; a closed pane’s late events are dropped', () => {
    const { controller } = setUp();
    const e = mainEvents();
    controller.handleEvent(e({ pane: 'fork-1', turnId: null, kind: 'pane.opened', items: 2 }));
    assert.deepEqual(controller.paneNames(), ['main', 'fork-1']);
    controller.handleEvent(e({ pane: 'fork-1', turnId: null, kind: 'pane.closed' }));
    assert.deepEqual(controller.paneNames(), ['main']);
    controller.handleEvent(e({ pane: 'fork-1', kind: 'turn.started', prompt: 'late' }));
    assert.deepEqual(controller.paneNames(), ['main']);
  });

  test('closing main with a fork open: main takes over the fork’s transcript, seq continues', () => {
    const { controller } = setUp();
    const replaced: string[] = [];
    controller.onDidReplace((pane) => replaced.push(pane));
    const e = mainEvents();
    controller.handleEvent(e({ kind: 'turn.started', prompt: 'on main' }));
    controller.handleEvent(e({ kind: 'turn.finished', status: 'completed', finalMessage: 'm' }));
    controller.handleEvent(e({ pane: 'fork-1', turnId: null, kind: 'pane.opened', items: 2 }));
    controller.handleEvent(e({ pane: 'fork-1', turnId: 2, kind: 'turn.started', prompt: 'on fork' }));
    controller.handleEvent(e({ pane: 'fork-1', turnId: 2, kind: 'turn.finished', status: 'completed', finalMessage: 'f' }));
    controller.handleEvent(e({ pane: 'fork-1', turnId: null, kind: 'pane.closed', promotedTo: 'main' }));
    controller.handleEvent(e({ turnId: null, kind: 'pane.opened', promotedFrom: 'fork-1' }));
    assert.deepEqual(controller.paneNames(), ['main']);
    assert.deepEqual(replaced, ['main']);
    const main = controller.pane('main')!;
    assert.equal(main.log[0].kind, 'local.reset');
    assert.deepEqual(
      main.transcript.turnList().map((turn) => [turn.prompt, turn.status, turn.entries.length]),
      [['on fork', 'completed', 1]],
    );
    assert.equal(main.transcript.items.filter((item) => item.type === 'notice').length, 2, 'forked + promoted');
    controller.handleEvent(e({ turnId: 3, kind: 'turn.started', prompt: 'after' }));
    assert.deepEqual(main.transcript.gaps, []);
    assert.equal(main.transcript.turnList().length, 2);
  });

  test('a stopped server fails running turns and drops the fork; a new one starts from the settings', () => {
    const { controller } = setUp();
    const e = mainEvents();
    controller.handleEvent(e({ kind: 'turn.started', prompt: 'running' }));
    controller.handleEvent(e({ pane: 'fork-1', turnId: null, kind: 'pane.opened', items: 1 }));
    controller.serverStopped('The agent server stopped.');
    assert.deepEqual(controller.paneNames(), ['main']);
    assert.equal(controller.paneState('main'), 'failed');
    controller.serverStarted({ effort: 'xhigh', fastMode: true });
    assert.equal(controller.pane('main')!.effort, 'xhigh');
    assert.equal(controller.pane('main')!.fastMode, true);
    // A new server counts seq from 1 again, and fork-1 may be reused.
    controller.handleEvent({ pane: 'main', seq: 1, turnId: 1, kind: 'turn.started', prompt: 'again', number: 1 });
    controller.handleEvent({ pane: 'fork-1', seq: 1, turnId: null, kind: 'pane.opened', items: 1 });
    assert.deepEqual(controller.pane('main')!.transcript.gaps, []);
    assert.deepEqual(controller.paneNames(), ['main', 'fork-1']);
  });

  test('settings applied by the server reach every pane', () => {
    const { controller } = setUp();
    controller.handleEvent({ pane: 'fork-1', seq: 1, turnId: null, kind: 'pane.opened', items: 1 });
    controller.settingsApplied({ effort: 'minimal' });
    assert.deepEqual(
      controller.paneNames().map((name) => [controller.pane(name)!.effort, controller.pane(name)!.fastMode]),
      [
        ['minimal', false],
        ['minimal', false],
      ],
    );
    controller.settingsApplied({ fastMode: true });
    assert.equal(controller.pane('main')!.effort, 'minimal');
    assert.equal(controller.pane('main')!.fastMode, true);
  });

  test('describeError and shorten', () => {
    assert.equal(describeError({ code: -32001, message: 'x' }), 'That pane is no longer available.');
    assert.equal(describeError({ code: -32002, message: 'x' }), 'A fork is already open: close it before forking again.');
    assert.equal(describeError({ code: -32602, message: 'prompt: must not be empty' }), 'The server refused the request: prompt: must not be empty');
    assert.equal(describeError({ code: -32096, message: 'x' }), 'The agent server is not running: run AgentLS: Restart Server.');
    assert.equal(describeError(new Error('boom')), 'boom');
    assert.equal(shorten('a\n  b'), 'a b');
    assert.equal(shorten('x'.repeat(60)).length, 50);
  });
});

describe('AgentController sessions', () => {
  const now = Date.parse('2025-06-01T12:00:00Z');
  const sessions = [
    { sessionId: 'a'.repeat(32), title: 'Fix the parser', createdAt: '2025-06-01T10:00:00Z', updatedAt: '2025-06-01T11:55:00Z', turns: 3, pane: null },
    { sessionId: 'b'.repeat(32), title: 'Open one', createdAt: '2025-06-01T09:00:00Z', updatedAt: '2025-06-01T09:00:00Z', turns: 1, pane: 'main' },
    { sessionId: 'c'.repeat(32), title: '(unreadable: line 3 is damaged)', createdAt: '2025-05-30T12:00:00Z', updatedAt: '2025-05-30T12:00:00Z', turns: 0, pane: null, error: 'line 3 is damaged' },
  ];

  test('age and the pickers’ description: how long ago, how many turns', () => {
    assert.equal(age('2025-06-01T11:59:30Z', now), 'just now');
    assert.equal(age('2025-06-01T11:55:00Z', now), '5 min ago');
    assert.equal(age('2025-06-01T09:00:00Z', now), '3 h ago');
    assert.equal(age('2025-05-30T12:00:00Z', now), '2 d ago');
    assert.equal(sessionDescription(sessions[0], now), '5 min ago · 3 turns');
    assert.equal(sessionDescription(sessions[2], now), '2 d ago · unreadable');
  });

  test('Resume Session… picks among the sessions not open in a pane and resumes in the active pane', async () => {
    const { client, ui, controller } = setUp();
    client.handlers.set('agent/sessions', async () => ({ sessions }));
    client.handlers.set('agent/resume', async (params) => ({ pane: params.pane, sessionId: params.sessionId, turns: 3, title: 'Fix the parser', interrupted: false, unsent: [] }));
    ui.picks.push('a'.repeat(32));
    const result = await controller.resumeSession();
    assert.equal(result?.sessionId, 'a'.repeat(32));
    assert.deepEqual(
      ui.pickItems[0].map((item) => item.label),
      ['Fix the parser', '(unreadable: line 3 is damaged)'],
    );
    assert.match(ui.pickItems[0][0].description ?? '', /ago · 3 turns$/);
    assert.deepEqual(client.requests.at(-1), { method: 'agent/resume', params: { sessionId: 'a'.repeat(32), pane: 'main' }, token: undefined });
    ui.picks.push(undefined as unknown as string);
    assert.equal(await controller.resumeSession(), undefined, 'a dismissed pick resumes nothing');
    assert.equal(client.requests.filter((r) => r.method === 'agent/resume').length, 1);
  });

  test('a refused resume shows the server’s own words', async () => {
    const { client, ui, controller } = setUp();
    client.handlers.set('agent/resume', () => Promise.reject({ code: -32005, message: 'session ccc is unreadable: line 3 is damaged' }));
    assert.equal(await controller.resumeSession({ sessionId: 'c'.repeat(32) }), undefined);
    assert.deepEqual(ui.errors, ['AgentLS: session ccc is unreadable: line 3 is damaged']);
  });

  test('Delete Session… asks before it deletes', async () => {
    const { client, ui, controller } = setUp();
    client.handlers.set('agent/sessions', async () => ({ sessions }));
    client.handlers.set('agent/deleteSession', async () => ({ deleted: true }));
    ui.picks.push('a'.repeat(32));
    ui.answer = undefined;
    assert.equal(await controller.deleteSession(), false);
    assert.equal(client.requests.some((r) => r.method === 'agent/deleteSession'), false);
    ui.picks.push('a'.repeat(32));
    ui.answer = 'Delete';
    assert.equal(await controller.deleteSession(), true);
    assert.deepEqual(client.requests.at(-1)?.params, { sessionId: 'a'.repeat(32) });
  });

  test('a fresh server offers the last session, once main has nothing; a server without sessions offers nothing', async () => {
    const { client, ui, controller } = setUp();
    client.handlers.set('agent/sessions', async () => ({ sessions }));
    client.handlers.set('agent/resume', async (params) => ({ pane: 'main', sessionId: params.sessionId, turns: 3, title: 'Fix the parser', interrupted: false, unsent: [] }));
    ui.answer = 'Resume';
    const resumed = await controller.offerResume();
    assert.equal(resumed?.sessionId, 'a'.repeat(32));
    assert.match(ui.infos[0], /continue your last session “Fix the parser” \(.* · 3 turns\)\?/);
    assert.deepEqual(ui.infoActions[0], ['Resume', 'Other Sessions…']);
    const quiet = setUp();
    assert.equal(await quiet.controller.offerResume(), undefined); // agent/sessions fails: no offer, no error
    assert.deepEqual([quiet.ui.infos, quiet.ui.errors], [[], []]);
    const busy = setUp();
    busy.client.handlers.set('agent/sessions', async () => ({ sessions }));
    const e = mainEvents();
    busy.controller.handleEvent(e({ kind: 'turn.started', prompt: 'working' }));
    assert.equal(await busy.controller.offerResume(), undefined);
    assert.deepEqual(busy.ui.infos, []);
  });

  test('rebuild: the transcript comes back from agent/history; live events that came meanwhile follow, none twice', async () => {
    const { client, controller } = setUp();
    const e = mainEvents();
    const earlier = [e({ kind: 'turn.started', prompt: 'long job' }), e({ kind: 'message.delta', text: 'one ' }), e({ kind: 'message.delta', text: 'two ' })];
    const overlap = e({ kind: 'message.delta', text: 'three ' });
    const later = e({ kind: 'message.delta', text: 'four' });
    let answer: (value: unknown) => void = () => undefined;
    client.handlers.set('agent/history', () => new Promise((resolve) => (answer = resolve)));
    const rebuilt = controller.rebuild(['main']);
    // Sent while the history request was out: one it also holds, one after it.
    controller.handleEvent(overlap);
    controller.handleEvent(later);
    answer({ pane: 'main', sessionId: 's', events: [...earlier, overlap], lastSeq: 4, complete: true, runningTurnId: 1 });
    await rebuilt;
    const pane = controller.pane('main')!;
    const [turn] = pane.transcript.turnList();
    assert.equal(turn.status, 'running');
    assert.equal((turn.entries[0] as { text: string }).text, 'one two three four');
    assert.deepEqual(pane.transcript.gaps, []);
    assert.equal(controller.paneState('main'), 'running');
  });

  test('rebuild says when the server no longer has the start of the session', async () => {
    const { client, controller } = setUp();
    client.handlers.set('agent/history', async () => ({ pane: 'main', sessionId: 's', events: [], lastSeq: 40, complete: false, runningTurnId: null }));
    await controller.rebuild(['main']);
    const notices = controller.pane('main')!.transcript.items.filter((item) => item.type === 'notice');
    assert.match((notices[0] as { text: string }).text, /no longer kept/);
  });
});
