/**
 * The extension activated against the stub `vscode` module and a stand-in
 * LanguageClient: commands, progress, the transcript webview, the status
 * bar, settings changes and crash handling, without a real VS Code.
 */

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, test } from 'node:test';
import * as vscode from 'vscode';
import { activate, deactivate } from '../../src/extension';
import { BATCH_MS } from '../../src/panel';
import { selectionOf } from '../../src/ui';
import { AGENTLS, EXTENSION_DIR, REPO_DIR, waitFor } from '../support/env';
import { LanguageClient } from '../support/languageclient';
import { type WebviewPanel, type WebviewView, changeSettings, resetStub, stub } from '../support/vscode';

interface Manifest {
  contributes: {
    commands: Array<{ command: string; title: string; category?: string }>;
    menus: Record<string, Array<{ command: string }>>;
  };
}

const manifest = JSON.parse(fs.readFileSync(path.join(EXTENSION_DIR, 'package.json'), 'utf8')) as Manifest;

let context: { subscriptions: Array<{ dispose(): unknown }>; extensionUri: vscode.Uri };

async function activated(): Promise<LanguageClient> {
  context = { subscriptions: [], extensionUri: vscode.Uri.file('/ext') };
  await activate(context as unknown as vscode.ExtensionContext);
  const client = LanguageClient.instances.at(-1)!;
  assert.ok(client !== undefined, 'a language client was created');
  return client;
}

function statusText(): string {
  return stub.statusBarItems[0].text;
}

/** The transcript view in the secondary side bar. */
function sideBar(): WebviewView {
  const found = stub.views.find((candidate) => candidate.viewType === 'agentls.transcript' && !candidate.disposed);
  assert.ok(found, 'the transcript view in the side bar');
  return found;
}

function panel(pane = 'main'): WebviewPanel {
  const found = stub.panels.find((candidate) => candidate.title === `AgentLS: ${pane}` && !candidate.disposed);
  assert.ok(found, `a transcript panel for ${pane}`);
  return found;
}

describe('the extension in a stub VS Code', () => {
  beforeEach(() => {
    resetStub();
    LanguageClient.instances = [];
    LanguageClient.starts = [];
    // An executable that exists, so the check before the start passes (the stub client starts nothing).
    stub.settings['agentls.serverCommand'] = [AGENTLS, 'serve'];
  });

  afterEach(async () => {
    await deactivate();
    for (const subscription of context.subscriptions) {
      subscription.dispose();
    }
  });

  test('registers every command the manifest lists (and no others), under "AgentLS:"', async () => {
    await activated();
    const contributed = manifest.contributes.commands.map((command) => command.command).sort();
    assert.deepEqual([...stub.commands.keys()].sort(), contributed);
    // The palette shows "Category: Title"; a context menu shows the title alone, so its items carry the prefix.
    const shown = Object.fromEntries(
      manifest.contributes.commands.map((command) => [
        command.command,
        command.category !== undefined ? `${command.category}: ${command.title}` : command.title,
      ]),
    );
    for (const [command, title] of Object.entries(shown)) {
      assert.match(title, /^AgentLS: /, command);
    }
    for (const item of manifest.contributes.menus['editor/context']) {
      const command = manifest.contributes.commands.find((candidate) => candidate.command === item.command);
      assert.equal(command?.category, undefined, `${item.command}: no category, the prefix is in its title`);
    }
    const titles = Object.fromEntries(manifest.contributes.commands.map((command) => [command.command, command.title]));
    assert.deepEqual(titles, {
      'agentls.ask': 'Ask',
      'agentls.askAboutSelection': 'AgentLS: Ask About Selection',
      'agentls.steer': 'Steer',
      'agentls.cancel': 'Cancel',
      'agentls.fork': 'Fork',
      'agentls.closePane': 'Close Pane',
      'agentls.setEffort': 'Set Effort',
      'agentls.toggleFastMode': 'Toggle Fast Mode',
      'agentls.newSession': 'New Session',
      'agentls.compact': 'Compact Conversation',
      'agentls.resumeSession': 'Resume Session…',
      'agentls.deleteSession': 'Delete Session…',
      'agentls.showTranscript': 'Show Transcript',
      'agentls.showServerLog': 'Show Server Log',
      'agentls.showServerStatus': 'Show Server Status',
      'agentls.restartServer': 'Restart Server',
      'agentls.mcpServers': 'MCP Servers',
      'agentls.toggleReview': 'Toggle Review Mode',
    });
  });

  test('no old names in the manifest, README, sources and tests (Agent Host, "Agent:", Thinking as the effort, Close Fork)', () => {
    const self = path.join(EXTENSION_DIR, 'test', 'unit', 'extension.test.ts'); // it spells them below
    const files = [
      path.join(EXTENSION_DIR, 'package.json'),
      path.join(EXTENSION_DIR, 'README.md'),
      path.join(REPO_DIR, 'docs', 'vscode.md'),
      ...['src', 'test', 'media'].flatMap((dir) => listFiles(path.join(EXTENSION_DIR, dir))),
    ].filter((file) => file !== self);
    // "Thinking…" alone is the server's progress message (what the agent does), not a setting.
    const old = /agent[-_ ]?host|\bAgent: |set ?thinking|thinking( effort|:)|close ?fork/i;
    const found = files.flatMap((file) =>
      fs
        .readFileSync(file, 'utf8')
        .split('\n')
        .map((line, index) => ({ file, line, index }))
        .filter(({ line }) => old.test(line)),
    );
    assert.deepEqual(
      found.map(({ file, index, line }) => `${path.relative(REPO_DIR, file)}:${index + 1}: ${line.trim()}`),
      [],
    );
  });

  test('the server gets the settings as initializationOptions; the status bar shows the pane and effort', async () => {
    stub.settings['agentls.model'] = 'gpt-test';
    stub.settings['agentls.effort'] = 'low';
    const client = await activated();
    assert.equal(client.id, 'agentls', 'agentls.trace.server is the trace setting');
    assert.deepEqual(client.clientOptions.initializationOptions(), {
      effort: 'low',
      fastMode: false,
      approval: 'on-request',
      sandbox: 'workspace-write',
      network: false,
      webSearch: false,
      autoCompact: 0.85,
      model: 'gpt-test',
    });
    assert.equal(statusText(), '$(hubot) AgentLS main: idle · low');
    assert.equal(stub.statusBarItems[0].command, 'agentls.showTranscript');
  });

  test('the output channel says which AGENTS.md files are in force; the status bar shows the context meter', async () => {
    const client = await activated();
    assert.deepEqual(client.startupRequests, [{ method: 'agent/instructions', params: { pane: 'main' } }]);
    const channel = stub.outputChannels.find((candidate) => candidate.name === 'AgentLS')!;
    await waitFor('the instructions line', () =>
      channel.lines.includes('info: instructions: 1 file, 3.1 KiB (AGENTS.md)') ? true : undefined,
    );
    client.emit('agent/event', { pane: 'main', turnId: 1, seq: 1, kind: 'turn.started', prompt: 'p' });
    client.emit('agent/event', {
      pane: 'main',
      turnId: 1,
      seq: 2,
      kind: 'usage',
      inputTokens: 1,
      outputTokens: 1,
      reasoningTokens: 0,
      cachedTokens: 0,
      contextTokens: 68_000,
      contextWindow: 272_000,
    });
    await waitFor('the meter', () => (statusText().endsWith(' · 25%') ? true : undefined));
    assert.match(String(stub.statusBarItems[0].tooltip), /Context 68\.0k of 272k tokens \(25%\)/);
  });

  test('AgentLS: Ask runs a turn: progress in the status bar, Cancel in a notification only while the transcript is hidden', async () => {
    const client = await activated();
    let release: (() => void) | undefined;
    let requestToken: vscode.CancellationToken | undefined;
    client.respond = async (method, params, token) => {
      assert.equal(method, 'agent/submit');
      requestToken = token;
      const event = (seq: number, extra: Record<string, unknown>) =>
        client.emit('agent/event', { pane: 'main', turnId: 1, seq, ...extra });
      client.sendProgress(params.workDoneToken, { kind: 'begin', title: 't', cancellable: true, message: 'Thinking…' });
      event(1, { kind: 'turn.started', prompt: params.prompt, number: 1 });
      await new Promise<void>((resolve) => {
        release = resolve;
      });
      for (let i = 0; i < 50; i++) {
        event(2 + i, { kind: 'message.delta', text: `w${i} ` });
      }
      client.sendProgress(params.workDoneToken, { kind: 'report', message: 'Writing answer' });
      event(52, { kind: 'turn.finished', status: 'completed', finalMessage: 'done' });
      return { pane: 'main', turnId: 1, status: 'completed', finalMessage: 'done' };
    };
    stub.inputs.push('Hello agent');
    const done = vscode.commands.executeCommand('agentls.ask');
    await waitFor('the turn to start', () => release !== undefined);
    assert.ok(requestToken !== undefined, 'the request carries a cancellation token');
    // The transcript opened in the side bar: the status bar has the progress, nothing covers the view.
    const [status] = stub.progress;
    assert.deepEqual(status.options, { location: vscode.ProgressLocation.Window, title: 'AgentLS: Hello agent', cancellable: false });
    assert.equal(stub.progress.length, 1, 'no notification over the shown transcript');
    assert.deepEqual(stub.executed.filter((call) => call[1] === 'agentls.running').at(-1), ['setContext', 'agentls.running', true]);
    assert.match(statusText(), /running/);

    // The transcript; its webview has a strict CSP and says it is ready.
    const view = sideBar();
    const html = view.webview.html;
    const nonce = /script-src 'nonce-([^']+)'/.exec(html)?.[1];
    assert.ok(nonce);
    assert.match(html, /default-src 'none'/);
    assert.ok(html.includes(`<script nonce="${nonce}" src="vscode-resource:///ext/dist/webview.js">`));
    assert.ok(!/https?:\/\//.test(html), 'no remote resources');
    view.webview.received.fire({ type: 'ready' });
    const replay = view.webview.posted.find((message) => message.type === 'replay');
    assert.equal(replay.pane, 'main');
    assert.equal(replay.inputs.length, 1);

    // Hidden, the transcript's Stop is out of reach: a cancellable notification stands in; shown again, it goes.
    view.setVisible(false);
    const notification = stub.progress[1];
    assert.deepEqual(notification.options, {
      location: vscode.ProgressLocation.Notification,
      title: 'AgentLS: Hello agent',
      cancellable: true,
    });
    view.setVisible(true);
    await waitFor('the notification to go', () => notification.ended || undefined);
    view.webview.received.fire({ type: 'ready' }); // shown again, the page reloads

    release!();
    await done;
    await waitFor('the batched events', () => view.webview.posted.some((message) => message.type === 'append'));
    const appends = view.webview.posted.filter((message) => message.type === 'append');
    const appended = appends.flatMap((message) => message.inputs);
    assert.ok(appends.length <= 2, `51 events in at most 2 messages (got ${appends.length})`);
    const states = view.webview.posted.filter((message) => message.type === 'state');
    assert.ok(states.length <= 4, `a state message per change of state, not per event (got ${states.length})`);
    assert.equal(appended.filter((input) => input.kind === 'message.delta').length, 50);
    assert.deepEqual(status.reports, [{ message: 'Thinking…' }, { message: 'Writing answer' }]);
    await waitFor('the status bar progress to end', () => status.ended || undefined);
    assert.equal(requestToken.isCancellationRequested, false);
    assert.match(statusText(), /idle/);
    assert.ok(BATCH_MS <= 50);
  });

  test('the hidden transcript’s notification cancels the turn’s request ($/cancelRequest)', async () => {
    const client = await activated();
    let requestToken: vscode.CancellationToken | undefined;
    client.respond = async (_method, _params, token) => {
      requestToken = token;
      await new Promise<void>((resolve) => token!.onCancellationRequested(() => resolve()));
      throw Object.assign(new Error('cancelled'), { code: -32800 });
    };
    stub.inputs.push('long job');
    const done = vscode.commands.executeCommand('agentls.ask');
    await waitFor('the request', () => requestToken);
    sideBar().setVisible(false); // the user closed the side bar during the turn
    const notification = stub.progress.find((call) => call.options.location === vscode.ProgressLocation.Notification);
    assert.ok(notification, 'a notification while the transcript is hidden');
    notification.source.cancel();
    await done;
    assert.equal(requestToken!.isCancellationRequested, true);
  });

  test('the view asks, steers, cancels and closes its pane through the commands’ logic', async () => {
    const client = await activated();
    client.respond = async (method) => {
      if (method === 'agent/steer') return { outcome: 'admitted', turnId: 1 };
      if (method === 'agent/cancel') return { cancelled: 1, receipts: [] };
      if (method === 'agent/cancelTool') return { cancelled: true, killedProcesses: 2 };
      if (method === 'agent/closePane') return { cancelled: 0 };
      return { pane: 'main', turnId: 1, status: 'completed', finalMessage: '' };
    };
    await vscode.commands.executeCommand('agentls.showTranscript');
    const view = sideBar();
    view.webview.received.fire({ type: 'ready' });
    view.webview.received.fire({ type: 'steer', text: 'use tabs' });
    client.emit('agent/event', { pane: 'main', turnId: 1, seq: 1, kind: 'turn.started', prompt: 'p', number: 1 });
    view.webview.received.fire({ type: 'stop' }); // a turn this window did not ask for: agent/cancel
    view.webview.received.fire({ type: 'stopTool', callId: 'call_7' }); // a tool call's Stop button
    view.webview.received.fire({ type: 'closePane' });
    view.webview.received.fire({ type: 'bogus' });
    view.webview.received.fire({ type: 'stopTool' });
    // (The start asked agent/sessions, to offer the last session: not part of this.)
    const sent = () => client.requests.filter((request) => request.method !== 'agent/sessions');
    await waitFor('four requests', () => sent().length === 4);
    assert.deepEqual(
      sent().map((request) => [request.method, request.params]),
      [
        ['agent/steer', { pane: 'main', prompt: 'use tabs' }],
        ['agent/cancel', { pane: 'main' }],
        ['agent/cancelTool', { pane: 'main', callId: 'call_7' }],
        ['agent/closePane', { pane: 'main' }],
      ],
    );
    // The command: the open fork by default, or the pane it is given.
    client.emit('agent/event', { pane: 'fork-1', turnId: null, seq: 1, kind: 'pane.opened', items: 0 });
    await vscode.commands.executeCommand('agentls.closePane');
    await vscode.commands.executeCommand('agentls.closePane', 'main');
    assert.deepEqual(
      sent()
        .slice(4)
        .map((request) => [request.method, request.params]),
      [
        ['agent/closePane', { pane: 'fork-1' }],
        ['agent/closePane', { pane: 'main' }],
      ],
    );
  });

  test('agentls.transcriptLocation "editor": a tab per pane; back to the side bar at once', async () => {
    stub.settings['agentls.transcriptLocation'] = 'editor';
    const client = await activated();
    await vscode.commands.executeCommand('agentls.showTranscript');
    const tab = panel();
    assert.equal(stub.views.length, 0, 'the side bar view is not opened');
    client.emit('agent/event', { pane: 'fork-1', turnId: null, seq: 1, kind: 'pane.opened', items: 0 });
    await vscode.commands.executeCommand('agentls.showTranscript');
    assert.ok(panel('fork-1'));
    changeSettings({ 'agentls.transcriptLocation': 'sideBar' });
    await waitFor('the side bar view', () => stub.views.length > 0 || undefined);
    assert.equal(tab.disposed, true, 'the editor tabs close');
    const view = sideBar();
    view.webview.received.fire({ type: 'ready' });
    const tabs = view.webview.posted.find((message) => message.type === 'panes');
    assert.deepEqual(
      tabs.panes.map((entry: { pane: string }) => entry.pane),
      ['main', 'fork-1'],
    );
    assert.equal(tabs.tabs, true);
    // A tab click shows that pane; what the view sends then acts on it.
    view.webview.received.fire({ type: 'showPane', pane: 'fork-1' });
    view.webview.received.fire({ type: 'closePane' });
    await waitFor('closePane', () => client.requests.find((request) => request.method === 'agent/closePane'));
    assert.deepEqual(client.requests.find((request) => request.method === 'agent/closePane')?.params, { pane: 'fork-1' });
  });

  test('no API key: the status bar says so at start-up, not at the first Ask', async () => {
    LanguageClient.starts.push(async (client) => {
      client.initializeResult.capabilities.experimental.agentls.missingCredentials = 'no model is configured: set OPENAI_API_KEY';
    });
    await activated();
    await waitFor('the warning', () => statusText() === '$(warning) AgentLS: no API key' || undefined);
    assert.equal(stub.statusBarItems[0].command, 'agentls.showServerStatus');
    assert.match(String(stub.statusBarItems[0].tooltip), /set OPENAI_API_KEY/);
  });

  test('clearing agentls.baseUrl offers a restart: the running server keeps the old value until then', async () => {
    stub.settings['agentls.baseUrl'] = 'http://127.0.0.1:9/v1';
    const client = await activated();
    changeSettings({ 'agentls.baseUrl': '' });
    await waitFor('the restart offer', () => stub.messages.length > 0 || undefined);
    assert.deepEqual(client.notifications[0].params, { settings: { agentls: { baseUrl: '' } } });
    assert.match(stub.messages[0].message, /agentls\.baseUrl was cleared: the server keeps the old value until it restarts/);
    assert.deepEqual(stub.messages[0].actions, ['Restart Server']);
  });

  test('a failed turn: no toast over the shown transcript; hidden, a toast with the setting to open', async () => {
    const client = await activated();
    await vscode.commands.executeCommand('agentls.showTranscript');
    const failed = (seq: number, turnId: number) =>
      client.emit('agent/event', {
        pane: 'main',
        turnId,
        seq,
        kind: 'turn.finished',
        status: 'failed',
        finalMessage: '',
        error: 'cannot reach the model',
        failure: 'connection',
      });
    failed(1, 1);
    sideBar().setVisible(false);
    failed(2, 2);
    await waitFor('the toast', () => stub.messages.length > 0 || undefined);
    assert.equal(stub.messages.length, 1, 'one toast: the turn that failed while the transcript was hidden');
    assert.equal(stub.messages[0].kind, 'error');
    assert.deepEqual(stub.messages[0].actions, ['Show Transcript', 'Open agentls.baseUrl']);
  });

  test('settings changes reach the running server without a reload', async () => {
    const client = await activated();
    changeSettings({ 'agentls.effort': 'high', 'agentls.fastMode': true });
    await waitFor('didChangeConfiguration', () => client.notifications.length > 0);
    assert.deepEqual(client.notifications, [
      {
        method: 'workspace/didChangeConfiguration',
        params: { settings: { agentls: { effort: 'high', fastMode: true } } },
      },
    ]);
    await waitFor('the status bar', () => statusText() === '$(hubot) AgentLS main: idle · high · fast');
    changeSettings({ 'agentls.serverCommand': '/opt/agentls serve' });
    await waitFor('the restart offer', () => stub.messages.length > 0);
    assert.deepEqual(stub.messages[0].actions, ['Restart Server']);
    assert.equal(client.notifications.length, 1);
  });

  test('the server asks before a tool call: the command in a modal dialog, the answer goes back', async () => {
    const client = await activated();
    assert.deepEqual(client.capabilities().experimental, { agentls: { requestApproval: true, diagnostics: true } });
    stub.answer = 'Allow for this session';
    const answer = await client.ask('agent/requestApproval', {
      pane: 'main',
      turnId: 1,
      callId: 'c1',
      tool: 'exec_command',
      title: 'Running `make deploy`',
      command: 'make deploy',
      justification: 'it uploads the build',
    });
    assert.deepEqual(answer, { decision: 'allowSession' });
    const [question] = stub.messages;
    assert.equal(question.kind, 'warning');
    assert.equal(question.modal, true);
    assert.equal(question.message, 'AgentLS (main) wants to: Running `make deploy`');
    assert.equal(question.detail, '$ make deploy\n\nWhy: it uploads the build');
    assert.deepEqual(question.actions, ['Allow once', 'Allow for this session', 'Deny']);
    stub.answer = 'Deny';
    stub.inputs.push('not from here');
    assert.deepEqual(await client.ask('agent/requestApproval', { ...question, pane: 'main', title: 't', tool: 'x' }), {
      decision: 'deny',
      reason: 'not from here',
    });
  });

  test('approval changes reach the running server; sandbox changes offer a restart', async () => {
    const client = await activated();
    changeSettings({ 'agentls.approval': 'always' });
    await waitFor('didChangeConfiguration', () => client.notifications.length > 0);
    assert.deepEqual(client.notifications[0].params, { settings: { agentls: { approval: 'always' } } });
    changeSettings({ 'agentls.sandbox': 'off' });
    await waitFor('the restart offer', () => stub.messages.length > 0);
    assert.match(stub.messages[0].message, /the sandbox settings changed/);
    assert.deepEqual(stub.messages[0].actions, ['Restart Server']);
  });

  test('Show Server Log shows the output channel', async () => {
    await activated();
    await vscode.commands.executeCommand('agentls.showServerLog');
    assert.equal(stub.outputChannels[0].name, 'AgentLS');
    assert.equal(stub.outputChannels[0].shown, true);
  });

  test('the selection of the active editor becomes context.selection', () => {
    const editor = {
      selection: new vscode.Selection(new vscode.Position(2, 4), new vscode.Position(3, 1)),
      document: { uri: vscode.Uri.file('/ws/a.py'), getText: () => 'selected' },
    };
    assert.deepEqual(selectionOf(editor as unknown as vscode.TextEditor), {
      uri: 'file:///ws/a.py',
      range: { start: { line: 2, character: 4 }, end: { line: 3, character: 1 } },
      text: 'selected',
    });
    const empty = { ...editor, selection: new vscode.Selection(new vscode.Position(1, 1), new vscode.Position(1, 1)) };
    assert.equal(selectionOf(empty as unknown as vscode.TextEditor), undefined);
    assert.equal(selectionOf(undefined), undefined);
  });
});

function listFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? listFiles(full) : /\.(ts|css|md|json)$/.test(entry.name) ? [full] : [];
  });
}
