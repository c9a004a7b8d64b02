import * as assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { askArgument } from '../../src/askArgument';
import { AgentController } from '../../src/controller';
import { FakeClient } from '../support/fakeClient';
import { FakeUi } from '../support/fakeUi';

const uri = 'file:///ws/app.py';
const range = { start: { line: 4, character: 0 }, end: { line: 5, character: 30 } };
const lines = 'def mean(xs):\n    return total(xs) / len(xs)';

function setUp(): { client: FakeClient; ui: FakeUi; controller: AgentController } {
  const client = new FakeClient();
  const ui = new FakeUi();
  client.handlers.set('agent/submit', async () => ({ pane: 'main', turnId: 1, status: 'completed', finalMessage: 'ok' }));
  return { client, ui, controller: new AgentController(client, ui) };
}

describe('agentls.ask with the argument of a server code action', () => {
  test('the argument is read as the server sends it; without one (palette, keybinding) there is none', () => {
    assert.deepEqual(askArgument({ prompt: 'Fix it', uri, range, kind: 'fix' }), { prompt: 'Fix it', uri, range, kind: 'fix' });
    assert.deepEqual(askArgument({ prompt: 'Why?', uri, range: { start: 1 } }), { prompt: 'Why?', uri });
    assert.equal(askArgument(undefined), undefined);
    assert.equal(askArgument({ prompt: '  ' }), undefined);
    assert.equal(askArgument('Fix it'), undefined);
  });

  test('Fix with agentls submits the prompt at once in main, with the range as the selection', async () => {
    const { client, ui, controller } = setUp();
    const prompt = 'Fix this problem in app.py at line 5 (pyright): division by zero';
    const result = await controller.askFromServer({ prompt, uri, range, kind: 'fix' }, lines);
    assert.equal(result?.status, 'completed');
    assert.deepEqual(ui.prompts, [], 'no input box: it acts');
    const submits = client.requests.filter((request) => request.method === 'agent/submit');
    assert.equal(submits.length, 1);
    assert.deepEqual(submits[0].params, {
      pane: 'main',
      prompt,
      workDoneToken: 'test-token-1',
      context: { selection: { uri, range, text: lines } },
    });
  });

  test('Ask agentls about this opens Ask with the server’s question filled in; what the user sends goes with the range', async () => {
    const { client, ui, controller } = setUp();
    ui.selection = { uri: 'file:///ws/other.py', range, text: 'not this' };
    ui.inputs.push('Explain the selected code, briefly');
    const question = 'Explain the selected code in app.py (lines 5-6) and point out any problems.';
    await controller.askFromServer({ prompt: question, uri, range, kind: 'ask' }, lines);
    assert.equal((ui.prompts[0] as { value?: string }).value, question);
    const [submit] = client.requests.filter((request) => request.method === 'agent/submit');
    assert.equal(submit.params.prompt, 'Explain the selected code, briefly');
    assert.deepEqual(submit.params.context, { selection: { uri, range, text: lines } });
  });

  test('a document the editor cannot open goes as context.documents; Escape in Ask sends nothing', async () => {
    const { client, ui, controller } = setUp();
    await controller.askFromServer({ prompt: 'Fix it', uri, range }, undefined);
    assert.deepEqual(client.requests.at(-1)?.params.context, { documents: [uri] });
    await controller.askFromServer({ prompt: 'Why?', uri, range, kind: 'ask' }, lines);
    assert.equal(ui.prompts.length, 1);
    assert.equal(client.requests.filter((request) => request.method === 'agent/submit').length, 1);
  });
});
