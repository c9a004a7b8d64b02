/**
 * The server's life in a stub VS Code: the command checked before a client
 * exists, one readable notification per failure, "not running" in the status
 * bar, and Restart Server recovering from every state (failed, starting,
 * running, given up after crashes) with a fresh LanguageClient.
 */

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, afterEach, beforeEach, describe, test } from 'node:test';
import * as vscode from 'vscode';
import { activate, deactivate } from '../../src/extension';
import { AGENTLS, PYTHON, tempDir, waitFor } from '../support/env';
import { LanguageClient, State } from '../support/languageclient';
import { changeSettings, resetStub, stub } from '../support/vscode';

const SETTINGS_ACTIONS = ['Open Settings', 'Restart Server', 'Show Server Log'];
/** A Node or Python stack trace line. */
const STACK = /\n\s+at |node:internal|Traceback \(most recent call last\)|\.js:\d+:\d+/;

let context: { subscriptions: Array<{ dispose(): unknown }>; extensionUri: vscode.Uri } | undefined;

function activating(): Promise<void> {
  context = { subscriptions: [], extensionUri: vscode.Uri.file('/ext') };
  return activate(context as unknown as vscode.ExtensionContext);
}

function statusBar(): vscode.StatusBarItem {
  return stub.statusBarItems[0] as unknown as vscode.StatusBarItem;
}

function errors(): Array<{ message: string; actions: string[] }> {
  return stub.messages.filter((message) => message.kind === 'error');
}

function assertNotRunning(): void {
  assert.equal(statusBar().text, '$(warning) AgentLS: not running');
  assert.equal((statusBar().backgroundColor as { id?: string } | undefined)?.id, 'statusBarItem.warningBackground');
  assert.equal(statusBar().command, 'agentls.showServerStatus');
}

function assertOneReadableError(pattern: RegExp, actions = SETTINGS_ACTIONS): void {
  assert.equal(errors().length, 1, `one error notification: ${JSON.stringify(stub.messages)}`);
  const [error] = errors();
  assert.match(error.message, pattern);
  assert.doesNotMatch(error.message, STACK);
  assert.deepEqual(error.actions, actions);
}

function lastClient(): LanguageClient {
  const client = LanguageClient.instances.at(-1);
  assert.ok(client !== undefined, 'a language client');
  return client;
}

/** Files these tests make (removed at the end). */
const scratch = tempDir('server-test');
after(() => fs.rmSync(scratch, { recursive: true, force: true }));

/** A file that is executable and always fails: a Python without agentls, as far as the check can tell. */
function failingExecutable(): string {
  const file = path.join(scratch, 'python');
  fs.writeFileSync(file, '#!/bin/sh\nexit 1\n', { mode: 0o755 });
  return file;
}

describe('the server: checked before it starts, restartable from every state', () => {
  const savedPath = process.env.PATH;

  beforeEach(() => {
    resetStub();
    LanguageClient.instances = [];
    LanguageClient.starts = [];
  });

  afterEach(async () => {
    process.env.PATH = savedPath;
    await deactivate();
    for (const subscription of context?.subscriptions ?? []) {
      subscription.dispose();
    }
  });

  test('a missing agentls.serverCommand: no client, one readable error, "not running"; fix it, Restart Server, Ask works', async () => {
    const missing = path.join(scratch, 'missing', 'bin', 'agentls');
    stub.settings['agentls.serverCommand'] = [missing, 'serve'];
    await activating();
    assert.equal(LanguageClient.instances.length, 0, 'no client is started for a command that does not exist');
    assertOneReadableError(/^AgentLS cannot start the server: agentls\.serverCommand: /);
    assert.equal(
      errors()[0].message,
      `AgentLS cannot start the server: agentls.serverCommand: ${missing} does not exist or is not executable. ` +
        'Fix the setting; then run AgentLS: Restart Server.',
    );
    assertNotRunning();
    assert.match(String(statusBar().tooltip), /agentls\.serverCommand/);

    // Asking now says what to do, and nothing is sent anywhere.
    stub.inputs.push('Hello?');
    await vscode.commands.executeCommand('agentls.ask');
    assert.equal(errors().at(-1)?.message, 'The request failed: The agent server is not running: run AgentLS: Restart Server.');

    changeSettings({ 'agentls.serverCommand': [AGENTLS, 'serve'] });
    await waitFor('the offer to start', () => stub.messages.find((message) => message.kind === 'info'));
    const offer = stub.messages.find((message) => message.kind === 'info')!;
    assert.equal(offer.message, 'AgentLS: the server command changed. Start the server with it now?');
    assert.deepEqual(offer.actions, ['Restart Server']);

    assert.equal(await vscode.commands.executeCommand('agentls.restartServer'), true);
    await waitFor('a running client', () => LanguageClient.instances.at(-1)?.state === State.Running);
    assert.equal(LanguageClient.instances.length, 1);
    assert.equal(statusBar().text, '$(hubot) AgentLS main: idle · medium');
    assert.equal(statusBar().command, 'agentls.showTranscript');

    const client = lastClient();
    client.respond = async (_method, params) => ({ pane: 'main', turnId: 1, status: 'completed', finalMessage: `echo ${params.prompt}` });
    stub.inputs.push('Hello again');
    await vscode.commands.executeCommand('agentls.ask');
    // A fresh server: the extension asked for the last session (to offer it), then the Ask.
    assert.deepEqual(client.requests.map((request) => request.method), ['agent/sessions', 'agent/submit']);
  });

  test('agentls not on PATH: the error names everything that was tried and how to install', async () => {
    process.env.PATH = fs.mkdtempSync(path.join(scratch, 'empty-path-'));
    await activating();
    assert.equal(LanguageClient.instances.length, 0);
    assertOneReadableError(/^AgentLS cannot start the server: agentls is not on PATH/);
    assert.equal(
      errors()[0].message,
      'AgentLS cannot start the server: agentls is not on PATH (agentls.serverCommand and agentls.pythonPath are ' +
        'not set; no Python extension interpreter). Install agentls: in a clone of its repository run ' +
        '"pipx install ." (or "pip install ."); or set agentls.serverCommand or agentls.pythonPath; ' +
        'then run AgentLS: Restart Server.',
    );
    assertNotRunning();
  });

  test('agentls.pythonPath without agentls is caught before the start; a Python with it starts', async () => {
    const python = failingExecutable();
    stub.settings['agentls.pythonPath'] = python;
    await activating();
    assert.equal(LanguageClient.instances.length, 0);
    assertOneReadableError(new RegExp(`agentls\\.pythonPath: ${python} has no agentls installed`));
    stub.settings['agentls.pythonPath'] = PYTHON;
    await vscode.commands.executeCommand('agentls.restartServer');
    assert.equal(lastClient().state, State.Running);
    assert.equal(errors().length, 1);
  });

  test('a start that fails is reported once, without a stack; Restart Server makes a fresh client', async () => {
    stub.settings['agentls.serverCommand'] = [AGENTLS, 'serve'];
    const failure = new Error('Pending response rejected since connection got disposed');
    failure.stack = `${failure.message}\n    at Object.dispose (/ext/dist/extension.js:2:1234)`;
    LanguageClient.starts.push(() => Promise.reject(failure));
    await activating();
    const failed = lastClient();
    assert.equal(failed.state, State.StartFailed);
    assert.ok(failed.disposed, 'the failed client is disposed, never reused');
    assert.ok(failed.logged.length > 0 && failed.logged.every((entry) => entry.show === false), 'the library shows nothing itself');
    assertOneReadableError(/^AgentLS: the server did not start: Pending response rejected since connection got disposed$/);
    assertNotRunning();

    await vscode.commands.executeCommand('agentls.restartServer');
    assert.equal(LanguageClient.instances.length, 2);
    assert.notEqual(lastClient(), failed);
    assert.equal(lastClient().state, State.Running);
    assert.equal(statusBar().text, '$(hubot) AgentLS main: idle · medium');
    assert.equal(errors().length, 1, 'the old failure is not shown again');
  });

  test('Restart Server while the server is starting: the starting client is dropped, its late failure says nothing', async () => {
    stub.settings['agentls.serverCommand'] = [AGENTLS, 'serve'];
    let failFirst: ((error: Error) => void) | undefined;
    LanguageClient.starts.push(
      () =>
        new Promise<void>((_resolve, reject) => {
          failFirst = reject;
        }),
    );
    const activated = activating();
    await waitFor('the first client to be starting', () => failFirst !== undefined);
    const first = lastClient();
    assert.equal(first.state, State.Starting);
    assert.equal(statusBar().text, '$(sync~spin) AgentLS: starting');
    await vscode.commands.executeCommand('agentls.restartServer');
    assert.ok(first.disposed);
    assert.equal(lastClient().state, State.Running);
    failFirst!(new Error('the connection closed'));
    await activated;
    assert.deepEqual(errors(), []);
    assert.equal(statusBar().text, '$(hubot) AgentLS main: idle · medium');
  });

  test('Restart Server while running stops the old server and starts a fresh client', async () => {
    stub.settings['agentls.serverCommand'] = [AGENTLS, 'serve'];
    await activating();
    const first = lastClient();
    assert.equal(first.state, State.Running);
    await vscode.commands.executeCommand('agentls.restartServer');
    assert.equal(first.state, State.Stopped);
    assert.ok(first.disposed);
    assert.equal(LanguageClient.instances.length, 2);
    assert.equal(lastClient().state, State.Running);
    assert.deepEqual(errors(), []);
  });

  test('a crashing server is restarted with a fresh client, then the user is told it gave up; Restart Server recovers', async () => {
    stub.settings['agentls.serverCommand'] = [AGENTLS, 'serve'];
    await activating();
    for (let crash = 1; crash <= 4; crash++) {
      lastClient().crash();
      await waitFor(`restart ${crash}`, () => LanguageClient.instances.length === crash + 1 && lastClient().state === State.Running);
    }
    assert.ok(LanguageClient.instances.slice(0, -1).every((client) => client.disposed));
    lastClient().crash();
    await waitFor('the error message', () => errors().length > 0);
    assert.equal(LanguageClient.instances.length, 5, 'no sixth client');
    assertOneReadableError(/crashed 5 times in 3 minutes and will not be restarted/, ['Show Server Log', 'Restart Server']);
    assertNotRunning();

    await vscode.commands.executeCommand('agentls.restartServer');
    assert.equal(LanguageClient.instances.length, 6);
    assert.equal(lastClient().state, State.Running);
  });

  test('Show Server Status (the status bar’s click when not running) offers Restart Server, Open Settings and the log', async () => {
    stub.settings['agentls.serverCommand'] = ['/nonexistent/agentls', 'serve'];
    await activating();
    stub.picks.push('Open Settings');
    await vscode.commands.executeCommand(statusBar().command as string);
    const [menu] = stub.quickPicks;
    assert.deepEqual(
      menu.items.map((item) => item.label),
      ['Restart Server', 'Open Settings', 'Show Server Log'],
    );
    assert.match(String(menu.items[0].detail), /\/nonexistent\/agentls does not exist/);
    assert.deepEqual(stub.executed.at(-1), ['workbench.action.openSettings', 'agentls']);

    stub.settings['agentls.serverCommand'] = [AGENTLS, 'serve'];
    stub.picks.push('Restart Server');
    await vscode.commands.executeCommand('agentls.showServerStatus');
    await waitFor('a running client', () => LanguageClient.instances.at(-1)?.state === State.Running);
  });

  test('a server of another protocol version gets a warning', async () => {
    stub.settings['agentls.serverCommand'] = [AGENTLS, 'serve'];
    LanguageClient.starts.push(async (client) => {
      client.initializeResult.capabilities.experimental.agentls.protocolVersion = 1;
    });
    await activating();
    const warning = stub.messages.find((message) => message.kind === 'warning');
    assert.match(String(warning?.message), /speaks protocol version 1, this extension version 2/);
  });
});
