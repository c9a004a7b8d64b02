/**
 * The real agentls server over stdio, driven with vscode-jsonrpc (the
 * library vscode-languageclient sends its messages with), and a `Client` on
 * top of it so the extension's controller runs against the real thing.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  type MessageConnection,
  ProgressType,
  StreamMessageReader,
  StreamMessageWriter,
  createMessageConnection,
} from 'vscode-jsonrpc/node';
import type { CancellationToken, Client, Disposable } from '../../src/client';
import type {
  AgentCapabilities,
  AgentEvent,
  ApprovalParams,
  ApprovalResult,
  InitializationOptions,
  ProgressToken,
  WorkDoneProgress,
} from '../../src/protocol';
import { AGENTLS, tempDir, waitFor } from './env';

const workDone = new ProgressType<WorkDoneProgress>();

export class ServerProcess implements Client {
  readonly events: AgentEvent[] = [];
  readonly stderr: string[] = [];
  private readonly listeners = new Set<(event: AgentEvent) => void>();
  private caps: AgentCapabilities | undefined;

  private constructor(
    readonly connection: MessageConnection,
    readonly child: ChildProcess,
    readonly workspace: string,
    private readonly scratch: string[],
  ) {
    connection.onNotification('agent/event', (event: AgentEvent) => {
      this.events.push(event);
      for (const listener of this.listeners) {
        listener(event);
      }
    });
    connection.onRequest('window/workDoneProgress/create', () => null);
    connection.onNotification('window/logMessage', () => undefined);
    connection.onNotification('window/showMessage', (params: { message: string }) => {
      this.stderr.push(`showMessage: ${params.message}`);
    });
  }

  /**
   * Start and initialize a server. With `approve`, the client answers
   * `agent/requestApproval` (and says so in its capabilities). `env`: more of
   * the server's environment (`AGENTLS_STATE_DIR`, say, for servers that share
   * sessions).
   */
  static async start(
    options: InitializationOptions & { workspace?: string } = {},
    approve?: (params: ApprovalParams) => Promise<ApprovalResult>,
    env: Record<string, string> = {},
  ): Promise<ServerProcess> {
    const scratch: string[] = [];
    const workspace = options.workspace ?? tempDir('workspace');
    if (options.workspace === undefined) {
      scratch.push(workspace);
    }
    const home = tempDir('home');
    scratch.push(home);
    const child = spawn(AGENTLS, ['serve'], {
      cwd: workspace,
      // A home of its own: exec_command runs `bash -lc`, and the user's login
      // profile (pyenv, nvm...) is slow and not what these tests are about.
      env: { ...process.env, HOME: home, OPENAI_API_KEY: 'sk-test-not-a-real-key', PYTHONUNBUFFERED: '1', ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const connection = createMessageConnection(
      new StreamMessageReader(child.stdout!),
      new StreamMessageWriter(child.stdin!),
    );
    const server = new ServerProcess(connection, child, workspace, scratch);
    child.stderr!.on('data', (chunk: Buffer) => server.stderr.push(chunk.toString()));
    if (approve !== undefined) {
      connection.onRequest('agent/requestApproval', approve);
    }
    connection.listen();
    const result = (await connection.sendRequest('initialize', {
      processId: process.pid,
      rootUri: pathToFileURL(workspace).toString(),
      capabilities: {
        window: { workDoneProgress: true },
        ...(approve !== undefined ? { experimental: { agentls: { requestApproval: true } } } : {}),
      },
      initializationOptions: { ...options, workspace },
    })) as { capabilities: { experimental?: { agentls?: AgentCapabilities } } };
    server.caps = result.capabilities.experimental?.agentls;
    await connection.sendNotification('initialized', {});
    return server;
  }

  file(name: string): string {
    return path.join(this.workspace, name);
  }

  // --- Client ---------------------------------------------------------------------

  request<R>(method: string, params: unknown, token?: CancellationToken): Promise<R> {
    return (token !== undefined
      ? this.connection.sendRequest(method, params, token as never)
      : this.connection.sendRequest(method, params)) as Promise<R>;
  }

  notify(method: string, params: unknown): Promise<void> {
    return this.connection.sendNotification(method, params);
  }

  onEvent(handler: (event: AgentEvent) => void): Disposable {
    this.listeners.add(handler);
    return { dispose: () => this.listeners.delete(handler) };
  }

  onProgress(token: ProgressToken, handler: (value: WorkDoneProgress) => void): Disposable {
    return this.connection.onProgress(workDone, token, handler);
  }

  capabilities(): AgentCapabilities | undefined {
    return this.caps;
  }

  // --- waiting ----------------------------------------------------------------------

  /** The first event (from `from` on) that matches. */
  event<K extends AgentEvent['kind']>(
    kind: K,
    match: (event: Extract<AgentEvent, { kind: K }>) => boolean = () => true,
    timeoutMs = 15_000,
  ): Promise<Extract<AgentEvent, { kind: K }>> {
    return waitFor(
      `an agent/event ${kind}`,
      () =>
        this.events.find(
          (event): event is Extract<AgentEvent, { kind: K }> =>
            event.kind === kind && match(event as Extract<AgentEvent, { kind: K }>),
        ),
      timeoutMs,
    );
  }

  toolOutput(callId?: string): string {
    return this.events
      .filter((event) => event.kind === 'tool.output' && (callId === undefined || event.callId === callId))
      .map((event) => (event as { text: string }).text)
      .join('');
  }

  async stop(): Promise<number | null> {
    try {
      return await this.shutdown();
    } finally {
      for (const dir of this.scratch) {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    }
  }

  private async shutdown(): Promise<number | null> {
    if (this.child.exitCode !== null) {
      return this.child.exitCode;
    }
    const exited = new Promise<number | null>((resolve) => this.child.once('exit', (code) => resolve(code)));
    try {
      await Promise.race([
        this.connection.sendRequest('shutdown').then(() => this.connection.sendNotification('exit')),
        exited,
      ]);
    } catch {
      this.child.kill('SIGTERM');
    }
    let timer: NodeJS.Timeout | undefined;
    const code = await Promise.race([
      exited,
      new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), 10_000);
      }),
    ]);
    clearTimeout(timer);
    if (code === 'timeout') {
      this.child.kill('SIGKILL');
      return null;
    }
    this.connection.dispose();
    return code;
  }
}
