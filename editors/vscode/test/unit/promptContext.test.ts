import * as assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { adviceFor, isAdviceAction } from '../../src/advice';
import { selectionLabel, splitPrompt } from '../../src/promptContext';

describe('the prompt as the server composed it', () => {
  test('the selection becomes a chip; the words stay as typed', () => {
    const prompt =
      'What does this do?\n\nThe user selected this in src/app.py (lines 8-12):\n```\ndef f():\n    return 1\n```\n\n' +
      'Documents open in the editor: src/app.py, README.md';
    const split = splitPrompt(prompt);
    assert.equal(split.text, 'What does this do?');
    assert.deepEqual(split.selection, { path: 'src/app.py', startLine: 8, endLine: 12, text: 'def f():\n    return 1' });
    assert.deepEqual(split.documents, ['src/app.py', 'README.md']);
    assert.equal(selectionLabel(split.selection!), 'app.py:8–12');
    assert.equal(selectionLabel({ path: '/abs/x.ts', startLine: 3, endLine: 3 }), 'x.ts:3');
  });

  test('a fence inside the selection, a single line; a prompt that only quotes the words is left alone', () => {
    const inner = 'The user selected this in a.md (line 2):\n````\n```js\nx\n```\n````';
    assert.deepEqual(splitPrompt(`explain\n\n${inner}`).selection, { path: 'a.md', startLine: 2, endLine: 2, text: '```js\nx\n```' });
    const typed = 'Why does it say "The user selected this in a.md (line 2):"?';
    assert.deepEqual(splitPrompt(typed), { text: typed });
  });
});

describe('advice: what an error offers to do, by its kind', () => {
  test('kinds map to settings and help; only known settings and commands pass from the webview', () => {
    assert.deepEqual(
      adviceFor('connection').map((advice) => advice.label),
      ['Open agentls.baseUrl'],
    );
    assert.deepEqual(
      adviceFor('auth').map((advice) => advice.label),
      ['How to provide OPENAI_API_KEY to VS Code', 'Open agentls.baseUrl'],
    );
    assert.deepEqual(adviceFor('rate_limit'), []);
    assert.deepEqual(adviceFor(undefined), []);
    assert.equal(isAdviceAction({ kind: 'openSetting', setting: 'agentls.baseUrl' }), true);
    assert.equal(isAdviceAction({ kind: 'openSetting', setting: 'terminal.integrated.shell' }), false);
    assert.equal(isAdviceAction({ kind: 'command', command: 'workbench.action.terminal.new' }), false);
  });
});
