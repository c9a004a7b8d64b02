/**
 * End to end in a real VS Code: code-server with the packaged .vsix
 * installed, driven by headless Chromium through playwright-core, with the
 * real agentls server and the scripted fake model.
 *
 *   0. First run with a wrong agentls.serverCommand (a file that does not
 *      exist): one readable error notification (no stack trace) with its
 *      actions, the status bar says "AgentLS: not running". The setting is
 *      changed in the settings editor to a command that exits at once:
 *      Restart Server (the notification's button) reports that in words.
 *      Then the right command, AgentLS: Restart Server from the Command
 *      Palette starts the server, and everything below runs on it.
 *   1. AgentLS: Ask from the Command Palette, with a selection; the
 *      transcript opens in the secondary side bar (no editor tab); the
 *      answer streams into it (part of it is seen while the model's stream
 *      is held, then all of it), rendered as Markdown, the selection as a
 *      file chip; a code block's Copy puts its code on the clipboard.
 *   2. AgentLS: Ask for a command that runs `sleep 300`; the approval
 *      dialog (agentls.approval is "always" here) shows the command: Allow
 *      once; no notification covers the transcript: its input box takes
 *      text and its Stop button stops the turn, through `$/cancelRequest`
 *      (the server's log says so); the turn shows cancelled with its
 *      receipt, the status bar says so, and the sleep process is gone.
 *   3. Screenshots go to test-output/e2e/ (the ones docs/vscode.md shows
 *      to docs/images/ too, when AGENTLS_UPDATE_SCREENSHOT=1 or when one is
 *      missing there).
 *   4. AgentLS: Fork opens fork-1 in a tab beside main's, showing what it
 *      inherited; AgentLS: Close Pane closes it.
 *   5. AgentLS: New Session, then AgentLS: Resume Session… picks the first
 *      session from the quick pick: its transcript (prompts, answer, tool
 *      calls) is back in main.
 *   6. A turn streams (held mid-answer); Developer: Reload Window; the
 *      reloaded window attaches to the server that ran on (it was started
 *      through `serve --reattach`), rebuilds the transcript from
 *      agent/history with the text streamed so far, and the turn finishes
 *      in it.
 *   7. Approvals: Allow once, Allow for this session (the same command is
 *      not asked again), a patch shown in the diff editor (Show Diff) and
 *      allowed from the notification, Deny with a reason the model reads.
 *   8. The Stop button of a running command: that command dies, the turn
 *      goes on.
 *   9. MCP: the user's server (agentls.mcpServers) runs; the project's
 *      .mcp.json asks first (a notification: Allow), then runs too; AgentLS:
 *      MCP Servers lists both as ready and shows a server's tools.
 *  10. A wrong agentls.baseUrl: the retries show as one line, the turn fails
 *      with the button "Open agentls.baseUrl", which opens that setting.
 *
 * Needs `scripts/toolchain.sh e2e` (code-server, Chromium, playwright-core
 * under $E2E_CACHE) and the built agentls.vsix. Synchronises on DOM state
 * and processes, with timeouts; never on plain sleeps.
 */

import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  AGENTLS,
  EXTENSION_DIR,
  PYTHON,
  REPO_DIR,
  pidAlive,
  processesWith,
  tempDir,
  uniqueDuration,
  waitFor,
} from '../support/env';
import { FakeModel, held } from '../support/fakeModel';

// --- the slice of playwright-core we use --------------------------------------------------

interface Locator {
  click(options?: { timeout?: number }): Promise<void>;
  waitFor(options?: { state?: 'attached' | 'visible' | 'hidden' | 'detached'; timeout?: number }): Promise<void>;
  filter(options: { hasText?: string | RegExp }): Locator;
  getByRole(role: string, options?: { name?: string | RegExp; exact?: boolean }): Locator;
  locator(selector: string): Locator;
  first(): Locator;
  textContent(): Promise<string | null>;
  getAttribute(name: string): Promise<string | null>;
  count(): Promise<number>;
  inputValue(): Promise<string>;
  fill(value: string, options?: { timeout?: number }): Promise<void>;
  boundingBox(): Promise<{ x: number; y: number; width: number; height: number } | null>;
}

interface Frame {
  url(): string;
  $(selector: string): Promise<unknown>;
  locator(selector: string): Locator;
  waitForFunction<A>(fn: (arg: A) => unknown, arg: A, options?: { timeout?: number; polling?: number }): Promise<unknown>;
  evaluate<R, A>(fn: (arg: A) => R, arg: A): Promise<R>;
}

interface Page extends Frame {
  context(): { grantPermissions(permissions: string[]): Promise<void> };
  goto(url: string, options?: { timeout?: number; waitUntil?: string }): Promise<unknown>;
  keyboard: { press(key: string): Promise<void>; type(text: string, options?: { delay?: number }): Promise<void> };
  frames(): Frame[];
  screenshot(options: { path: string; fullPage?: boolean }): Promise<unknown>;
  on(event: 'console' | 'pageerror', listener: (value: { text?: () => string; message?: string }) => void): void;
}

interface Browser {
  newPage(options?: { viewport?: { width: number; height: number }; deviceScaleFactor?: number }): Promise<Page>;
  close(): Promise<void>;
}

interface Playwright {
  chromium: { launch(options: { executablePath: string; headless?: boolean; args?: string[] }): Promise<Browser> };
}

// --- set-up ------------------------------------------------------------------------------

const CACHE = process.env.AGENTLS_E2E_CACHE ?? path.join(os.homedir(), '.cache', 'agentls-e2e');
const CODE_SERVER = path.join(CACHE, 'code-server', 'node_modules', '.bin', 'code-server');
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const VSIX = path.join(EXTENSION_DIR, 'agentls.vsix');
const OUTPUT = path.join(EXTENSION_DIR, 'test-output', 'e2e');
/** The screenshots docs/vscode.md shows: the one in docs/images, and the one of this run it is copied from. */
const DOCS_SCREENSHOTS = [
  ['vscode-transcript.png', 'vscode-transcript.png'],
  ['vscode-error.png', 'wrong-base-url.png'],
].map(([docs, run]) => ({ docs: path.join(REPO_DIR, 'docs', 'images', docs), run: path.join(OUTPUT, run) }));

const ANSWER =
  'Here is what **agentls** does:\n\n' +
  '1. It runs the agent as a *language server*.\n' +
  '2. It streams every step into this transcript.\n\n' +
  '```python\nprint("hello from the fake model")\n```\n\n' +
  'All done: this answer arrived in pieces.';
const SLEEP = uniqueDuration();
const SLEEPER = `sleep ${SLEEP} & echo started; wait`;
const STOPPED = uniqueDuration();
const PATCH = '*** Begin Patch\n*** Add File: notes.txt\n+approved by the e2e run\n*** End Patch';
const GREETED = '    return f"Hello, {name}!"';
const GREET_PATCH = `*** Begin Patch\n*** Update File: app.py\n-    return f"hello {name}"\n+${GREETED}\n*** End Patch`;
const REWORD_PATCH = `*** Begin Patch\n*** Update File: app.py\n-${GREETED}\n+    return f"Hi {name}"\n*** End Patch`;
/** The MCP server the Python tests use (written with the `mcp` SDK). */
const MCP_FIXTURE = { command: PYTHON, args: [path.join(REPO_DIR, 'tests', 'mcp_fixture.py')] };
const SLOW = 'Counting: one, two, three, four, five, six, seven, eight, nine, ten. Done counting.';
/** Seconds the server waits for a window to come back (and, at the end, outlives code-server). */
const LINGER = 15;

const started = Date.now();
function log(message: string): void {
  console.log(`[e2e ${((Date.now() - started) / 1000).toFixed(1)}s] ${message}`);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

interface Dirs {
  workspace: string;
  userData: string;
  extensions: string;
  home: string;
}

/** A Node or Python stack trace in a notification. */
const STACK = /\n\s+at |node:internal|Traceback \(most recent call last\)|\.js:\d+:\d+/;

function userSettingsFile(dirs: Dirs): string {
  return path.join(dirs.userData, 'User', 'settings.json');
}

/** Write the user settings (code-server sees the change and tells the extension). */
function writeSettings(dirs: Dirs, values: Record<string, unknown>): void {
  const file = userSettingsFile(dirs);
  const current = fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>) : {};
  fs.writeFileSync(file, JSON.stringify({ ...current, ...values }, null, 2));
}

function prepareWorkspace(root: string, baseUrl: string, serverCommand: string[]): Dirs {
  const workspace = path.join(root, 'workspace');
  const userData = path.join(root, 'user-data');
  const extensions = path.join(root, 'extensions');
  const home = path.join(root, 'home');
  for (const dir of [workspace, path.join(userData, 'User'), extensions, home]) {
    fs.mkdirSync(dir, { recursive: true });
  }
  fs.writeFileSync(path.join(workspace, 'app.py'), 'def greet(name):\n    return f"hello {name}"\n');
  const settings = {
    'security.workspace.trust.enabled': false,
    'workbench.startupEditor': 'none',
    'workbench.tips.enabled': false,
    'workbench.welcomePage.walkthroughs.openOnInstall': false,
    'workbench.secondarySideBar.defaultVisibility': 'hidden',
    'workbench.colorTheme': 'Default Dark Modern',
    'chat.disableAIFeatures': true,
    'telemetry.telemetryLevel': 'off',
    'update.mode': 'none',
    'extensions.ignoreRecommendations': true,
    'extensions.autoCheckUpdates': false,
    'window.commandCenter': false,
    // settings.json opens as an editor tab, not as a modal over the workbench.
    'workbench.editor.useModal': 'off',
    'agentls.serverCommand': serverCommand,
    'agentls.baseUrl': baseUrl,
    // Every command and patch asks: the dialogs are under test (step 5).
    'agentls.approval': 'always',
    'agentls.mcpServers': { fx: MCP_FIXTURE },
  };
  const dirs = { workspace, userData, extensions, home };
  writeSettings(dirs, settings);
  return dirs;
}

function installExtension(dirs: { userData: string; extensions: string; home: string }): void {
  const result = spawnSync(
    CODE_SERVER,
    ['--extensions-dir', dirs.extensions, '--user-data-dir', dirs.userData, '--install-extension', VSIX],
    { encoding: 'utf8', env: { ...process.env, HOME: dirs.home }, timeout: 120_000 },
  );
  if (result.status !== 0) {
    throw new Error(`installing the .vsix failed:\n${result.stdout}\n${result.stderr}`);
  }
  const installed = fs.readdirSync(dirs.extensions).filter((name) => name.startsWith('agentls.agentls'));
  if (installed.length !== 1) {
    throw new Error(`the extension is not in ${dirs.extensions}: ${fs.readdirSync(dirs.extensions).join(', ')}`);
  }
}

async function startCodeServer(
  dirs: { workspace: string; userData: string; extensions: string; home: string },
  root: string,
  port: number,
): Promise<{ child: ChildProcess; output: string[] }> {
  const output: string[] = [];
  const child = spawn(
    CODE_SERVER,
    [
      '--auth',
      'none',
      '--bind-addr',
      `127.0.0.1:${port}`,
      '--disable-telemetry',
      '--disable-update-check',
      '--disable-workspace-trust',
      '--config',
      path.join(root, 'code-server.yaml'),
      '--extensions-dir',
      dirs.extensions,
      '--user-data-dir',
      dirs.userData,
      dirs.workspace,
    ],
    {
      // A home of its own (exec_command runs `bash -lc`; the user's profile is not under test).
      // Quick retries: step 10 waits for a turn to give up on an unreachable model.
      env: { ...process.env, HOME: dirs.home, OPENAI_API_KEY: 'sk-e2e-not-a-real-key', AGENTLS_RETRY_BASE_DELAY: '0.05' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    },
  );
  child.stdout!.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  await waitFor(
    'code-server to listen',
    () => {
      if (child.exitCode !== null) {
        throw new Error(`code-server exited:\n${output.join('')}`);
      }
      return output.join('').includes('HTTP server listening');
    },
    60_000,
  );
  return { child, output };
}

/** The frame of the transcript webview (nested iframes inside the workbench). */
async function transcriptFrame(page: Page, pane = 'main'): Promise<Frame> {
  return waitFor(
    `the transcript webview of ${pane}`,
    async () => {
      for (const frame of page.frames()) {
        const found = await frame
          .evaluate((name: string) => document.body?.dataset.pane === name && document.querySelector('#transcripts') !== null, pane)
          .catch(() => false);
        if (found) {
          return frame;
        }
      }
      return undefined;
    },
    30_000,
    100,
  );
}

async function runCommand(page: Page, title: string): Promise<void> {
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout: 20_000 });
  await page.keyboard.type(title);
  const row = page
    .locator('.quick-input-list .monaco-list-row')
    .filter({ hasText: new RegExp(`^${title.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`) })
    .first();
  await row.waitFor({ state: 'visible', timeout: 20_000 });
  await page.keyboard.press('Enter');
}

async function ask(page: Page, prompt: string): Promise<void> {
  await runCommand(page, 'AgentLS: Ask');
  const title = page.locator('.quick-input-widget .quick-input-title').filter({ hasText: 'AgentLS: Ask' });
  await title.waitFor({ state: 'visible', timeout: 20_000 });
  await page.keyboard.type(prompt);
  await page.keyboard.press('Enter');
}

function statusBarText(page: Page): Promise<string> {
  return page.evaluate(() => {
    const items = [...document.querySelectorAll('.statusbar-item')];
    return items.map((item) => item.textContent ?? '').find((text) => text.includes('AgentLS')) ?? '';
  }, undefined);
}

/** The text of every notification toast on screen. */
function toastTexts(page: Page): Promise<string[]> {
  return page.evaluate(
    () => [...document.querySelectorAll('.notifications-toasts .notification-toast')].map((toast) => (toast as HTMLElement).innerText),
    undefined,
  );
}

/** As a user would: Preferences: Open User Settings (JSON), Find and Replace, save. */
async function replaceInUserSettings(page: Page, dirs: Dirs, from: string, to: string): Promise<void> {
  await runCommand(page, 'Preferences: Open User Settings (JSON)');
  const editor = page.locator('.monaco-editor .view-lines').filter({ hasText: 'agentls.serverCommand' }).first();
  await editor.waitFor({ state: 'visible', timeout: 20_000 });
  await editor.click();
  await page.keyboard.press('Control+H');
  const find = page.locator('.find-widget .find-part textarea').first();
  await find.waitFor({ state: 'visible', timeout: 10_000 });
  await find.click();
  await page.keyboard.press('Control+A');
  await page.keyboard.type(from);
  await page.locator('.find-widget .replace-part textarea').first().click();
  await page.keyboard.press('Control+A');
  await page.keyboard.type(to);
  await page.keyboard.press('Control+Alt+Enter'); // Replace All
  // Close the find widget (it would follow into other editors); Escape may go to a notification instead.
  await page.locator('.find-widget.visible .codicon-widget-close').first().click({ timeout: 10_000 });
  await page.locator('.find-widget.visible').waitFor({ state: 'hidden', timeout: 10_000 });
  await page.keyboard.press('Control+S');
  await waitFor(
    'the settings file to be saved',
    () => {
      const text = fs.readFileSync(userSettingsFile(dirs), 'utf8');
      return text.includes(to) && !text.includes(from);
    },
    20_000,
    100,
  );
  await runCommand(page, 'View: Close Editor');
}

/** A server command that exists but is not the server: it exits at once, saying so on stderr. */
const NOT_THE_SERVER = 'agentls: this is not the server';

function writeNotTheServer(root: string): string {
  const file = path.join(root, 'not-the-server');
  fs.writeFileSync(file, `#!/bin/sh\necho "${NOT_THE_SERVER}" >&2\nexit 3\n`, { mode: 0o755 });
  return file;
}

function notification(page: Page, text: string): Locator {
  return page.locator('.notifications-toasts .notification-toast').filter({ hasText: text });
}

/**
 * Click a button of a notification: on its toast, or — when the workbench
 * did not pop it up as a toast (it sometimes does not while an editor is
 * opening) — in the notification center, where every notification lands.
 */
async function clickNotification(page: Page, text: string, button: string): Promise<void> {
  const toast = notification(page, text).first().getByRole('button', { name: button, exact: true });
  try {
    await toast.click({ timeout: 10_000 });
    return;
  } catch {
    log(`no toast for "${text}": answering it in the notification center`);
  }
  await runCommand(page, 'Notifications: Show Notifications');
  const entry = page.locator('.notifications-center .notification-list-item').filter({ hasText: text });
  await entry.first().getByRole('button', { name: button, exact: true }).click({ timeout: 20_000 });
}

/**
 * 0. The first run, as the issue tells it: a server command that does not
 * exist (one readable error, "not running"); then one that exits at once
 * (Restart Server from the notification's button: one readable error, the
 * server's last words, no stack trace); then the right one, AgentLS:
 * Restart Server from the Command Palette, and the server runs.
 */
async function firstRunWithAWrongServer(page: Page, dirs: Dirs, missing: string, notTheServer: string): Promise<void> {
  await waitFor('the status bar to say not running', async () => /AgentLS: not running/.test(await statusBarText(page)), 60_000, 200);
  const error = notification(page, 'AgentLS cannot start the server');
  await error.first().waitFor({ state: 'visible', timeout: 20_000 });
  for (const action of ['Open Settings', 'Restart Server', 'Show Server Log']) {
    await error.getByRole('button', { name: action, exact: true }).waitFor({ state: 'visible', timeout: 5_000 });
  }
  await page.screenshot({ path: path.join(OUTPUT, 'not-running.png') });
  log(`not running: ${JSON.stringify(await toastTexts(page))}`);

  // A command that runs but is not the server; Restart Server from the offer's button.
  await replaceInUserSettings(page, dirs, missing, notTheServer);
  // The offer proves the extension has the new setting (no race with Restart Server).
  await notification(page, 'the server command changed').first().getByRole('button', { name: 'Restart Server' }).click({ timeout: 30_000 });
  await notification(page, 'the server did not start').waitFor({ state: 'visible', timeout: 30_000 });
  await waitFor('the status bar to say not running', async () => /AgentLS: not running/.test(await statusBarText(page)), 15_000, 100);
  log(`a server that exits: ${JSON.stringify(await toastTexts(page))}`);

  // The right command; AgentLS: Restart Server from the Command Palette.
  await replaceInUserSettings(page, dirs, notTheServer, AGENTLS);
  await notification(page, 'the server command changed').waitFor({ state: 'visible', timeout: 30_000 });
  await runCommand(page, 'AgentLS: Restart Server');
  await waitFor('the status bar to say idle', async () => /AgentLS main: idle/.test(await statusBarText(page)), 60_000, 200);
  log(`restarted after fixing the setting: ${await statusBarText(page)}`);

  // Every notification since the start is in the notification center (a toast hides on Escape).
  await runCommand(page, 'Notifications: Show Notifications');
  await page.locator('.notifications-center .notification-list-item').first().waitFor({ state: 'visible', timeout: 10_000 });
  const all = await page.evaluate(
    () => [...document.querySelectorAll('.notifications-center .notification-list-item')].map((item) => (item as HTMLElement).innerText),
    undefined,
  );
  const stack = all.find((text) => STACK.test(text));
  if (stack !== undefined) {
    throw new Error(`a notification shows a stack trace: ${stack}`);
  }
  const errors = all.filter((text) => !/the server command changed/.test(text));
  const expected = [
    (text: string) => text.includes('AgentLS cannot start the server: agentls.serverCommand') && text.includes(missing),
    (text: string) => text.includes(`AgentLS: the server did not start: it exited with code 3: ${NOT_THE_SERVER}`),
  ];
  if (errors.length !== expected.length || !expected.every((matches) => errors.some(matches))) {
    throw new Error(`expected one notification per failure, in words; got ${JSON.stringify(all)}`);
  }
  await runCommand(page, 'Notifications: Clear All Notifications');
  await page.keyboard.press('Escape');
  await waitFor('the notifications to close', async () => (await toastTexts(page)).length === 0, 15_000, 100);
}

// --- the scenarios --------------------------------------------------------------------------

async function main(): Promise<void> {
  for (const [what, file] of [
    ['code-server (make vscode-e2e installs it)', CODE_SERVER],
    ['Chromium', CHROMIUM],
    ['the packaged extension (npm run package)', VSIX],
    ['the agentls server (make venv)', AGENTLS],
  ]) {
    if (!fs.existsSync(file)) {
      throw new Error(`missing ${what}: ${file}`);
    }
  }
  const playwright = createRequire(path.join(CACHE, 'harness', 'package.json'))('playwright-core') as Playwright;
  fs.rmSync(OUTPUT, { recursive: true, force: true });
  fs.mkdirSync(OUTPUT, { recursive: true });

  const root = tempDir('e2e');
  const fake = await FakeModel.start([
    // Held after a few deltas until the transcript has shown them: streaming, seen without a race.
    held('answer', 12, { text: ANSWER, chunks: 40, delay: 0.01 }),
    { tool_call: { name: 'exec_command', arguments: { cmd: SLEEPER }, call_id: 'call_sleep' } },
    held('slow', 8, { text: SLOW, chunks: 30, delay: 0.01 }),
    // 7. approvals
    { tool_call: { name: 'exec_command', arguments: { cmd: 'echo e2e-once' }, call_id: 'call_once' } },
    { tool_call: { name: 'exec_command', arguments: { cmd: 'echo e2e-session' }, call_id: 'call_session' } },
    { tool_call: { name: 'exec_command', arguments: { cmd: 'echo e2e-session' }, call_id: 'call_again' } },
    { tool_call: { name: 'apply_patch', arguments: { patch: PATCH }, call_id: 'call_patch' } },
    { tool_call: { name: 'exec_command', arguments: { cmd: 'touch denied.txt' }, call_id: 'call_denied' } },
    'Approvals done.',
    // 8. the Stop button
    { tool_call: { name: 'exec_command', arguments: { cmd: `echo started; sleep ${STOPPED} & wait` }, call_id: 'call_stop' } },
    'Went on after the stop.',
    // 9. edits through the editor, review mode
    { tool_call: { name: 'apply_patch', arguments: { patch: GREET_PATCH }, call_id: 'call_edit' } },
    'Edited.',
    { tool_call: { name: 'apply_patch', arguments: { patch: REWORD_PATCH }, call_id: 'call_review' } },
    'Rejected.',
  ]);
  const missing = path.join(root, 'not-installed', 'agentls');
  // As the extension starts a server it finds itself: through --reattach (scenario 6).
  // INFO: the server's log records each $/cancelRequest (step 2 reads it).
  const dirs = prepareWorkspace(root, fake.baseUrl, [missing, 'serve', '--reattach', '--linger', String(LINGER), '--log-level', 'INFO']);
  log(`fake model at ${fake.baseUrl}; workspace ${dirs.workspace}`);
  installExtension(dirs);
  log('extension installed');
  const port = await freePort();
  const codeServer = await startCodeServer(dirs, root, port);
  log(`code-server on port ${port}`);
  const browser = await playwright.chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  let page: Page | undefined;
  try {
    page = await browser.newPage({ viewport: { width: 1440, height: 860 } });
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
    const browserErrors: string[] = [];
    page.on('pageerror', (error) => browserErrors.push(error.message ?? String(error)));
    await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(dirs.workspace)}`, { timeout: 60_000 });
    await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: 60_000 });
    log('workbench loaded');
    await firstRunWithAWrongServer(page, dirs, missing, writeNotTheServer(root));

    // 1. Ask about a selection; the answer streams into the transcript.
    await page.keyboard.press('Control+P');
    await page.locator('.quick-input-widget input').waitFor({ state: 'visible', timeout: 20_000 });
    await page.keyboard.type('app.py');
    await page.locator('.quick-input-list .monaco-list-row').filter({ hasText: 'app.py' }).first().waitFor({ timeout: 20_000 });
    await page.keyboard.press('Enter');
    const editor = page.locator('.monaco-editor .view-lines').filter({ hasText: 'def greet' }).first();
    await editor.waitFor({ state: 'visible', timeout: 20_000 });
    await editor.click();
    await page.keyboard.press('Control+A');
    await ask(page, 'What does this project do?');
    const frame = await transcriptFrame(page);
    await inSecondarySideBar(page);
    log('transcript open in the secondary side bar');
    const partial = (await frame.waitForFunction(
      () => {
        const message = document.querySelector('.turn[data-status="running"] .entry.message');
        const text = message?.textContent ?? '';
        return text.length > 0 ? text : false;
      },
      undefined,
      { timeout: 30_000, polling: 20 },
    )) as { jsonValue(): Promise<string> };
    const partialText = await partial.jsonValue();
    fake.release('answer');
    await frame.locator('.turn[data-status="completed"]').waitFor({ state: 'visible', timeout: 30_000 });
    const answer = (await frame.locator('.turn[data-status="completed"] .entry.message').first().textContent()) ?? '';
    const prompt = (await frame.locator('.turn[data-status="completed"] .prompt').first().textContent()) ?? '';
    const chip = (await frame.locator('.turn[data-status="completed"] .prompt .file-chip').first().textContent()) ?? '';
    if (chip !== 'app.py:1–2' || prompt.includes('return f"hello {name}"')) {
      throw new Error(`the selection is not shown as a chip: ${JSON.stringify({ chip, prompt })}`);
    }
    if (!answer.includes('All done: this answer arrived in pieces.') || partialText.length >= answer.length) {
      throw new Error(`the answer did not stream: saw ${JSON.stringify(partialText)} then ${JSON.stringify(answer)}`);
    }
    const rendered = await frame.evaluate(
      () => ({
        strong: document.querySelector('.turn .entry.message strong')?.textContent,
        code: document.querySelector('.turn .entry.message pre code')?.textContent,
        items: document.querySelectorAll('.turn .entry.message ol li').length,
      }),
      undefined,
    );
    if (rendered.strong !== 'agentls' || !rendered.code?.includes('hello from the fake model') || rendered.items !== 2) {
      throw new Error(`the answer is not rendered as Markdown: ${JSON.stringify(rendered)}`);
    }
    log(`streamed answer seen partially (${partialText.length} of ${answer.length} characters), rendered as Markdown`);
    await copyCodeBlock(page, frame);
    await waitFor('the status bar to say idle', async () => /AgentLS main: idle/.test(await statusBarText(page!)), 15_000);
    // The context meter: in the status bar and the transcript's header.
    await waitFor('the context meter in the status bar', async () => /AgentLS main: idle · \w+ · \d+%/.test(await statusBarText(page!)), 15_000);
    const meter = await frame.evaluate(() => document.querySelector('.pane-context:not([hidden])')?.textContent ?? '', undefined);
    if (!/^\d+% of context$/.test(meter)) {
      throw new Error(`the transcript header shows no context meter: ${JSON.stringify(meter)}`);
    }
    log(`context meter: status bar "${await statusBarText(page!)}", transcript header "${meter}"`);

    // 2. A turn running `sleep`; Cancel in the progress notification.
    await editor.click(); // no selection this time
    await ask(page, 'Run the sleeper');
    const shown = await answerApproval(page, `$ ${SLEEPER}`, 'Allow once');
    log(`approval dialog: ${JSON.stringify(shown)}`);
    await frame.waitForFunction(
      () =>
        (document.querySelector('.turn[data-status="running"] .entry.tool[data-status="running"] pre.output')?.textContent ?? '').includes('started'),
      undefined,
      { timeout: 30_000, polling: 50 },
    );
    // (The command runs in the sandbox: its own pid namespace. Found by its duration.)
    const sleepers = await waitFor('the sleep to run', () => {
      const found = processesWith(`sleep\0${SLEEP}`);
      return found.length > 0 ? found : undefined;
    });
    log(`sleep running as pid ${sleepers.join(', ')}`);
    await waitFor('the status bar to say running', async () => /AgentLS main: running/.test(await statusBarText(page!)), 15_000);
    await page.screenshot({ path: path.join(OUTPUT, 'running.png') });
    await stopFromTheTranscript(page, frame, dirs.workspace);
    const receipt = frame.locator('.turn[data-status="cancelled"] .turn-footer .receipt');
    await receipt.waitFor({ state: 'visible', timeout: 30_000 });
    const receiptText = (await receipt.textContent()) ?? '';
    if (!/Cancelled: aborted exec_command; killed \d+ process(es)?, none survived\./.test(receiptText)) {
      throw new Error(`unexpected receipt: ${receiptText}`);
    }
    if (processesWith(SLEEP).length > 0) {
      throw new Error(`the sleep outlived the cancelled turn: ${processesWith(SLEEP).join(', ')}`);
    }
    await waitFor('the status bar to say cancelled', async () => /AgentLS main: cancelled/.test(await statusBarText(page!)), 15_000);
    const toolState = await frame.locator('.entry.tool[data-call="call_sleep"] .state').textContent();
    log(`cancelled: "${receiptText}"; tool call: ${toolState}; the sleep is gone; status bar: ${await statusBarText(page)}`);
    await waitFor('the notifications to close', async () => (await toastTexts(page!)).length === 0, 15_000);

    // 3. The screenshot for the docs.
    await page.screenshot({ path: path.join(OUTPUT, 'vscode-transcript.png') });

    // 4. Fork: a second transcript beside main; Close Pane closes it.
    await runCommand(page, 'AgentLS: Fork');
    const fork = await transcriptFrame(page, 'fork-1');
    await fork.locator('.notice').filter({ hasText: /Forked: \d+ conversation items? copied/ }).waitFor({ timeout: 20_000 });
    const inherited = fork.locator('.earlier').filter({ hasText: 'What this fork inherited' });
    await inherited.waitFor({ timeout: 20_000 });
    const inheritedText = (await inherited.textContent()) ?? '';
    if (!inheritedText.includes('All done: this answer arrived in pieces.') || !inheritedText.includes('Run the sleeper')) {
      throw new Error(`the fork does not show what it inherited: ${inheritedText}`);
    }
    await fork.locator('button[data-action="closePane"]').waitFor({ state: 'visible', timeout: 10_000 });
    const tabs = await fork.evaluate(
      () => [...document.querySelectorAll<HTMLElement>('.tabs button')].map((tab) => `${tab.dataset.pane}:${tab.getAttribute('aria-selected')}`),
      undefined,
    );
    if (JSON.stringify(tabs) !== JSON.stringify(['main:false', 'fork-1:true'])) {
      throw new Error(`the fork is not a tab beside main's: ${JSON.stringify(tabs)}`);
    }
    await page.screenshot({ path: path.join(OUTPUT, 'fork.png') });
    log('fork-1 open in a tab beside main');
    await runCommand(page, 'AgentLS: Close Pane');
    await waitFor(
      'the fork transcript to close',
      async () => !(await Promise.all(page!.frames().map((f) => f.evaluate(() => document.body?.dataset.pane, undefined).catch(() => undefined)))).includes('fork-1'),
      20_000,
      100,
    );
    log('fork closed');

    // 5. A new session, then the first one back from AgentLS: Resume Session….
    await runCommand(page, 'AgentLS: New Session');
    await frame.locator('.notice').filter({ hasText: 'New session' }).waitFor({ timeout: 20_000 });
    await runCommand(page, 'AgentLS: Resume Session…');
    const pick = page.locator('.quick-input-list .monaco-list-row').filter({ hasText: 'What does this project do?' }).first();
    await pick.waitFor({ state: 'visible', timeout: 20_000 });
    const pickText = (await pick.textContent()) ?? '';
    if (!/2 turns/.test(pickText) || !/ago|just now/.test(pickText)) {
      throw new Error(`the quick pick does not show age and turns: ${pickText}`);
    }
    await pick.click();
    const resumed = frame.locator('.earlier').filter({ hasText: 'Resumed “What does this project do?” (2 turns)' });
    await resumed.waitFor({ timeout: 20_000 });
    const resumedText = (await resumed.textContent()) ?? '';
    if (!resumedText.includes('All done: this answer arrived in pieces.') || !resumedText.includes('sleep 300')) {
      throw new Error(`the resumed transcript is not the old one: ${resumedText}`);
    }
    await page.screenshot({ path: path.join(OUTPUT, 'resumed.png') });
    log('session resumed from the picker; its transcript is back');

    // 6. Reload the window in the middle of a turn: the turn goes on in the rebuilt transcript.
    await ask(page, 'Count slowly');
    await frame.waitForFunction(
      () => (document.querySelector('.turn[data-status="running"] .entry.message')?.textContent ?? '').includes('Counting'),
      undefined,
      { timeout: 30_000, polling: 50 },
    );
    await fake.waitReached('slow');
    const before = agentlsServer(dirs.workspace);
    await runCommand(page, 'Developer: Reload Window');
    await page.locator('.monaco-workbench').waitFor({ state: 'detached', timeout: 30_000 }).catch(() => undefined);
    await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: 60_000 });
    log('window reloaded');
    const rebuilt = await transcriptFrame(page);
    const streamed = (await rebuilt.waitForFunction(
      () => {
        const text = document.querySelector('.turn[data-status="running"] .entry.message')?.textContent ?? '';
        return text.includes('Counting') ? text : false;
      },
      undefined,
      { timeout: 60_000, polling: 50 },
    )) as { jsonValue(): Promise<string> };
    const partialAfterReload = await streamed.jsonValue();
    if ((await rebuilt.locator('.earlier').filter({ hasText: 'Resumed “What does this project do?”' }).count()) !== 1) {
      throw new Error('the rebuilt transcript lost the resumed conversation');
    }
    const after = agentlsServer(dirs.workspace);
    if (before === undefined || after !== before) {
      throw new Error(`the server did not outlive the window: before ${before}, after ${after}`);
    }
    fake.release('slow');
    await rebuilt.locator('.turn[data-status="completed"] .entry.message').filter({ hasText: 'Done counting.' }).waitFor({ timeout: 30_000 });
    const finished = (await rebuilt.locator('.turn[data-status="completed"] .entry.message').filter({ hasText: 'Counting' }).first().textContent()) ?? '';
    if (finished.trim() !== SLOW) {
      throw new Error(`the turn did not finish whole in the rebuilt transcript: ${JSON.stringify(finished)}`);
    }
    await page.screenshot({ path: path.join(OUTPUT, 'reloaded.png') });
    log(`reloaded mid-turn: the rebuilt transcript had "${partialAfterReload}", then the whole answer (server pid ${after})`);

    await approvals(page, rebuilt, fake, dirs.workspace);
    await stopButton(page, rebuilt, fake);
    await editsThroughTheEditor(page, rebuilt, fake, dirs.workspace);
    // 9. MCP servers: the user's runs; the project's asks first.
    fs.writeFileSync(path.join(dirs.workspace, '.mcp.json'), JSON.stringify({ mcpServers: { proj: MCP_FIXTURE } }));
    await runCommand(page, 'AgentLS: Restart Server');
    const consent = notification(page, "asks to start the MCP server 'proj'");
    await consent.waitFor({ state: 'visible', timeout: 30_000 });
    await consent.getByRole('button', { name: 'Allow', exact: true }).click({ timeout: 10_000 });
    log('allowed the project MCP server');
    const rows = page.locator('.quick-input-list .monaco-list-row');
    await waitFor(
      'AgentLS: MCP Servers to list fx and proj as ready',
      async () => {
        await runCommand(page!, 'AgentLS: MCP Servers');
        await rows.filter({ hasText: 'proj' }).first().waitFor({ state: 'visible', timeout: 20_000 });
        const texts = await page!.evaluate(
          () => [...document.querySelectorAll('.quick-input-list .monaco-list-row')].map((row) => (row as HTMLElement).innerText),
          undefined,
        );
        // A row reads " fxready · 7 tools · options, stdio\n<command>": label, then description.
        const ready = ['fx', 'proj'].every((name) => texts.some((text) => text.trim().startsWith(`${name}ready · `)));
        if (!ready) {
          log(`MCP servers not ready yet: ${JSON.stringify(texts)}`);
          await page!.keyboard.press('Escape');
        }
        return ready;
      },
      30_000,
      200,
    );
    await page.screenshot({ path: path.join(OUTPUT, 'mcp-servers.png') });
    await rows.filter({ hasText: 'proj' }).first().click();
    await rows.filter({ hasText: 'Show Tools' }).first().click({ timeout: 10_000 });
    await rows.filter({ hasText: 'notes.write' }).first().waitFor({ state: 'visible', timeout: 10_000 });
    await page.screenshot({ path: path.join(OUTPUT, 'mcp-tools.png') });
    await page.keyboard.press('Escape');
    log('AgentLS: MCP Servers lists fx and proj, ready, and the tools of proj');
    await wrongBaseUrl(page, rebuilt, dirs, fake.baseUrl);
    for (const { docs, run } of DOCS_SCREENSHOTS) {
      if (process.env.AGENTLS_UPDATE_SCREENSHOT === '1' || !fs.existsSync(docs)) {
        fs.mkdirSync(path.dirname(docs), { recursive: true });
        fs.copyFileSync(run, docs);
        log(`screenshot copied to ${path.relative(REPO_DIR, docs)}`);
      }
    }
    if (browserErrors.length > 0) {
      log(`page errors (not failing the run): ${browserErrors.slice(0, 5).join(' | ')}`);
    }
    log(`passed; screenshots in ${path.relative(REPO_DIR, OUTPUT)}`);
  } catch (error) {
    if (page !== undefined) {
      await page.screenshot({ path: path.join(OUTPUT, 'failure.png') }).catch(() => undefined);
    }
    fs.writeFileSync(path.join(OUTPUT, 'code-server.log'), codeServer.output.join(''));
    console.error(`e2e failed; see ${OUTPUT} and the logs under ${dirs.userData}/logs`);
    throw error;
  } finally {
    await browser.close().catch(() => undefined);
    await stopCodeServer(codeServer.child);
    await fake.stop();
    for (const pid of [...processesWith(SLEEP), ...processesWith(STOPPED)]) {
      process.kill(pid, 'SIGKILL');
    }
  }
  // The server outlives a window by design (scenario 6): LINGER seconds after the last one left.
  await waitFor(
    'the agentls server to exit after code-server',
    () => agentlsProcesses(dirs.workspace).length === 0,
    (LINGER + 15) * 1000,
    100,
  ).catch(() => {
    throw new Error(`agentls processes outlived code-server: ${agentlsProcesses(dirs.workspace).join(', ')}`);
  });
  fs.rmSync(root, { recursive: true, force: true });
}

/** The approval dialog that shows `detail`: what it says, then press `button`. */
async function answerApproval(page: Page, detail: string, button: string): Promise<string> {
  const dialog = page.locator('.monaco-dialog-box').filter({ hasText: detail });
  await dialog.waitFor({ state: 'visible', timeout: 30_000 });
  const text = (await dialog.textContent()) ?? '';
  await dialog.getByRole('button', { name: button, exact: true }).click({ timeout: 10_000 });
  await dialog.waitFor({ state: 'hidden', timeout: 10_000 });
  return text;
}

/** 7. Allow once, allow for this session, a patch in the diff editor, deny with a reason. */
async function approvals(page: Page, frame: Frame, fake: FakeModel, workspace: string): Promise<void> {
  await focusEditor(page);
  await ask(page, 'Run the approved commands');
  const once = await answerApproval(page, '$ echo e2e-once', 'Allow once');
  if (!once.includes('AgentLS (main) wants to: Running `echo e2e-once`')) {
    throw new Error(`the dialog does not say what: ${once}`);
  }
  await answerApproval(page, '$ echo e2e-session', 'Allow for this session');
  // The same command again runs without a question; the patch asks next.
  await answerApproval(page, 'Changes notes.txt (+1 −0).', 'Show Diff');
  const diffEditor = page.locator('.monaco-diff-editor').filter({ hasText: 'approved by the e2e run' });
  await diffEditor.first().waitFor({ state: 'visible', timeout: 20_000 });
  const tab = page.locator('.tab').filter({ hasText: 'notes.txt (patch to approve)' });
  await tab.first().waitFor({ state: 'visible', timeout: 10_000 });
  await page.screenshot({ path: path.join(OUTPUT, 'approval-diff.png') });
  log('the patch is open in the diff editor');
  await clickNotification(page, 'wants to: Editing notes.txt (see the diff)', 'Allow once');
  await answerApproval(page, '$ touch denied.txt', 'Deny');
  const reason = page.locator('.quick-input-widget').filter({ hasText: 'The agent reads this' });
  await reason.waitFor({ state: 'visible', timeout: 20_000 });
  await page.keyboard.type('not in the e2e workspace');
  await page.keyboard.press('Enter');
  await frame.locator('.turn[data-status="completed"]').filter({ hasText: 'Approvals done.' }).waitFor({ timeout: 30_000 });
  const outputs = ((await fake.waitForRequests(9)).at(-1)?.input ?? [])
    .filter((item) => item.type === 'function_call_output')
    .map((item) => ({ call: item.call_id, output: String(item.output) }));
  const output = (call: string): string => outputs.find((item) => item.call === call)?.output ?? '';
  if (!output('call_once').includes('e2e-once') || !output('call_again').includes('e2e-session')) {
    throw new Error(`the allowed commands did not run: ${JSON.stringify(outputs)}`);
  }
  if (!/denied.*not in the e2e workspace/.test(output('call_denied'))) {
    throw new Error(`the model did not read the reason: ${output('call_denied')}`);
  }
  if (fs.readFileSync(path.join(workspace, 'notes.txt'), 'utf8') !== 'approved by the e2e run\n') {
    throw new Error('the approved patch was not applied');
  }
  if (fs.existsSync(path.join(workspace, 'denied.txt'))) {
    throw new Error('the denied command ran');
  }
  log('approvals: once, for the session, a patch from its diff, a denial with a reason');
}

/** Keyboard focus in the workbench (not in a webview, which keeps its keys): app.py's editor. */
async function focusEditor(page: Page): Promise<void> {
  // Its tab when it has one: a file the agent just created re-renders the
  // explorer's rows under the pointer, and a webview may hold the keyboard.
  const tab = page.locator('.tabs-container .tab').filter({ hasText: 'app.py' }).first();
  if ((await tab.count()) > 0) {
    await tab.click({ timeout: 20_000 });
  } else {
    await page.locator('.explorer-folders-view .monaco-list-row').filter({ hasText: 'app.py' }).first().click({ timeout: 20_000 });
  }
  const editor = page.locator('.monaco-editor .view-lines').filter({ hasText: 'def greet' }).first();
  await editor.waitFor({ state: 'visible', timeout: 20_000 });
  await editor.click();
}

/** 8. The Stop button of a running command: it dies, the turn goes on. */
async function stopButton(page: Page, frame: Frame, fake: FakeModel): Promise<void> {
  await focusEditor(page);
  await ask(page, 'Run the long command');
  await answerApproval(page, `sleep ${STOPPED}`, 'Allow once');
  await waitFor('the long command to run', () => processesWith(`sleep\0${STOPPED}`).length > 0, 30_000);
  const entry = frame.locator('.entry.tool[data-call="call_stop"]');
  await entry.locator('button.stop').click({ timeout: 20_000 });
  await frame.locator('.turn[data-status="completed"]').filter({ hasText: 'Went on after the stop.' }).waitFor({ timeout: 30_000 });
  if (processesWith(STOPPED).length > 0) {
    throw new Error(`the stopped command is still running: ${processesWith(STOPPED).join(', ')}`);
  }
  const state = await entry.getAttribute('data-status');
  const output = ((await fake.waitForRequests(11)).at(-1)?.input ?? []).find((item) => item.call_id === 'call_stop' && item.type === 'function_call_output');
  if (state !== 'cancelled' || !String(output?.output).startsWith('Cancelled by the user')) {
    throw new Error(`the stop did not reach the model as a cancel: ${state} ${JSON.stringify(output)}`);
  }
  await page.screenshot({ path: path.join(OUTPUT, 'stopped.png') });
  log('the Stop button stopped the command; the turn went on');
}

/**
 * 9. The agent's patch to the open app.py arrives through the editor: the
 * editor shows it, with no "file changed on disk", and saves it; the
 * transcript shows the diff with Open diff. Then review mode: the patch
 * waits in the diff editor, and Reject (with a reason) leaves the file as it was.
 */
async function editsThroughTheEditor(page: Page, frame: Frame, fake: FakeModel, workspace: string): Promise<void> {
  const file = path.join(workspace, 'app.py');
  await focusEditor(page);
  await ask(page, 'Greet politely');
  await answerApproval(page, 'Changes app.py (+1 −1).', 'Allow once');
  await frame.locator('.turn[data-status="completed"]').filter({ hasText: 'Edited.' }).waitFor({ timeout: 30_000 });
  await page.locator('.monaco-editor .view-lines').filter({ hasText: 'Hello, {name}!' }).first().waitFor({ state: 'visible', timeout: 20_000 });
  await waitFor('app.py to be saved with the edit', () => fs.readFileSync(file, 'utf8').includes(GREETED), 20_000, 100);
  const dirty = await page.locator('.tabs-container .tab.dirty').filter({ hasText: 'app.py' }).count();
  const onDisk = await page.locator('.monaco-dialog-box, .notifications-toasts').filter({ hasText: /newer|changed on disk/i }).count();
  if (dirty > 0 || onDisk > 0) {
    throw new Error(`after the agent's edit: ${dirty} dirty app.py tab(s), ${onDisk} "changed on disk" message(s)`);
  }
  const diff = frame.locator('.entry.tool[data-call="call_edit"] details.diff');
  await diff.waitFor({ state: 'visible', timeout: 10_000 });
  await diff.locator('button.open-diff').click({ timeout: 10_000 });
  await page.locator('.tab').filter({ hasText: 'app.py (agent edit)' }).first().waitFor({ state: 'visible', timeout: 20_000 });
  await page.screenshot({ path: path.join(OUTPUT, 'edit-diff.png') });
  log('the edit went through the open editor, was saved, and its diff opens from the transcript');

  await runCommand(page, 'AgentLS: Toggle Review Mode');
  await notification(page, 'review mode on').first().waitFor({ state: 'visible', timeout: 20_000 });
  await focusEditor(page);
  await ask(page, 'Reword the greeting');
  await page.locator('.tab').filter({ hasText: 'app.py (patch to review)' }).first().waitFor({ state: 'visible', timeout: 30_000 });
  await page.screenshot({ path: path.join(OUTPUT, 'review.png') });
  await clickNotification(page, 'review — Editing app.py', 'Reject');
  const reason = page.locator('.quick-input-widget').filter({ hasText: 'The agent reads this' });
  await reason.waitFor({ state: 'visible', timeout: 20_000 });
  await page.keyboard.type('keep the exclamation');
  await page.keyboard.press('Enter');
  await frame.locator('.turn[data-status="completed"]').filter({ hasText: 'Rejected.' }).waitFor({ timeout: 30_000 });
  const output = ((await fake.waitForRequests(15)).at(-1)?.input ?? []).find(
    (item) => item.call_id === 'call_review' && item.type === 'function_call_output',
  );
  if (!String(output?.output).includes('keep the exclamation') || !fs.readFileSync(file, 'utf8').includes(GREETED)) {
    throw new Error(`the rejected patch: ${JSON.stringify(output)}; app.py: ${fs.readFileSync(file, 'utf8')}`);
  }
  log('review mode: the patch waited in the diff editor; Reject left app.py as it was and the model read why');
}

/** The transcript is a view in the secondary side bar, not an editor tab. */
async function inSecondarySideBar(page: Page): Promise<void> {
  const bar = page.locator('.part.auxiliarybar');
  await bar.waitFor({ state: 'visible', timeout: 20_000 });
  const placed = await waitFor(
    'the transcript webview over the secondary side bar',
    () =>
      page.evaluate(() => {
        const area = document.querySelector('.part.auxiliarybar')?.getBoundingClientRect();
        if (area === undefined) {
          return undefined;
        }
        // Webviews are laid over their view's area (not inside its DOM).
        const inside = [...document.querySelectorAll('iframe.webview')].some((frame) => {
          const box = frame.getBoundingClientRect();
          return box.width > 0 && box.left >= area.left - 1 && box.right <= area.right + 1 && box.top >= area.top - 1;
        });
        return inside ? (document.querySelector('.part.auxiliarybar') as HTMLElement).innerText : undefined;
      }, undefined),
    20_000,
    100,
  );
  if (!/AGENTLS|AgentLS|Transcript/i.test(placed)) {
    throw new Error(`the secondary side bar does not show the AgentLS view: ${JSON.stringify(placed)}`);
  }
  if ((await page.locator('.tabs-container .tab').filter({ hasText: 'AgentLS: main' }).count()) !== 0) {
    throw new Error('the transcript opened an editor tab too');
  }
}

/** A code block's Copy puts its code on the clipboard (read back as the workbench would paste it). */
async function copyCodeBlock(page: Page, frame: Frame): Promise<void> {
  const copy = frame.locator('.turn .entry.message .code-block button[data-code-action="copy"]').first();
  await copy.click({ timeout: 10_000 });
  await frame.locator('.code-block button[data-code-action="copy"][data-done="true"]').first().waitFor({ timeout: 10_000 });
  const pasted = await waitFor(
    'the code on the clipboard',
    async () => {
      const text = await page.evaluate(() => navigator.clipboard.readText().catch((error: Error) => `(${error.message})`), undefined);
      return text === 'print("hello from the fake model")' ? text : undefined;
    },
    10_000,
    100,
  );
  const colored = await frame.evaluate(() => document.querySelectorAll('.code-block pre code [class^="hljs-"]').length, undefined);
  if (colored === 0) {
    throw new Error('the code block has no syntax colours');
  }
  log(`Copy put ${JSON.stringify(pasted)} on the clipboard; the block has ${colored} coloured spans`);
}

/** The server's log file (a server started through `serve --reattach` writes it beside its socket). */
function serverLog(workspace: string): string {
  const found = spawnSync(
    PYTHON,
    ['-c', 'import sys; from pathlib import Path; from agentls.sessions.paths import socket_path; print(socket_path(Path(sys.argv[1])).with_suffix(".log"))', workspace],
    { encoding: 'utf8' },
  );
  return found.stdout.trim();
}

/**
 * 2. During the turn nothing covers the transcript: its input box takes
 * text and its Stop button cancels the turn's request ($/cancelRequest).
 */
async function stopFromTheTranscript(page: Page, frame: Frame, workspace: string): Promise<void> {
  const toasts = await toastTexts(page);
  if (toasts.some((text) => text.includes('AgentLS'))) {
    throw new Error(`a notification covers the shown transcript: ${JSON.stringify(toasts)}`);
  }
  const input = frame.locator('#prompt');
  await input.click({ timeout: 10_000 });
  await page.keyboard.type('typed while it runs');
  if ((await input.inputValue()) !== 'typed while it runs') {
    throw new Error(`the input box did not take the text: ${JSON.stringify(await input.inputValue())}`);
  }
  // Not Ctrl+A: a webview hands that key to the workbench, which selects the editor's text.
  await input.fill('');
  const logFile = serverLog(workspace);
  const cancelsBefore = (fs.readFileSync(logFile, 'utf8').match(/\$\/cancelRequest for request/g) ?? []).length;
  await frame.locator('button[data-action="stop"]').click({ timeout: 10_000 });
  await waitFor(
    'the server to log the $/cancelRequest',
    () => (fs.readFileSync(logFile, 'utf8').match(/\$\/cancelRequest for request/g) ?? []).length > cancelsBefore,
    30_000,
    100,
  );
  if (!fs.readFileSync(path.join(workspace, 'app.py'), 'utf8').includes('def greet')) {
    throw new Error('typing into the transcript changed app.py');
  }
  log(`typed into the input box during the turn; Stop sent $/cancelRequest (${path.basename(logFile)})`);
}

/** The extension's own log (the AgentLS output channel, as code-server writes it). */
function extensionLog(dirs: Dirs): string {
  const files: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        walk(full);
      } else if (entry.name.endsWith('AgentLS.log')) {
        files.push(full);
      }
    }
  };
  walk(path.join(dirs.userData, 'logs'));
  return files.map((file) => fs.readFileSync(file, 'utf8')).join('\n');
}

/** 10. A wrong base URL: one retry line, then the error with the button that opens the setting. */
async function wrongBaseUrl(page: Page, frame: Frame, dirs: Dirs, baseUrl: string): Promise<void> {
  const sent = (extensionLog(dirs).match(/settings sent to the server: baseUrl/g) ?? []).length;
  await replaceInUserSettings(page, dirs, baseUrl, `http://127.0.0.1:${await freePort()}/v1`);
  await waitFor(
    'the new base URL to reach the server',
    () => (extensionLog(dirs).match(/settings sent to the server: baseUrl/g) ?? []).length > sent,
    20_000,
    100,
  );
  await focusEditor(page);
  await ask(page, 'Is anyone there?');
  const failed = frame.locator('.turn[data-status="failed"]').filter({ hasText: 'Is anyone there?' });
  await failed.waitFor({ timeout: 60_000 });
  const retries = await failed.locator('.entry.retry').count();
  const retryText = (await failed.locator('.entry.retry .text').first().textContent()) ?? '';
  if (retries !== 1 || !/^Cannot reach the model: gave up after \d+ attempts\.$/.test(retryText)) {
    throw new Error(`the retries are not one line: ${retries} lines, ${JSON.stringify(retryText)}`);
  }
  await page.screenshot({ path: path.join(OUTPUT, 'wrong-base-url.png') });
  await failed.locator('.turn-footer .advice button').filter({ hasText: 'Open agentls.baseUrl' }).click({ timeout: 10_000 });
  await waitFor(
    'the settings editor on agentls.baseUrl',
    () =>
      page.evaluate(
        () => document.querySelector('.settings-editor .setting-item-contents')?.textContent?.includes('Base Url') === true || undefined,
        undefined,
      ),
    20_000,
    100,
  );
  log(`a wrong base URL: "${retryText}"; "Open agentls.baseUrl" opened the setting`);
}

/** Stop code-server and everything it started (its process group). */
async function stopCodeServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.pid === undefined) {
    return;
  }
  const exited = new Promise((resolve) => child.once('exit', resolve));
  process.kill(-child.pid, 'SIGTERM');
  const stopped = await Promise.race([exited.then(() => true), waitFor('code-server to exit', () => child.exitCode !== null, 10_000).catch(() => false)]);
  if (!stopped) {
    process.kill(-child.pid, 'SIGKILL');
  }
}

/** The pid of the long-lived server (`serve --listen`) of the workspace, if one runs. */
function agentlsServer(workspace: string): number | undefined {
  return agentlsProcesses(workspace).find((pid) => {
    try {
      return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes('--listen');
    } catch {
      return false;
    }
  });
}

/** Live agentls servers whose working directory is our workspace. */
function agentlsProcesses(workspace: string): number[] {
  const pids: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) {
      continue;
    }
    try {
      const cwd = fs.readlinkSync(`/proc/${entry}/cwd`);
      const cmdline = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (cwd === workspace && cmdline.includes('agentls') && pidAlive(Number(entry))) {
        pids.push(Number(entry));
      }
    } catch {
      // gone, or not ours to read
    }
  }
  return pids;
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error instanceof Error ? error.stack : error);
    process.exit(1);
  },
);
