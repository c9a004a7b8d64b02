/** A `Client` for unit tests: scripted request handlers, recorded requests and notifications. */

import type { CancellationToken, Client, Disposable } from '../../src/client';
import type { AgentCapabilities, ProgressToken, WorkDoneProgress } from '../../src/protocol';

export type Handler = (params: any, token?: CancellationToken) => Promise<unknown>; // eslint-disable-line @typescript-eslint/no-explicit-any

export class FakeClient implements Client {
  readonly requests: Array<{ method: string; params: any; token?: CancellationToken }> = []; // eslint-disable-line @typescript-eslint/no-explicit-any
  readonly notifications: Array<{ method: string; params: unknown }> = [];
  readonly handlers = new Map<string, Handler>();
  readonly progress = new Map<ProgressToken, (value: WorkDoneProgress) => void>();
  caps: AgentCapabilities | undefined = {
    protocolVersion: 2,
    maxForks: 1,
    efforts: ['low', 'medium', 'high'],
    methods: [],
  };

  request<R>(method: string, params: unknown, token?: CancellationToken): Promise<R> {
    this.requests.push({ method, params, token });
    const handler = this.handlers.get(method);
    return (handler ? handler(params, token) : Promise.reject({ code: -32601, message: `no ${method}` })) as Promise<R>;
  }

  async notify(method: string, params: unknown): Promise<void> {
    this.notifications.push({ method, params });
  }

  onEvent(): Disposable {
    return { dispose: () => undefined };
  }

  onProgress(token: ProgressToken, handler: (value: WorkDoneProgress) => void): Disposable {
    this.progress.set(token, handler);
    return { dispose: () => this.progress.delete(token) };
  }

  capabilities(): AgentCapabilities | undefined {
    return this.caps;
  }
}
