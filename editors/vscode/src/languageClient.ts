/**
 * The agentls server behind `vscode-languageclient`: the command is checked
 * before a client exists, and every start (the first, Restart Server, the
 * restart after a crash) creates a fresh LanguageClient on a fresh process,
 * so a failed start never sticks. The user hears of a failure once, in words,
 * and the status says the server is not running.
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
import { type CancellationToken, type Client, type Disposable, notRunningError } from './client';
import {
  type AgentCapabilities,
  type AgentEvent,
  type ApprovalParams,
  type ApprovalResult,
  Method,
  PROTOCOL_VERSION,
  type ProgressToken,
  type WorkDoneProgress as Progress,
} from './protocol';
import { editorDiagnostics } from './diagnostics';
import { applyAndSave } from './edits';
import { RestartPolicy } from './restart';
import {
  type ServerCommand,
  type ServerCommandProbes,
  reattaches,
  resolveServerCommand,
  serverCommandProblem,
  spawnArgs,
} from './serverCommand';
import { type Settings, initializationOptions } from './settings';

/** `Client` over whichever LanguageClient is current; with none, requests fail as "not running". */
export class LanguageClientAdapter implements Client {
  constructor(
    private readonly current: () => LanguageClient | undefined,
    private readonly events: vscode.Event<AgentEvent>,
  ) {}

  request<R>(method: string, params: unknown, token?: CancellationToken): Promise<R> {
    const client = this.current();
    if (client === undefined) {
      return Promise.reject(notRunningError());
    }
    // The token goes to vscode-jsonrpc, which sends $/cancelRequest when it fires.
    return (
      token !== undefined
        ? client.sendRequest(method, params, token as vscode.CancellationToken)
        : client.sendRequest(method, params)
    ) as Promise<R>;
  }

  notify(method: string, params: unknown): Promise<void> {
    const client = this.current();
    return client === undefined ? Promise.reject(notRunningError()) : client.sendNotification(method, params);
  }

  /** Events of every server this extension starts, in arrival order. */
  onEvent(handler: (event: AgentEvent) => void): Disposable {
    return this.events(handler);
  }

  onProgress(token: ProgressToken, handler: (value: Progress) => void): Disposable {
    const client = this.current();
    return client === undefined
      ? { dispose: () => undefined }
      : client.onProgress(WorkDoneProgress.type, token, (value) => handler(value as Progress));
  }

  capabilities(): AgentCapabilities | undefined {
    const experimental = this.current()?.initializeResult?.capabilities.experimental as
      | { agentls?: AgentCapabilities }
      | undefined;
    return experimental?.agentls;
  }
}

/**
 * A LanguageClient that shows no notifications of its own (it would show a
 * failed start with a stack trace, and a second time): it still logs to the
 * output channel, and AgentServer tells the user.
 */
class QuietLanguageClient extends LanguageClient {
  override error(message: string, data?: unknown): void {
    super.error(message, data, false);
  }
}

export type ServerState = 'starting' | 'running' | 'notRunning';

export interface ServerStatus {
  state: ServerState;
  /** Why the server is not running, as told to the user. */
  reason?: string;
}

export interface ServerHooks {
  settings(): Settings;
  workspace(): string | undefined;
  probes: ServerCommandProbes;
  /** The server is up (first start or a restart). */
  onRunning(): void;
  /** A running server went away (crash, restart or stop). */
  onStopped(reason: string): void;
  /** The server asks before a tool call (`agent/requestApproval`). */
  approve(params: ApprovalParams): Promise<ApprovalResult>;
}

/** Tells the server we answer `agent/requestApproval` (else it falls back to window/showMessageRequest). */
const APPROVALS_FEATURE = {
  fillClientCapabilities(capabilities: { experimental?: unknown }): void {
    const experimental = (capabilities.experimental ?? {}) as Record<string, unknown>;
    // diagnostics: we answer agent/diagnostics (src/diagnostics.ts).
    capabilities.experimental = { ...experimental, agentls: { requestApproval: true, diagnostics: true } };
  },
  initialize(): void {},
  getState: () => ({ kind: 'static' as const }),
  clear(): void {},
};

const SETTINGS_ACTIONS = ['Open Settings', 'Restart Server', 'Show Server Log'];

/** One server process and the LanguageClient connected to it; used once, then discarded. */
class ServerConnection {
  process: ChildProcess | undefined;
  /** "exited with code 1" once the process has ended. */
  exit: string | undefined;
  /** The last lines the process wrote to stderr (they say why a start failed). */
  private stderr = '';
  private exited: Promise<void> = Promise.resolve();
  /** Discarded on purpose: its close and state changes are no longer handled. */
  discarded = false;
  readonly subscriptions: Disposable[] = [];

  constructor(
    readonly client: LanguageClient,
    readonly args: string[],
  ) {}

  attach(child: ChildProcess): void {
    this.process = child;
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.exit = signal !== null ? `was killed by ${signal}` : `exited with code ${code}`;
        resolve();
      });
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString()).slice(-2000);
    });
  }

  /** Resolves when the process has exited, or after `ms`. */
  async exitedWithin(ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.exited, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
    clearTimeout(timer);
  }

  /** Why the start failed, in one line: how the process ended and its last stderr line, else the error's message. */
  async failure(error: unknown): Promise<string> {
    if (this.process !== undefined) {
      await this.exitedWithin(2000);
    }
    const lastLine = this.stderr
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '')
      .at(-1);
    if (this.exit !== undefined) {
      return lastLine !== undefined ? `it ${this.exit}: ${lastLine}` : `it ${this.exit}`;
    }
    const message = error instanceof Error ? error.message : String(error);
    return message.split('\n')[0];
  }

  kill(): void {
    const child = this.process;
    if (child !== undefined && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
    }
  }
}

export class AgentServer implements vscode.Disposable {
  readonly output: vscode.LogOutputChannel;
  readonly adapter: LanguageClientAdapter;
  private readonly policy = new RestartPolicy();
  private readonly events = new vscode.EventEmitter<AgentEvent>();
  private readonly statusChanged = new vscode.EventEmitter<ServerStatus>();
  /** The server's state: starting, running, or not running (and why). */
  readonly onDidChangeStatus = this.statusChanged.event;
  private connection: ServerConnection | undefined;
  /** Counts starts and stops: a start overtaken by a later one gives up quietly. */
  private generation = 0;
  private command: ServerCommand | undefined;
  private current: ServerStatus = { state: 'notRunning', reason: 'The server has not been started yet.' };

  constructor(private readonly hooks: ServerHooks) {
    this.output = vscode.window.createOutputChannel('AgentLS', { log: true });
    this.adapter = new LanguageClientAdapter(() => this.connection?.client, this.events.event);
  }

  get status(): ServerStatus {
    return this.current;
  }

  get running(): boolean {
    return this.current.state === 'running';
  }

  /** What to set, when the running server has no API key and no base URL (no model can be reached). */
  get missingCredentials(): string | undefined {
    return this.running ? this.adapter.capabilities()?.missingCredentials : undefined;
  }

  /** How the server was last started. */
  get lastCommand(): ServerCommand | undefined {
    return this.command;
  }

  /** The running server outlives this window (it was started through `--reattach`). */
  get reattachable(): boolean {
    return this.connection !== undefined && reattaches(this.connection.args);
  }

  /** Check the server command, then start a fresh client; false (and the user told why) when it did not start. */
  async start(): Promise<boolean> {
    const generation = ++this.generation;
    this.setStatus({ state: 'starting' });
    const cwd = this.hooks.workspace() ?? os.homedir();
    const command = await resolveServerCommand(this.hooks.settings(), this.hooks.probes);
    const problem = await serverCommandProblem(command, this.hooks.probes, cwd);
    if (generation !== this.generation) {
      return false;
    }
    this.command = command;
    if (problem !== undefined) {
      this.failed(`AgentLS cannot start the server: ${problem}; then run AgentLS: Restart Server.`, SETTINGS_ACTIONS);
      return false;
    }
    const connection = this.connect(command, cwd);
    this.connection = connection;
    try {
      await connection.client.start();
    } catch (error) {
      if (generation !== this.generation) {
        return false;
      }
      this.connection = undefined;
      const why = await connection.failure(error);
      await this.discard(connection);
      this.failed(`AgentLS: the server did not start: ${why}`, SETTINGS_ACTIONS);
      return false;
    }
    return generation === this.generation;
  }

  /** Stop whatever there is (running, starting or failed) and start a fresh client. */
  async restart(): Promise<boolean> {
    this.policy.reset();
    await this.disconnect();
    return this.start();
  }

  async stop(): Promise<void> {
    await this.disconnect();
    this.setStatus({ state: 'notRunning', reason: 'The server was stopped.' });
  }

  /**
   * Leave the server running (the window reloads or closes): only our end of
   * the connection goes, without shutdown. The server keeps its turns and
   * waits for the next window to attach (see `serve --reattach`).
   */
  async detach(): Promise<void> {
    this.generation++;
    const connection = this.connection;
    this.connection = undefined;
    if (connection === undefined) {
      return;
    }
    connection.discarded = true;
    connection.kill();
    await connection.exitedWithin(2000);
    try {
      await connection.client.dispose(500);
    } catch {
      // the connection is gone already: that is the point
    }
    for (const subscription of connection.subscriptions.splice(0)) {
      subscription.dispose();
    }
  }

  showLog(): void {
    this.output.show(true);
  }

  dispose(): void {
    this.events.dispose();
    this.statusChanged.dispose();
    this.output.dispose();
  }

  private async disconnect(): Promise<void> {
    this.generation++;
    const connection = this.connection;
    this.connection = undefined;
    if (connection !== undefined) {
      await this.discard(connection);
    }
  }

  private connect(command: ServerCommand, cwd: string): ServerConnection {
    const args = spawnArgs(command, this.hooks.settings().reattach);
    const line = [command.command, ...args].join(' ');
    this.output.info(`Starting the server (from ${command.source}): ${line}`);
    const client = new QuietLanguageClient(
      'agentls',
      'AgentLS',
      async () => {
        const child = await spawnServer(command.command, args, cwd, this.output);
        connection.attach(child);
        return child;
      },
      {
        // Every file: the agent reads what the editor shows, unsaved changes included.
        documentSelector: [{ scheme: 'file' }],
        middleware: {
          workspace: {
            handleApplyEdit: (params, next) => applyAndSave(params, next, () => this.hooks.settings().saveAfterEdit),
          },
        },
        outputChannel: this.output,
        revealOutputChannelOn: RevealOutputChannelOn.Never,
        initializationOptions: () => initializationOptions(this.hooks.settings(), this.hooks.workspace()),
        initializationFailedHandler: (error) => {
          this.output.error(`initialize failed: ${error instanceof Error ? error.message : String(error)}`);
          return false;
        },
        errorHandler: {
          error: (_error, _message, count) => ({
            action: count !== undefined && count <= 3 ? ErrorAction.Continue : ErrorAction.Shutdown,
            handled: true,
          }),
          // Never the library's restart: a crash is handled below, with a fresh client.
          closed: () => ({ action: CloseAction.DoNotRestart, handled: true }),
        },
      },
    );
    client.registerFeature(APPROVALS_FEATURE);
    const connection = new ServerConnection(client, args);
    connection.subscriptions.push(
      client.onNotification(Method.event, (event: AgentEvent) => this.events.fire(event)),
      client.onRequest(Method.requestApproval, (params: ApprovalParams) => this.hooks.approve(params)),
      client.onRequest(Method.diagnostics, (params: { uri?: unknown } | undefined) => editorDiagnostics(params)),
      client.onDidChangeState(({ oldState, newState }) => {
        if (newState === State.Running && !connection.discarded) {
          this.setStatus({ state: 'running' });
          this.checkProtocolVersion();
          this.hooks.onRunning();
        } else if (oldState === State.Running && newState !== State.Running) {
          this.hooks.onStopped('The agent server stopped: its turns ended. A new server starts with an empty conversation.');
          if (!connection.discarded && this.connection === connection) {
            void this.crashed(connection);
          }
        }
      }),
    );
    return connection;
  }

  /** A running server went away on its own: start a fresh one, unless it keeps crashing. */
  private async crashed(connection: ServerConnection): Promise<void> {
    this.connection = undefined;
    await this.discard(connection);
    if (this.policy.crashed()) {
      this.output.warn(`The server stopped unexpectedly (${connection.exit ?? 'connection closed'}); restarting it.`);
      await this.start();
      return;
    }
    this.failed(
      `AgentLS: the server crashed ${this.policy.recentCrashes} times in 3 minutes and will not be ` +
        'restarted. The server log says why.',
      ['Show Server Log', 'Restart Server'],
    );
  }

  /** End a connection whatever its state: a running client stops the server; otherwise its process is ended. */
  private async discard(connection: ServerConnection): Promise<void> {
    connection.discarded = true;
    try {
      // Stops a running server (shutdown, exit); a starting or failed client cannot stop and says so.
      await connection.client.dispose(3000);
      await connection.exitedWithin(3000);
    } catch (error) {
      this.output.info(`discarding the client: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      connection.kill();
      for (const subscription of connection.subscriptions.splice(0)) {
        subscription.dispose();
      }
    }
  }

  private checkProtocolVersion(): void {
    const version = this.adapter.capabilities()?.protocolVersion;
    if (version !== PROTOCOL_VERSION) {
      const message =
        `AgentLS: the server speaks protocol version ${version ?? '(none)'}, this extension version ` +
        `${PROTOCOL_VERSION}: install the server and the extension from the same agentls checkout.`;
      this.output.warn(message);
      void vscode.window.showWarningMessage(message, 'Show Server Log').then((choice) => this.followUp(choice));
    }
  }

  /** The server is not running: say so in the status, the log and one notification. */
  private failed(message: string, actions: string[]): void {
    this.output.error(message);
    this.setStatus({ state: 'notRunning', reason: message });
    void vscode.window.showErrorMessage(message, ...actions).then((choice) => this.followUp(choice));
  }

  private setStatus(status: ServerStatus): void {
    this.current = status;
    this.statusChanged.fire(status);
  }

  followUp(choice: string | undefined): void {
    if (choice === 'Show Server Log') {
      this.showLog();
    } else if (choice === 'Restart Server') {
      void this.restart();
    } else if (choice === 'Open Settings') {
      void vscode.commands.executeCommand('workbench.action.openSettings', 'agentls');
    }
  }
}

/** Start the server process; a spawn failure becomes a sentence (no stack trace). */
async function spawnServer(command: string, args: string[], cwd: string, output: vscode.LogOutputChannel): Promise<ChildProcess> {
  const child = spawn(command, args, {
    cwd,
    env: { ...process.env, PYTHONUNBUFFERED: '1' },
    stdio: 'pipe',
  });
  await new Promise<void>((resolve, reject) => {
    child.once('spawn', () => resolve());
    child.once('error', (error: NodeJS.ErrnoException) => {
      reject(new Error(error.code === 'ENOENT' ? `${command} was not found` : error.message));
    });
  });
  child.on('error', (error) => output.warn(`server process: ${error.message}`));
  child.on('exit', (code, signal) => {
    output.info(`The server exited (${signal !== null ? `signal ${signal}` : `code ${code}`}).`);
  });
  return child;
}
