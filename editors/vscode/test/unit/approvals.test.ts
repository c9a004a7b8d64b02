import * as assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  ALLOW_ONCE,
  ALLOW_SESSION,
  type ApprovalUi,
  DENY,
  SHOW_DIFF,
  applyHunks,
  askApproval,
  describe as describeQuestion,
  diffFiles,
  parseDiff,
  reverseFile,
} from '../../src/approvals';
import { ACCEPT, REJECT } from '../../src/review';
import type { ApprovalParams } from '../../src/protocol';

/** Scripted answers; what was shown is recorded. */
class ScriptedUi implements ApprovalUi {
  readonly asked: Array<{ message: string; detail: string; buttons: string[]; modal: boolean }> = [];
  readonly diffs: ApprovalParams[] = [];
  readonly inputs: string[] = [];
  constructor(
    private readonly choices: Array<string | undefined>,
    private readonly reason?: string,
  ) {}

  async choose(message: string, detail: string, buttons: string[], modal: boolean): Promise<string | undefined> {
    this.asked.push({ message, detail, buttons, modal });
    return this.choices.shift();
  }

  async inputBox(options: { title: string; prompt: string }): Promise<string | undefined> {
    this.inputs.push(options.prompt);
    return this.reason;
  }

  async showDiff(params: ApprovalParams): Promise<void> {
    this.diffs.push(params);
  }
}

const COMMAND: ApprovalParams = {
  pane: 'main',
  turnId: 3,
  callId: 'c1',
  tool: 'exec_command',
  title: 'Running `npm install`',
  command: 'npm install',
  justification: 'it needs the network',
};

const DIFF =
  '--- a/src/app.py\n+++ b/src/app.py\n@@ -1,3 +1,3 @@\n def f():\n-    return 1\n+    return 2\n \n' +
  '--- /dev/null\n+++ b/notes.txt\n@@ -0,0 +1 @@\n+new\n';
const PATCH: ApprovalParams = { pane: 'main', turnId: 3, callId: 'c2', tool: 'apply_patch', title: 'Editing src/app.py', diff: DIFF };

describe('approvals', () => {
  test('a command: the command and why, three answers, in a modal dialog', async () => {
    const ui = new ScriptedUi([ALLOW_SESSION]);
    assert.deepEqual(await askApproval(COMMAND, ui), { decision: 'allowSession' });
    const [question] = ui.asked;
    assert.equal(question.message, 'AgentLS (main) wants to: Running `npm install`');
    assert.equal(question.detail, '$ npm install\n\nWhy: it needs the network');
    assert.deepEqual(question.buttons, [ALLOW_ONCE, ALLOW_SESSION, DENY]);
    assert.equal(question.modal, true);
    assert.deepEqual(await askApproval(COMMAND, new ScriptedUi([ALLOW_ONCE])), { decision: 'allow' });
    const other = { ...COMMAND, tool: 'mcp__db__drop', command: 'mcp__db__drop {"table":"users"}', justification: undefined };
    assert.equal(describeQuestion(other).detail, 'mcp__db__drop {"table":"users"}', 'no shell prompt for another tool');
  });

  test('deny asks for a reason the model reads; dismissing denies', async () => {
    const ui = new ScriptedUi([DENY], '  use the offline cache  ');
    assert.deepEqual(await askApproval(COMMAND, ui), { decision: 'deny', reason: 'use the offline cache' });
    assert.equal(ui.inputs.length, 1);
    assert.deepEqual(await askApproval(COMMAND, new ScriptedUi([DENY], '')), { decision: 'deny' });
    const dismissed = new ScriptedUi([undefined]);
    assert.deepEqual(await askApproval(COMMAND, dismissed), { decision: 'deny' });
    assert.equal(dismissed.inputs.length, 0, 'no reason asked when the question was dismissed');
  });

  test('a patch: its files; Show Diff opens it and asks again beside it', async () => {
    const ui = new ScriptedUi([SHOW_DIFF, ALLOW_ONCE]);
    assert.deepEqual(await askApproval(PATCH, ui), { decision: 'allow' });
    assert.deepEqual(ui.diffs, [PATCH]);
    assert.deepEqual(ui.asked[0].buttons, [ALLOW_ONCE, ALLOW_SESSION, DENY, SHOW_DIFF]);
    assert.equal(ui.asked[0].detail, 'Changes src/app.py, notes.txt (+2 −1).');
    assert.equal(ui.asked[1].modal, false, 'the second question leaves the diff readable');
    assert.deepEqual(ui.asked[1].buttons, [ALLOW_ONCE, ALLOW_SESSION, DENY]);
    assert.equal(describeQuestion(PATCH).message, 'AgentLS (main) wants to: Editing src/app.py');
  });

  test('a unified diff parses into files and applies to what is on disk', () => {
    assert.deepEqual(diffFiles(DIFF), ['src/app.py', 'notes.txt']);
    const [app, notes] = parseDiff(DIFF);
    assert.equal(app.path, 'src/app.py');
    assert.equal(notes.created, true);
    assert.equal(applyHunks('def f():\n    return 1\n\nrest\n', app), 'def f():\n    return 2\n\nrest\n');
    assert.equal(applyHunks('', notes), 'new\n');
    assert.equal(applyHunks('changed meanwhile\n', app), undefined, 'a file that changed does not fit');
    const deleted = parseDiff('--- a/old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-gone\n')[0];
    assert.equal(deleted.deleted, true);
    assert.equal(applyHunks('gone\n', deleted), '');
    const noNewline = parseDiff('--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n\\ No newline at end of file\n')[0];
    assert.equal(applyHunks('a\n', noNewline), 'b');
  });

  test('an applied patch reverses: the file as it is now gives it as it was', () => {
    const [app, notes] = parseDiff(DIFF);
    assert.equal(applyHunks('def f():\n    return 2\n\nrest\n', reverseFile(app)), 'def f():\n    return 1\n\nrest\n');
    assert.equal(applyHunks('new\n', reverseFile(notes)), '', 'a created file was empty before');
  });

  test('review mode: the diff first, then Accept or Reject (with a reason) beside it', async () => {
    const review = { ...PATCH, review: true };
    const accepting = new ScriptedUi([ACCEPT]);
    assert.deepEqual(await askApproval(review, accepting), { decision: 'allow' });
    assert.deepEqual(accepting.diffs, [review], 'the diff editor opened before the question');
    assert.deepEqual(accepting.asked[0].buttons, [ACCEPT, REJECT]);
    assert.equal(accepting.asked[0].modal, false, 'the diff editor stays readable');
    const rejecting = new ScriptedUi([REJECT], ' keep the old name ');
    assert.deepEqual(await askApproval(review, rejecting), { decision: 'deny', reason: 'keep the old name' });
    assert.deepEqual(await askApproval(review, new ScriptedUi([undefined])), { decision: 'deny' }, 'dismissed: rejected');
  });
});
