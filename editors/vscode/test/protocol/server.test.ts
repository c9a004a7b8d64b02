/**
 * Protocol tests: what the extension relies on, checked against the real
 * Python server and the fake model, speaking with vscode-jsonrpc the way
 * vscode-languageclient does (a client-supplied workDoneToken, a
 * CancellationToken on sendRequest).
 */

import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { after, afterEach, describe, test } from 'node:test';
import { CancellationTokenSource } from 'vscode-jsonrpc/node';
import type { AgentEvent, SteerResult, TurnResult, WorkDoneProgress } from '../../src/protocol';
import { Transcript } from '../../src/transcript';
import { processesWith, uniqueDuration, waitFor } from '../support/env';
import { FakeModel } from '../support/fakeModel';
import { ServerProcess } from '../support/server';


let running: Array<{ stop(): Promise<unknown> }> = [];

async function start(script: Parameters<typeof FakeModel.start>[0]): Promise<{ fake: FakeModel; server: ServerProcess }> {
  const fake = await FakeModel.start(script);
  running.push(fake);
  const server = await ServerProcess.start({ baseUrl: fake.baseUrl });
  running.push(server);
  return { fake, server };
}

afterEach(async () => {
  const stopping = running.reverse();
  running = [];
  for (const process of stopping) {
    await process.stop();
  }
});

after(async () => {
  for (const process of running) {
    await process.stop();
  }
});

function assertContiguous(events: AgentEvent[], pane: string): void {
  const seqs = events.filter((event) => event.pane === pane).map((event) => event.seq);
  assert.deepEqual(seqs, Array.from({ length: seqs.length }, (_, i) => i + 1), `seq of ${pane} has no gaps`);
}

describe('agentls server, as the extension uses it', () => {
  test('initialize advertises protocol 2; submit streams events and reports progress on the client token', async () => {
    const answer = 'Hello **world**, this answer streams in pieces.';
    const { server } = await start([{ text: answer, chunks: 6, delay: 0.01 }]);
    const capabilities = server.capabilities();
    assert.equal(capabilities?.protocolVersion, 2);
    // The configured model's efforts and window (the default model, gpt-5.1-codex).
    assert.deepEqual(capabilities?.efforts, ['low', 'medium', 'high']);
    assert.equal(capabilities?.contextWindow, 272_000);
    assert.ok(capabilities?.methods.includes('agent/submit'));
    const progress: WorkDoneProgress[] = [];
    const subscription = server.onProgress('tok-1', (value) => progress.push(value));
    const result = await server.request<TurnResult>('agent/submit', { prompt: 'Say hello', workDoneToken: 'tok-1' });
    subscription.dispose();

    assert.equal(result.status, 'completed');
    assert.equal(result.finalMessage, answer);
    assert.equal(result.pane, 'main');

    assert.equal(progress[0]?.kind, 'begin');
    assert.equal((progress[0] as { cancellable?: boolean }).cancellable, true);
    assert.ok(progress.some((value) => value.kind === 'report' && value.message === 'Writing answer'));
    await waitFor('the progress end', () => progress.at(-1)?.kind === 'end');
    assert.equal(progress.filter((value) => value.kind === 'end').length, 1);

    const finished = await server.event('turn.finished');
    assert.equal(finished.status, 'completed');
    const kinds = server.events.map((event) => event.kind);
    assert.equal(kinds[0], 'turn.started');
    assert.ok(kinds.includes('message.delta'));
    assertContiguous(server.events, 'main');

    // The transcript model folds the same stream into one completed turn.
    const transcript = new Transcript();
    for (const event of server.events) {
      assert.equal(transcript.apply(event), 'applied');
    }
    const [turn] = transcript.turnList();
    assert.equal(turn.status, 'completed');
    assert.equal(turn.prompt, 'Say hello');
    assert.deepEqual(
      turn.entries.map((entry) => entry.kind),
      ['message'],
    );
    assert.equal((turn.entries[0] as { text: string }).text, answer);
    assert.equal(transcript.state(), 'idle');
  });

  test('the request token cancels the turn: $/cancelRequest kills the sleep child', async () => {
    const duration = uniqueDuration();
    const { server } = await start([
      { tool_call: { name: 'exec_command', arguments: { cmd: `sleep ${duration} & wait` }, call_id: 'call_sleep' } },
    ]);
    const source = new CancellationTokenSource();
    const pending = server.request<TurnResult>('agent/submit', { prompt: 'Sleep', workDoneToken: 'tok-c' }, source.token);
    // (In the sandbox the command cannot print its real pid: found by its duration.)
    await waitFor('the sleep to run', () => processesWith(`sleep\0${duration}`).length > 0);

    source.cancel(); // what the progress notification's Cancel does through sendRequest
    const result = await pending;
    assert.equal(result.status, 'cancelled', 'a normal TurnResult, not -32800');
    assert.deepEqual(result.receipt?.abortedToolCalls, [{ callId: 'call_sleep', tool: 'exec_command' }]);
    assert.ok((result.receipt?.killedProcesses ?? 0) >= 1);
    assert.equal(result.receipt?.survivingProcesses, 0);
    assert.deepEqual(processesWith(duration), [], 'the answer comes after the child is dead');

    const finished = await server.event('turn.finished');
    assert.equal(finished.status, 'cancelled');
    assert.deepEqual(finished.receipt, result.receipt);
    const tool = await server.event('tool.finished', (event) => event.callId === 'call_sleep');
    assert.equal(tool.status, 'cancelled');
  });

  test('a steer reaches the running turn at its next model request', async () => {
    const { fake, server } = await start([
      { tool_call: { name: 'exec_command', arguments: { cmd: 'read line < gate.fifo; echo got $line' } } },
      { text: 'Steered answer.' },
    ]);
    fs.rmSync(server.file('gate.fifo'), { force: true });
    execFileSync('mkfifo', [server.file('gate.fifo')]);
    const pending = server.request<TurnResult>('agent/submit', { prompt: 'Wait for the gate' });
    const started = await server.event('tool.started');

    const steer = await server.request<SteerResult>('agent/steer', { prompt: 'Use tabs, not spaces' });
    assert.deepEqual(steer, { outcome: 'admitted', turnId: started.turnId });
    await server.event('steer.admitted', (event) => event.text === 'Use tabs, not spaces');

    fs.writeFileSync(server.file('gate.fifo'), 'go\n'); // the tool finishes: the next model request carries the steer
    const result = await pending;
    assert.equal(result.status, 'completed');
    assert.equal(result.finalMessage, 'Steered answer.');
    await server.event('steer.applied', (event) => event.text === 'Use tabs, not spaces');
    const requests = await fake.waitForRequests(2);
    assert.ok(JSON.stringify(requests[1].input).includes('Use tabs, not spaces'), 'the model saw the steer');
    assert.ok(server.toolOutput().includes('got go'));

    const transcript = new Transcript();
    server.events.forEach((event) => transcript.apply(event));
    const steerEntry = transcript.turnList()[0].entries.find((entry) => entry.kind === 'steer');
    assert.deepEqual(
      steerEntry && { text: (steerEntry as { text: string }).text, applied: (steerEntry as { applied: boolean }).applied },
      { text: 'Use tabs, not spaces', applied: true },
    );
  });

  test('settings sent with workspace/didChangeConfiguration reach the next model request', async () => {
    const { fake, server } = await start([{ text: 'one' }, { text: 'two' }]);
    await server.request('agent/submit', { prompt: 'first' });
    await server.notify('workspace/didChangeConfiguration', {
      settings: { agentls: { model: 'other-model', effort: 'high', fastMode: true } },
    });
    await server.request('agent/submit', { prompt: 'second' });
    const [first, second] = await fake.waitForRequests(2);
    assert.notEqual(first.model, 'other-model');
    assert.equal(second.model, 'other-model');
    assert.equal(second.reasoning?.effort, 'high');
    assert.equal(second.service_tier, 'priority');
  });
});
