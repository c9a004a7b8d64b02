/** Entry point: wires the server, the controller, the views and the commands together. */

import * as vscode from 'vscode';
import { LastEditor, insertAtCursor, revealLines, runAdvice } from './actions';
import { VsCodeApprovalUi } from './approvalUi';
import { askArgument } from './askArgument';
import { askApproval } from './approvals';
import { AgentController } from './controller';
import type { AdviceAction } from './advice';
import { AgentServer } from './languageClient';
import { showMcpServers } from './mcp';
import { TranscriptPanels } from './panel';
import { ReviewSwitch } from './review';
import { Method } from './protocol';
import { findExecutable, hasAgentls } from './serverCommand';
import {
  SECTION,
  type Settings,
  clearedUntilRestart,
  configurationChange,
  mcpChanged,
  needsRestart,
  readSettings,
  restartReason,
} from './settings';
import { AgentStatusBar, showServerStatus } from './statusBar';
import { VsCodeUi, linesOf } from './ui';

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

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const advise = (action: AdviceAction): void => void runAdvice(action, context.extensionUri);
  const ui = new VsCodeUi(advise);
  const approvalUi = new VsCodeApprovalUi(workspacePath);
  context.subscriptions.push(approvalUi);
  let settings = currentSettings();
  const events: { controller?: AgentController } = {};
  const agentServer = new AgentServer({
    settings: currentSettings,
    workspace: workspacePath,
    probes: {
      pythonExtensionInterpreter,
      hasAgentls,
      findExecutable: (command, cwd) => findExecutable(command, process.env, cwd),
    },
    onRunning: () => {
      settings = currentSettings();
      const controller = events.controller;
      controller?.serverStarted({ effort: settings.effort, fastMode: settings.fastMode });
      // Which AGENTS.md files the session follows, in the output channel.
      void controller?.instructionsSummary().then((line) => agentServer.output.info(line));
      const capabilities = agentServer.adapter.capabilities();
      if (capabilities?.attached === true) {
        // A server that ran on while this window reloaded: its transcripts come back.
        void controller?.rebuild(capabilities.panes ?? ['main']);
      } else {
        void controller?.offerResume();
      }
    },
    onStopped: (reason) => events.controller?.serverStopped(reason),
    approve: (params) => askApproval(params, approvalUi),
  });
  server = agentServer;
  const controller = new AgentController(agentServer.adapter, ui, {
    effort: settings.effort,
    fastMode: settings.fastMode,
  });
  events.controller = controller;
  context.subscriptions.push(agentServer.adapter.onEvent((event) => controller.handleEvent(event)));
  const lastEditor = new LastEditor();
  const panels = new TranscriptPanels(
    context.extensionUri,
    controller,
    {
      ask: (pane, text) => void controller.submit(pane, text),
      steer: (pane, text) => void controller.steer({ pane, prompt: text }),
      stop: (pane) => void controller.stop({ pane }),
      stopTool: (pane, callId) => void controller.stopTool(pane, callId),
      fork: () => void controller.fork(),
      closePane: (pane) => void controller.closePane({ pane }),
      openDiff: (diff) => void approvalUi.showApplied(diff),
      pickEffort: (pane) => void controller.setEffort({ pane }),
      insert: (text) => void insertAtCursor(text, lastEditor.current),
      copy: (text) => void vscode.env.clipboard.writeText(text),
      reveal: (ref) => void revealLines(ref, vscode.workspace.workspaceFolders?.[0]?.uri),
      advise,
    },
    settings.transcriptLocation,
  );
  ui.visibility = panels;
  const status = new AgentStatusBar(controller, agentServer);
  context.subscriptions.push(agentServer, panels, status, lastEditor);

  // The command's promise goes back to executeCommand: a caller can wait for it.
  const command = (id: string, run: (...args: unknown[]) => unknown): void => {
    context.subscriptions.push(vscode.commands.registerCommand(id, run));
  };
  // With an argument: one of the server's code actions (Ask agentls about this, Fix with agentls).
  command('agentls.ask', async (value) => {
    const argument = askArgument(value);
    if (argument === undefined) {
      return controller.ask({ selection: 'include' });
    }
    const text = argument.uri !== undefined && argument.range !== undefined ? await linesOf(argument.uri, argument.range) : undefined;
    return controller.askFromServer(argument, text);
  });
  command('agentls.askAboutSelection', () => controller.ask({ selection: 'require' }));
  command('agentls.steer', () => controller.steer());
  command('agentls.cancel', () => controller.cancel());
  command('agentls.fork', () => controller.fork());
  // An argument names the pane (a keybinding's `args`); none: the open fork.
  command('agentls.closePane', (pane) => controller.closePane({ pane: typeof pane === 'string' ? pane : undefined }));
  command('agentls.setEffort', () => controller.setEffort());
  command('agentls.toggleFastMode', () => controller.toggleFastMode());
  command('agentls.newSession', () => controller.newSession());
  command('agentls.compact', () => controller.compact());
  command('agentls.resumeSession', () => controller.resumeSession());
  command('agentls.deleteSession', () => controller.deleteSession());
  command('agentls.showTranscript', () => panels.showAll());
  command('agentls.showServerLog', () => agentServer.showLog());
  command('agentls.restartServer', () => agentServer.restart());
  command('agentls.showServerStatus', () => showServerStatus(agentServer, advise));
  command('agentls.mcpServers', () => showMcpServers(agentServer.adapter, ui));
  const review = new ReviewSwitch(agentServer.adapter, settings.review);
  command('agentls.toggleReview', async () => {
    try {
      const on = await review.toggle();
      void vscode.window.showInformationMessage(
        on ? 'AgentLS: review mode on: each patch waits for you in the diff editor.' : 'AgentLS: review mode off.',
      );
    } catch (error) {
      void vscode.window.showErrorMessage(`AgentLS: could not switch review mode: ${String((error as { message?: unknown })?.message ?? error)}`);
    }
  });

  // Settings reach the running server without a reload.
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration(async (event) => {
      if (!event.affectsConfiguration(SECTION)) {
        return;
      }
      const previous = settings;
      const next = currentSettings();
      settings = next;
      if (next.review !== previous.review) {
        review.enabled = next.review;
      }
      panels.setLocation(next.transcriptLocation);
      const offerRestart = async (why: string): Promise<void> => {
        const choice = await vscode.window.showInformationMessage(
          agentServer.running
            ? `AgentLS: ${why}. Restart the server now? Running turns are cancelled.`
            : `AgentLS: ${why}. Start the server with it now?`,
          'Restart Server',
        );
        if (choice === 'Restart Server') {
          await agentServer.restart();
        }
      };
      if (needsRestart(previous, next) || (mcpChanged(previous, next) && agentServer.running)) {
        await offerRestart(needsRestart(previous, next) ? restartReason(previous, next) : 'agentls.mcpServers changed');
        return;
      }
      const change = configurationChange(previous, next);
      if (change === undefined || !agentServer.running) {
        return;
      }
      try {
        await agentServer.adapter.notify(Method.didChangeConfiguration, change);
        agentServer.output.info(`settings sent to the server: ${Object.keys(change.settings.agentls).join(', ')}`);
        const { effort, fastMode } = change.settings.agentls;
        controller.settingsApplied({ effort, fastMode });
      } catch (error) {
        agentServer.output.warn(`could not send the settings: ${String(error)}`);
      }
      // The server takes an empty model or base URL as "no change": back to the default needs a restart.
      const cleared = clearedUntilRestart(previous, next);
      if (cleared.length > 0) {
        const were = cleared.length === 1 ? 'was' : 'were';
        await offerRestart(`${cleared.join(' and ')} ${were} cleared: the server keeps the old value until it restarts`);
      }
    }),
  );

  await agentServer.start();
  await watchPythonInterpreter(context, agentServer);
}

/**
 * When the Python extension's interpreter changes, offer a restart if the
 * server runs on it, or is not running at all (the new one may have agentls).
 */
async function watchPythonInterpreter(context: vscode.ExtensionContext, agentServer: AgentServer): Promise<void> {
  const environments = await pythonEnvironments().catch(() => undefined);
  const changed = environments?.onDidChangeActiveEnvironmentPath;
  if (changed === undefined) {
    return;
  }
  context.subscriptions.push(
    changed(async () => {
      if (agentServer.running && agentServer.lastCommand?.source !== 'Python extension') {
        return;
      }
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
  // A window that reloads (or closes) leaves a --reattach server running: the
  // next window attaches to it, its turns still going. Otherwise stop it.
  if (server?.reattachable === true) {
    await server.detach();
  } else {
    await server?.stop();
  }
  server = undefined;
}
