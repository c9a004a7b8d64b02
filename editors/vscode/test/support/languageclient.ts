/**
 * A stand-in for `vscode-languageclient/node` in unit tests: records what
 * the extension sends and lets a test play the server (answers, events,
 * progress, state changes).
 */

/* eslint-disable @typescript-eslint/no-explicit-any */

import { EventEmitter } from './vscode';

export enum CloseAction {
  DoNotRestart = 1,
  Restart = 2,
}

export enum ErrorAction {
  Continue = 1,
  Shutdown = 2,
}

export enum RevealOutputChannelOn {
  Debug = 0,
  Info = 1,
  Warn = 2,
  Error = 3,
  Never = 4,
}

export enum State {
  Stopped = 1,
  Running = 2,
  Starting = 3,
  StartFailed = 4,
}

export const WorkDoneProgress = { type: { method: '$/progress' } };

export type Responder = (method: string, params: any, token: any) => Promise<unknown>;

export class LanguageClient {
  static instances: LanguageClient[] = [];
  /** How the next starts go (first in, first used): resolve to run, reject to fail; none left: they run. */
  static starts: Array<(client: LanguageClient) => Promise<void>> = [];
  state = State.Stopped;
  disposed = false;
  /** What the library logged (and whether it asked for a notification). */
  readonly logged: Array<{ message: string; data: unknown; show: unknown }> = [];
  readonly requests: Array<{ method: string; params: any; token: any }> = [];
  /** What the extension asks every server it starts (`agent/instructions`), kept apart from `requests`. */
  readonly startupRequests: Array<{ method: string; params: any }> = [];
  /** The answer to `agent/instructions`. */
  instructions: unknown = { files: [{ path: 'AGENTS.md', bytes: 3174 }], bytes: 3174, cutBytes: 0 };
  readonly notifications: Array<{ method: string; params: any }> = [];
  private readonly handlers = new Map<string, (params: any) => void>();
  private readonly requestHandlers = new Map<string, (params: any) => unknown>();
  /** Features registered before the start (they fill the client capabilities). */
  readonly features: any[] = [];
  private readonly progress = new Map<string | number, (value: any) => void>();
  private readonly stateChanged = new EventEmitter<{ oldState: State; newState: State }>();
  initializeResult: any = {
    capabilities: {
      experimental: {
        agentls: {
          protocolVersion: 2,
          maxForks: 1,
          efforts: ['none', 'minimal', 'low', 'medium', 'high', 'xhigh'],
          methods: [],
        },
      },
    },
  };
  respond: Responder = async () => null;

  constructor(
    readonly id: string,
    readonly name: string,
    readonly serverOptions: unknown,
    readonly clientOptions: any,
  ) {
    LanguageClient.instances.push(this);
  }

  private setState(newState: State): void {
    const oldState = this.state;
    this.state = newState;
    this.stateChanged.fire({ oldState, newState });
  }

  async start(): Promise<void> {
    if (this.disposed) {
      throw new Error("Client got disposed and can't be restarted.");
    }
    this.setState(State.Starting);
    const how = LanguageClient.starts.shift();
    try {
      await how?.(this);
    } catch (error) {
      // Like vscode-languageclient: the client stays failed, and its error() is called with 'force'.
      this.setState(State.StartFailed);
      this.error("AgentLS client: couldn't create connection to server.", error, 'force');
      throw error;
    }
    if (this.state === State.Starting) {
      this.setState(State.Running);
    }
  }

  /** Like vscode-languageclient: only a running client can stop; a starting or failed one throws. */
  async stop(): Promise<void> {
    if (this.state === State.Stopped) {
      return;
    }
    if (this.state !== State.Running) {
      throw new Error(`Client is not running and can't be stopped. It's current state is: ${this.state}`);
    }
    this.setState(State.Stopped);
  }

  dispose(): Promise<void> {
    this.disposed = true;
    return this.stop();
  }

  error(message: string, data?: unknown, show?: unknown): void {
    this.logged.push({ message, data, show });
  }

  /** The server process died: what does the error handler say? Then the client is stopped. */
  crash(): unknown {
    const handled = this.clientOptions.errorHandler.closed();
    this.setState(State.Stopped);
    return handled;
  }

  onDidChangeState(listener: (event: { oldState: State; newState: State }) => void): { dispose(): void } {
    return this.stateChanged.event(listener);
  }

  sendRequest(method: string, params: any, token?: any): Promise<unknown> {
    if (method === 'agent/instructions') {
      this.startupRequests.push({ method, params });
      return Promise.resolve(this.instructions);
    }
    this.requests.push({ method, params, token });
    return this.respond(method, params, token);
  }

  async sendNotification(method: string, params: any): Promise<void> {
    this.notifications.push({ method, params });
  }

  onNotification(method: string, handler: (params: any) => void): { dispose(): void } {
    this.handlers.set(method, handler);
    return { dispose: () => this.handlers.delete(method) };
  }

  onRequest(method: string, handler: (params: any) => unknown): { dispose(): void } {
    this.requestHandlers.set(method, handler);
    return { dispose: () => this.requestHandlers.delete(method) };
  }

  registerFeature(feature: unknown): void {
    this.features.push(feature);
  }

  /** The client capabilities the registered features declare. */
  capabilities(): any {
    const capabilities: any = {};
    for (const feature of this.features) {
      feature.fillClientCapabilities(capabilities);
    }
    return capabilities;
  }

  /** The server sends a request; resolves with the extension's answer. */
  async ask(method: string, params: unknown): Promise<unknown> {
    const handler = this.requestHandlers.get(method);
    if (handler === undefined) {
      throw new Error(`no handler for ${method}`);
    }
    return handler(params);
  }

  onProgress(_type: unknown, token: string | number, handler: (value: any) => void): { dispose(): void } {
    this.progress.set(token, handler);
    return { dispose: () => this.progress.delete(token) };
  }

  /** The server sends a notification. */
  emit(method: string, params: unknown): void {
    this.handlers.get(method)?.(params);
  }

  /** The server sends `$/progress`. */
  sendProgress(token: string | number, value: unknown): void {
    this.progress.get(token)?.(value);
  }
}
