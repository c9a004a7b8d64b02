/** Entry point: wires the server, the controller, the views and the commands together. */

import { execFile } from 'node:child_process';
import * as vscode from 'vscode';
import { AgentController } from './controller';
import { AgentServer } from './languageClient';
import { TranscriptPanels } from './panel';
import { Method } from './protocol';
import { SECTION, type Settings, configurationChange, needsRestart, readSettings } from './settings';
import { AgentStatusBar } from './statusBar';
import { VsCodeUi } from './ui';

let server: AgentServer | undefined;

function currentSettings(): Settings {
  return readSettings(vscode.workspace.getConfiguration(SECTION));
}

function workspacePath(): string | undefined {
  const folder = vscode.workspace.workspaceFolders?.[0];
  return folder !== undefined && folder.uri.scheme === 'file' ? folder.uri.fsPath : undefined;
}

interface PythonEnvironmentsApi {
  getActiveEnvironmentPath(resource?: vscode.Uri): { path: string };
  resolveEnvironment(path: { path: string } | string): Promise<{ executable?: { uri?: vscode.Uri } } | undefined>;
  onDidChangeActiveEnvironmentPath?: vscode.Event<unknown>;
}

async function pythonEnvironments(): Promise<PythonEnvironmentsApi | undefined> {
  const extension = vscode.extensions.getExtension<{ environments?: PythonEnvironmentsApi }>('ms-python.python');
  if (extension === undefined) {
    return undefined;
  }
  const api = extension.isActive ? extension.exports : await extension.activate();
  return api?.environments;
}

/** The interpreter the Python extension has selected for the workspace, if it is installed. */
async function pythonExtensionInterpreter(): Promise<string | undefined> {
  const environments = await pythonEnvironments();
  if (environments === undefined) {
    return undefined;
  }
  const active = environments.getActiveEnvironmentPath(vscode.workspace.workspaceFolders?.[0]?.uri);
  const resolved = await environments.resolveEnvironment(active);
  return resolved?.executable?.uri?.fsPath ?? active.path;
}

function hasAgentls(python: string): Promise<boolean> {
  return new Promise((resolve) => {
    execFile(python, ['-c', 'import agentls'], { timeout: 15_000 }, (error) => resolve(error === null));
  });
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const ui = new VsCodeUi();
  let settings = currentSettings();
  const events: { controller?: AgentController } = {};
  const agentServer = new AgentServer({
    settings: currentSettings,
    workspace: workspacePath,
    probes: { pythonExtensionInterpreter, hasAgentls },
    onEvent: (event) => events.controller?.handleEvent(event),
    onRunning: () => {
      settings = currentSettings();
      events.controller?.serverStarted({ effort: settings.effort, fastMode: settings.fastMode });
    },
    onStopped: (reason) => events.controller?.serverStopped(reason),
  });
  server = agentServer;
  const controller = new AgentController(agentServer.adapter, ui, {
    effort: settings.effort,
    fastMode: settings.fastMode,
  });
  events.controller = controller;
  const panels = new TranscriptPanels(context.extensionUri, controller, {
    ask: (pane, text) => void controller.submit(pane, text),
    steer: (pane, text) => void controller.steer({ pane, prompt: text }),
    cancel: (pane) => void controller.cancel({ pane }),
    fork: () => void controller.fork(),
    closeFork: () => void controller.closeFork(),
  });
  const status = new AgentStatusBar(controller);
  context.subscriptions.push(agentServer, panels, status);

  const command = (id: string, run: () => unknown): void => {
    context.subscriptions.push(vscode.commands.registerCommand(id, () => void run()));
  };
  command('agentls.ask', () => controller.ask({ selection: 'include' }));
  command('agentls.askAboutSelection', () => controller.ask({ selection: 'require' }));
  command('agentls.steer', () => controller.steer());
  command('agentls.cancel', () => controller.cancel());
  command('agentls.fork', () => controller.fork());
  command('agentls.closeFork', () => controller.closeFork());
  command('agentls.setThinking', () => controller.setThinking());
  command('agentls.toggleFastMode', () => controller.toggleFastMode());
  command('agentls.newSession', () => controller.newSession());
  command('agentls.showTranscript', () => panels.showAll());
  command('agentls.showServerLog', () => agentServer.showLog());
  command('agentls.restartServer', () => agentServer.restart());

  // Settings reach the running server without a reload.
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration(async (event) => {
      if (!event.affectsConfiguration(SECTION)) {
        return;
      }
      const previous = settings;
      const next = currentSettings();
      settings = next;
      if (needsRestart(previous, next)) {
        const choice = await vscode.window.showInformationMessage(
          'AgentLS: the server command changed. Restart the server now? Running turns are cancelled.',
          'Restart Server',
        );
        if (choice === 'Restart Server') {
          await agentServer.restart();
        }
        return;
      }
      const change = configurationChange(previous, next);
      if (change === undefined || !agentServer.running) {
        return;
      }
      try {
        await agentServer.adapter.notify(Method.didChangeConfiguration, change);
        const { effort, fastMode } = change.settings.agentls;
        controller.settingsApplied({ effort, fastMode });
      } catch (error) {
        agentServer.output.warn(`could not send the settings: ${String(error)}`);
      }
    }),
  );

  if (await agentServer.start()) {
    await watchPythonInterpreter(context, agentServer);
  }
}

/** When the server runs on the Python extension's interpreter, offer a restart when it changes. */
async function watchPythonInterpreter(context: vscode.ExtensionContext, agentServer: AgentServer): Promise<void> {
  if (agentServer.lastCommand?.source !== 'Python extension') {
    return;
  }
  const environments = await pythonEnvironments().catch(() => undefined);
  const changed = environments?.onDidChangeActiveEnvironmentPath;
  if (changed === undefined) {
    return;
  }
  context.subscriptions.push(
    changed(async () => {
      const choice = await vscode.window.showInformationMessage(
        'AgentLS: the Python interpreter changed. Restart the server on the new one?',
        'Restart Server',
      );
      if (choice === 'Restart Server') {
        await agentServer.restart();
      }
    }),
  );
}

export async function deactivate(): Promise<void> {
  await server?.stop();
  server = undefined;
}
