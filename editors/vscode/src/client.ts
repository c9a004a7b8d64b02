/**
 * The small surface of the language client the agent logic needs.
 *
 * In VS Code it is backed by `vscode-languageclient` (see `languageClient.ts`);
 * tests back it with a `vscode-jsonrpc` connection to the real server, or with
 * a fake. Nothing here imports `vscode`.
 */

import type { AgentCapabilities, AgentEvent, ProgressToken, WorkDoneProgress } from './protocol';

export interface Disposable {
  dispose(): void;
}

/** The shape of `vscode.CancellationToken` and `vscode-jsonrpc`'s token. */
export interface CancellationToken {
  readonly isCancellationRequested: boolean;
  onCancellationRequested(listener: () => void): Disposable;
}

/** An error response from the server (`ResponseError` of vscode-jsonrpc has this shape). */
export interface RpcError {
  code: number;
  message: string;
  data?: unknown;
}

/** vscode-jsonrpc's codes for a connection that is gone (the server's own codes are in `protocol.ts`). */
export const ConnectionErrorCode = {
  /** ConnectionInactive: there is no running server. */
  notRunning: -32096,
  /** PendingResponseRejected: the connection closed before the answer came. */
  closedBeforeAnswer: -32097,
} as const;

/** What a request gets when no server is running (the error vscode-languageclient gives a stopped client). */
export function notRunningError(): RpcError {
  return { code: ConnectionErrorCode.notRunning, message: 'The agent server is not running.' };
}

export function isRpcError(value: unknown): value is RpcError {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as RpcError).code === 'number' &&
    typeof (value as RpcError).message === 'string'
  );
}

export interface Client {
  /**
   * Send a request. When `token` fires, the client sends `$/cancelRequest`
   * for it (what `vscode-jsonrpc` does).
   */
  request<R>(method: string, params: unknown, token?: CancellationToken): Promise<R>;
  notify(method: string, params: unknown): Promise<void>;
  /** Every `agent/event` notification, in arrival order. */
  onEvent(handler: (event: AgentEvent) => void): Disposable;
  /** `$/progress` for one token (register before sending the request that uses it). */
  onProgress(token: ProgressToken, handler: (value: WorkDoneProgress) => void): Disposable;
  /** `capabilities.experimental.agentls` once initialized. */
  capabilities(): AgentCapabilities | undefined;
}

/** A cancellation token and its trigger, without `vscode` (the controller runs in plain Node too). */
export class CancelSource {
  private cancelled = false;
  private readonly listeners = new Set<() => void>();
  readonly token: CancellationToken;

  constructor() {
    const source = this;
    this.token = {
      get isCancellationRequested(): boolean {
        return source.cancelled;
      },
      onCancellationRequested(listener: () => void): Disposable {
        source.listeners.add(listener);
        return { dispose: () => source.listeners.delete(listener) };
      },
    };
  }

  get isCancelled(): boolean {
    return this.cancelled;
  }

  cancel(): void {
    if (!this.cancelled) {
      this.cancelled = true;
      for (const listener of [...this.listeners]) {
        listener();
      }
      this.listeners.clear();
    }
  }
}
