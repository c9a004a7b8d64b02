/**
 * The extension's command logic (AgentController) against the real server
 * and the fake model: the same code the VS Code commands run, with a fake
 * UI standing in for input boxes and the progress notification.
 */

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { describe, test } from 'node:test';
import { ALLOW_ONCE, ALLOW_SESSION, type ApprovalUi, DENY, askApproval } from '../../src/approvals';
import { AgentController } from '../../src/controller';
import type { TurnResult } from '../../src/protocol';
import type { ToolCallEntry } from '../../src/transcript';
import { stoppedAfterEach } from '../support/cleanup';
import { processesWith, tempDir, uniqueDuration, waitFor } from '../support/env';
import { FakeModel, type ScriptedReply } from '../support/fakeModel';
import { FakeUi } from '../support/fakeUi';
import { ServerProcess } from '../support/server';

const running = stoppedAfterEach();

async function setUp(
  script: ScriptedReply[],
  options: Parameters<typeof ServerProcess.start>[0] = {},
  approve?: Parameters<typeof ServerProcess.start>[1],
): Promise<{
  fake: FakeModel;
  server: ServerProcess;
  ui: FakeUi;
  controller: AgentController;
}> {
  const fake = await FakeModel.start(script);
  running.push(fake);
  const server = await ServerProcess.start({ baseUrl: fake.baseUrl, ...options }, approve);
  running.push(server);
  const ui = new FakeUi();
  const controller = new AgentController(server, ui);
  server.onEvent((event) => controller.handleEvent(event));
  controller.serverStarted({ effort: 'medium', fastMode: false });
  return { fake, server, ui, controller };
}


describe('AgentController against the real server', () => {
  test('Ask sends the selection, shows progress, streams into the transcript; Stop cancels the turn through its request', async () => {
    const duration = uniqueDuration();
    const { fake, ui, controller } = await setUp([
      { text: 'It defines `f`, which does nothing.', chunks: 4 },
      { tool_call: { name: 'exec_command', arguments: { cmd: `sleep ${duration} & wait` } } },
    ]);
    ui.inputs.push('Explain this');
    ui.selection = {
      uri: 'file:///tmp/app.py',
      range: { start: { line: 0, character: 0 }, end: { line: 0, character: 13 } },
      text: 'def f(): pass',
    };
    const result = await controller.ask();
    assert.equal(result?.status, 'completed');
    assert.equal(ui.progress[0].title, 'AgentLS: Explain this');
    assert.ok(ui.progress[0].messages.length > 0, 'the notification shows what the agent does');
    assert.ok(ui.progress[0].done);
    const [request] = await fake.waitForRequests(1);
    assert.ok(JSON.stringify(request.input).includes('def f(): pass'), 'the selection went along');

    const main = controller.pane('main')!;
    const [first] = main.transcript.turnList();
    assert.equal(first.status, 'completed');
    assert.equal(first.entries.at(-1)?.kind, 'message');
    assert.equal(controller.paneState('main'), 'idle');

    ui.selection = undefined;
    const sleeping = controller.submit('main', 'Sleep for a while');
    await waitFor('the pane to run', () => controller.paneState('main') === 'running');
    // (In the sandbox the command cannot print its real pid: found by its duration.)
    await waitFor('the sleep', () => processesWith(`sleep\0${duration}`).length > 0);
    // Stop in the transcript: the request's token is cancelled, the client sends $/cancelRequest.
    await controller.stop({ pane: 'main' });
    const cancelled = (await sleeping) as TurnResult | undefined;
    if (cancelled !== undefined) {
      assert.equal(cancelled.status, 'cancelled');
    }
    const second = await waitFor('the cancelled turn', () =>
      main.transcript.turnList().find((turn) => turn.status === 'cancelled'),
    );
    assert.equal(second.receipt?.abortedToolCalls[0]?.tool, 'exec_command');
    assert.equal(second.receipt?.survivingProcesses, 0);
    assert.deepEqual(processesWith(duration), [], 'the sleep child is gone');
    assert.equal(controller.paneState('main'), 'cancelled');
    assert.deepEqual(main.transcript.gaps, []);
    assert.deepEqual(ui.errors, []);
  });

  test('Set Effort, Fast Mode, Fork, Close Pane, Steer (promoted), New Session, Cancel with nothing', async () => {
    const { fake, ui, controller } = await setUp([
      { text: 'I will remember 42.' },
      { text: 'The number was 42.' },
      { text: 'A new turn from a steer.' },
    ]);
    ui.picks.push('high');
    assert.equal(await controller.setEffort(), 'high');
    assert.equal(await controller.toggleFastMode(), true);
    assert.equal(controller.pane('main')?.effort, 'high');

    await controller.submit('main', 'Remember 42');
    const fork = await controller.fork();
    assert.deepEqual(fork, { pane: 'fork-1', items: 2 });
    assert.equal(controller.forkPane(), 'fork-1');
    assert.equal(controller.activePane, 'fork-1');
    assert.equal(controller.pane('fork-1')?.effort, 'high', 'a fork keeps the settings');
    await waitFor('the fork pane.opened', () => controller.pane('fork-1')?.log.some((input) => input.kind === 'pane.opened'));

    assert.equal(await controller.fork(), undefined);
    assert.match(ui.infos.at(-1) ?? '', /already open/);

    const onFork = await controller.submit('fork-1', 'What was the number?');
    assert.equal(onFork?.pane, 'fork-1');
    const requests = await fake.waitForRequests(2);
    assert.ok(JSON.stringify(requests[1].input).includes('Remember 42'), 'the fork has the conversation');
    assert.equal(requests[1].reasoning?.effort, 'high');
    assert.equal(requests[1].service_tier, 'priority');

    assert.deepEqual(await controller.closePane(), { cancelled: 0 });
    assert.equal(controller.forkPane(), undefined);
    assert.equal(controller.activePane, 'main');

    const steer = await controller.steer({ prompt: 'Now something else' });
    assert.equal(steer?.outcome, 'promoted');
    await waitFor('the promoted turn to finish', () =>
      controller.pane('main')?.transcript.turn(steer!.turnId)?.status === 'completed' ? true : undefined,
    );

    const session = await controller.newSession();
    assert.equal(session?.pane, 'main');
    await waitFor('the new-session notice', () =>
      controller.pane('main')?.transcript.items.some((item) => item.type === 'notice' && /New session/.test(item.text)),
    );

    assert.deepEqual(await controller.cancel(), { cancelled: 0, receipts: [] });
    assert.match(ui.infos.at(-1) ?? '', /Nothing to cancel/);
    assert.deepEqual(ui.errors, []);
    assert.deepEqual(controller.pane('main')?.transcript.gaps, []);
  });

  test('Close Pane on main while a fork is open: main shows the fork conversation, seq stays contiguous', async () => {
    const { controller } = await setUp([{ text: 'main answer' }, { text: 'fork answer' }, { text: 'next' }]);
    await controller.submit('main', 'on main');
    await controller.fork();
    await controller.submit('fork-1', 'on the fork');
    assert.deepEqual(await controller.closePane({ pane: 'main' }), { cancelled: 0 });
    await waitFor('the promotion', () => (controller.pane('fork-1') === undefined ? true : undefined));
    const main = controller.pane('main')!;
    assert.deepEqual(
      main.transcript.turnList().map((turn) => turn.prompt),
      ['on the fork'],
      'main now holds what the fork showed',
    );
    const notices = main.transcript.items.flatMap((item) => (item.type === 'notice' ? [item.text] : []));
    assert.ok(notices.some((text) => text.startsWith('Forked: 2 conversation items')), notices.join(' | '));
    assert.ok(notices.some((text) => text.startsWith('fork-1 is now main')), notices.join(' | '));
    await controller.submit('main', 'after promotion');
    assert.deepEqual(
      main.transcript.turnList().map((turn) => [turn.prompt, turn.status]),
      [
        ['on the fork', 'completed'],
        ['after promotion', 'completed'],
      ],
    );
    assert.deepEqual(main.transcript.gaps, []);
  });

  test('a running command has a progress of its own: its Cancel stops just that command, the turn goes on', async () => {
    const duration = uniqueDuration();
    const { fake, ui, controller } = await setUp([
      {
        tool_call: {
          name: 'exec_command',
          arguments: { cmd: `echo started; sleep ${duration} & wait` },
          call_id: 'call_long',
        },
      },
      'Went on without it.',
    ]);
    const turn = controller.submit('main', 'Run the long one');
    await waitFor('the sleep', () => processesWith(`sleep\0${duration}`).length > 0);
    const progress = await waitFor('the command progress', () =>
      ui.progress.find((record) => record.title.startsWith('AgentLS: Running `echo started')),
    );
    assert.equal(progress.window, false, 'a command: a notification only while the transcript is hidden');
    progress.cancel();
    const result = (await turn) as TurnResult;
    assert.equal(result.status, 'completed');
    assert.equal(result.finalMessage, 'Went on without it.');
    assert.deepEqual(processesWith(duration), []);
    assert.ok(progress.done, 'the command progress ended with the command');
    const outputs = (fake.requests[1].input ?? []).filter((item) => item.type === 'function_call_output');
    assert.match(String(outputs[0].output), /^Cancelled by the user/);
    const entry = controller.pane('main')!.transcript.turnList()[0].entries.find((e) => e.kind === 'tool') as ToolCallEntry;
    assert.equal(entry.status, 'cancelled');
  });

  test('approvals: allow once, allow for the session (that command only), deny with a reason the model reads', async () => {
    const answers = [ALLOW_ONCE, ALLOW_SESSION, DENY];
    const shown: string[] = [];
    const approvalUi: ApprovalUi = {
      choose: async (_message, detail) => {
        shown.push(detail);
        return answers.shift();
      },
      inputBox: async () => 'not in this repository',
      showDiff: async () => undefined,
    };
    const { fake, controller } = await setUp(
      [
        { tool_call: { name: 'exec_command', arguments: { cmd: 'echo once' } } },
        { tool_call: { name: 'exec_command', arguments: { cmd: 'echo session' } } },
        { tool_call: { name: 'exec_command', arguments: { cmd: 'echo session' } } },
        { tool_call: { name: 'exec_command', arguments: { cmd: 'touch denied.txt' } } },
        'Three questions.',
      ],
      { approval: 'always' },
      (params) => askApproval(params, approvalUi),
    );
    const result = (await controller.submit('main', 'Run them')) as TurnResult;
    assert.equal(result.status, 'completed');
    assert.deepEqual(shown, ['$ echo once', '$ echo session', '$ touch denied.txt']);
    const outputs = (fake.requests.at(-1)?.input ?? [])
      .filter((item) => item.type === 'function_call_output')
      .map((item) => String(item.output));
    assert.match(outputs[0], /once/);
    assert.match(outputs[2], /session/);
    assert.match(outputs[3], /denied.*not in this repository/);
  });
});

describe('the context window and the instructions, against the real server', () => {
  test('the meter follows the turn; Compact Conversation is an entry of its own; the instructions line', async () => {
    const { fake, ui, controller } = await setUp([
      { text: 'First answer.' },
      { text: 'Second answer.' },
      { text: 'Summary: two answers so far.' },
    ]);
    await controller.submit('main', 'first');
    await controller.submit('main', 'second');
    const main = controller.pane('main')!;
    const meter = main.transcript.context;
    assert.ok(meter !== undefined && meter.window === 272_000 && meter.tokens > 0, JSON.stringify(meter));

    ui.inputs.push('the answers');
    const result = await controller.compact();
    assert.equal(result?.mode, 'summary');
    assert.ok(result!.afterTokens < result!.beforeTokens);
    const requests = await fake.waitForRequests(3);
    assert.ok(JSON.stringify(requests[2].input).includes('Focus the summary on: the answers'));
    const item = await waitFor('the compaction item', () =>
      main.transcript.items.find((candidate) => candidate.type === 'compaction' && candidate.state === 'done'),
    );
    assert.equal(item.type === 'compaction' && item.summary, 'Summary: two answers so far.');
    assert.deepEqual(main.transcript.context, { tokens: result!.afterTokens, window: 272_000 });

    assert.equal(await controller.instructionsSummary(), 'instructions: no AGENTS.md files');
    assert.deepEqual(ui.errors, []);
  });

  test('Resume Session… on a new server: the old conversation is in the transcript and in the next model request', async () => {
    const fake = await FakeModel.start([{ text: 'The parser is in src/parse.py.' }, { text: 'Fixed it.' }]);
    running.push(fake);
    const state = tempDir('state');
    const workspace = tempDir('workspace');
    const first = await ServerProcess.start({ baseUrl: fake.baseUrl, workspace }, undefined, { AGENTLS_STATE_DIR: state });
    running.push(first);
    const before = new AgentController(first, new FakeUi());
    first.onEvent((event) => before.handleEvent(event));
    await before.submit('main', 'Where is the parser?');
    await first.stop();

    const second = await ServerProcess.start({ baseUrl: fake.baseUrl, workspace }, undefined, { AGENTLS_STATE_DIR: state });
    running.push(second);
    const ui = new FakeUi();
    const controller = new AgentController(second, ui);
    second.onEvent((event) => controller.handleEvent(event));
    ui.answer = 'Resume';
    const resumed = await controller.offerResume();
    assert.equal(resumed?.title, 'Where is the parser?');
    assert.match(ui.infos[0], /continue your last session “Where is the parser\?” \(just now · 1 turn\)/);
    const opened = await waitFor('the resumed conversation in the transcript', () =>
      controller.pane('main')?.transcript.items.find((item) => item.type === 'earlier'),
    );
    assert.deepEqual(
      opened.type === 'earlier' && opened.entries.map((entry) => [entry.role, entry.text]),
      [
        ['user', 'Where is the parser?'],
        ['assistant', 'The parser is in src/parse.py.'],
      ],
    );
    await controller.submit('main', 'Fix it');
    const request = fake.requests.at(-1)!;
    const texts = (request.input as Array<{ content?: Array<{ text: string }> }>).map((item) =>
      (item.content ?? []).map((part) => part.text).join(''),
    );
    assert.deepEqual(texts, ['Where is the parser?', 'The parser is in src/parse.py.', 'Fix it']);
    // The one stored session is open in main: nothing to pick.
    assert.equal(await controller.resumeSession(), undefined);
    assert.deepEqual(ui.pickItems, []);
    assert.match(ui.infos.at(-1) ?? '', /no stored session of this workspace to choose from/);
    fs.rmSync(state, { recursive: true, force: true });
  });
});
