/**
 * The agentls server as a `vscode-languageclient` LanguageClient: started
 * over stdio, restarted after a crash (and the user told when it gives up),
 * wrapped in the small `Client` interface the controller uses.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import * as os from 'node:os';
import * as vscode from 'vscode';
import {
  CloseAction,
  ErrorAction,
  LanguageClient,
  RevealOutputChannelOn,
  State,
  WorkDoneProgress,
} from 'vscode-languageclient/node';
import type { CancellationToken, Client, Disposable } from './client';
import { type AgentCapabilities, type AgentEvent, Method, type ProgressToken, type WorkDoneProgress as Progress } from './protocol';
import { RestartPolicy } from './restart';
import {
  type ServerCommand,
  type ServerCommandProbes,
  type Settings,
  initializationOptions,
  resolveServerCommand,
} from './settings';

/** `Client` over a LanguageClient. */
export class LanguageClientAdapter implements Client {
  constructor(private readonly client: LanguageClient) {}

  request<R>(method: string, params: unknown, token?: CancellationToken): Promise<R> {
    // The token goes to vscode-jsonrpc, which sends $/cancelRequest when it fires.
    return (
      token !== undefined
        ? this.client.sendRequest(method, params, token as vscode.CancellationToken)
        : this.client.sendRequest(method, params)
    ) as Promise<R>;
  }

  notify(method: string, params: unknown): Promise<void> {
    return this.client.sendNotification(method, params);
  }

  onEvent(handler: (event: AgentEvent) => void): Disposable {
    return this.client.onNotification(Method.event, handler);
  }

  onProgress(token: ProgressToken, handler: (value: Progress) => void): Disposable {
    return this.client.onProgress(WorkDoneProgress.type, token, (value) => handler(value as Progress));
  }

  capabilities(): AgentCapabilities | undefined {
    const experimental = this.client.initializeResult?.capabilities.experimental as
      | { agentls?: AgentCapabilities }
      | undefined;
    return experimental?.agentls;
  }
}

export interface ServerHooks {
  settings(): Settings;
  workspace(): string | undefined;
  probes: ServerCommandProbes;
  onEvent(event: AgentEvent): void;
  /** The server is up (first start or a restart). */
  onRunning(): void;
  /** The server went away (crash, restart or stop). */
  onStopped(reason: string): void;
}

export class AgentServer implements vscode.Disposable {
  readonly output: vscode.LogOutputChannel;
  readonly client: LanguageClient;
  readonly adapter: LanguageClientAdapter;
  private readonly policy = new RestartPolicy();
  private readonly subscriptions: vscode.Disposable[] = [];
  private process: ChildProcess | undefined;
  private command: ServerCommand | undefined;
  private stopping = false;

  constructor(private readonly hooks: ServerHooks) {
    this.output = vscode.window.createOutputChannel('AgentLS', { log: true });
    this.client = new LanguageClient('agentls', 'AgentLS', () => this.spawnServer(), {
      documentSelector: [],
      outputChannel: this.output,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      initializationOptions: () => initializationOptions(hooks.settings(), hooks.workspace()),
      initializationFailedHandler: (error) => {
        this.output.error(`initialize failed: ${error instanceof Error ? error.message : String(error)}`);
        return false;
      },
      errorHandler: {
        error: (_error, _message, count) => ({
          action: count !== undefined && count <= 3 ? ErrorAction.Continue : ErrorAction.Shutdown,
          handled: true,
        }),
        closed: () => {
          if (this.stopping) {
            return { action: CloseAction.DoNotRestart, handled: true };
          }
          if (this.policy.crashed()) {
            this.output.warn(`The server stopped unexpectedly; restarting it (crash ${this.policy.recentCrashes}).`);
            return { action: CloseAction.Restart, handled: true };
          }
          void this.gaveUp();
          return { action: CloseAction.DoNotRestart, handled: true };
        },
      },
    });
    this.adapter = new LanguageClientAdapter(this.client);
    this.subscriptions.push(
      this.client.onNotification(Method.event, (event: AgentEvent) => hooks.onEvent(event)),
      this.client.onDidChangeState(({ oldState, newState }) => {
        if (newState === State.Running) {
          hooks.onRunning();
        } else if (oldState === State.Running) {
          hooks.onStopped('The agent server stopped: its turns ended. A new server starts with a fresh session.');
        }
      }),
    );
  }

  get running(): boolean {
    return this.client.state === State.Running;
  }

  /** How the server was last started. */
  get lastCommand(): ServerCommand | undefined {
    return this.command;
  }

  async start(): Promise<boolean> {
    this.stopping = false;
    try {
      await this.client.start();
      return true;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.output.error(`The server did not start: ${message}`);
      void vscode.window
        .showErrorMessage(`AgentLS: the server did not start. ${message}`, 'Show Server Log', 'Open Settings')
        .then((choice) => this.followUp(choice));
      return false;
    }
  }

  /** Stop (if running) and start again, e.g. after the server command changed. */
  async restart(): Promise<boolean> {
    this.policy.reset();
    await this.stop();
    return this.start();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    const child = this.process;
    try {
      if (this.client.needsStop()) {
        await this.client.stop(3000);
      }
    } catch (error) {
      this.output.warn(`stopping the server: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      if (child !== undefined && child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
      }
    }
  }

  showLog(): void {
    this.output.show(true);
  }

  dispose(): void {
    for (const subscription of this.subscriptions) {
      subscription.dispose();
    }
    this.output.dispose();
  }

  private async spawnServer(): Promise<ChildProcess> {
    const settings = this.hooks.settings();
    const command = await resolveServerCommand(settings, this.hooks.probes);
    this.command = command;
    const line = [command.command, ...command.args].join(' ');
    this.output.info(`Starting the server (from ${command.source}): ${line}`);
    const child = spawn(command.command, command.args, {
      cwd: this.hooks.workspace() ?? os.homedir(),
      env: { ...process.env, PYTHONUNBUFFERED: '1' },
      stdio: 'pipe',
    });
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', () => resolve());
      child.once('error', (error: NodeJS.ErrnoException) => {
        const hint =
          error.code === 'ENOENT'
            ? `${command.command} was not found. Install agentls, or set agentls.serverCommand or agentls.pythonPath.`
            : error.message;
        reject(new Error(hint));
      });
    });
    child.on('error', (error) => this.output.warn(`server process: ${error.message}`));
    child.on('exit', (code, signal) => {
      this.output.info(`The server exited (${signal !== null ? `signal ${signal}` : `code ${code}`}).`);
    });
    this.process = child;
    return child;
  }

  private async gaveUp(): Promise<void> {
    const message =
      `AgentLS: the server crashed ${this.policy.recentCrashes} times in 3 minutes and will not be ` +
      'restarted. The server log says why.';
    this.output.error(message);
    const choice = await vscode.window.showErrorMessage(message, 'Show Server Log', 'Restart Server');
    this.followUp(choice);
  }

  private followUp(choice: string | undefined): void {
    if (choice === 'Show Server Log') {
      this.showLog();
    } else if (choice === 'Restart Server') {
      void this.restart();
    } else if (choice === 'Open Settings') {
      void vscode.commands.executeCommand('workbench.action.openSettings', 'agentls');
    }
  }
}
