/**
 * The agent as the editor drives it: panes, their transcripts, and the logic
 * of every command (ask, steer, cancel, fork, ...).
 *
 * It talks to the server through `Client` and to the user through `Ui`, and
 * imports nothing from VS Code, so it runs unchanged under the unit tests
 * (fakes) and the protocol tests (the real server).
 */

import type { AskArgument } from './askArgument';
import { type Advice, adviceFor } from './advice';
import { CancelSource, type Client, ConnectionErrorCode, type Disposable, isRpcError } from './client';
import {
  type AgentEvent,
  type CancelResult,
  type CancelToolResult,
  type ClosePaneResult,
  type CompactResult,
  type Context,
  DEFAULT_EFFORT,
  EFFORTS,
  type Effort,
  ErrorCode,
  type ForkResult,
  type InstructionsResult,
  type HistoryResult,
  MAIN_PANE,
  Method,
  type NewSessionResult,
  type ResumeResult,
  type Selection,
  type SetFastModeResult,
  type SetEffortResult,
  type SessionInfo,
  type SessionsResult,
  type SteerResult,
  type SubmitParams,
  type TurnResult,
  isEffort,
} from './protocol';
import type { PaneProgressOptions, ProgressHandle } from './progress';
import { ToolProgress } from './toolProgress';
import { instructionsSummary } from './format';
import { type PaneState, Transcript, type TranscriptInput } from './transcript';

export interface PickItem<T extends string = string> {
  value: T;
  label: string;
  description?: string;
  detail?: string;
}

/** What the commands need from the editor's UI. */
export interface Ui {
  inputBox(options: { title: string; prompt: string; placeHolder?: string; value?: string }): Promise<string | undefined>;
  /** `active`: the item the cursor starts on (the current value). */
  quickPick<T extends string>(
    items: PickItem<T>[],
    options: { title: string; placeHolder?: string; active?: T },
  ): Promise<T | undefined>;
  /**
   * Progress of something a pane does, until `end` (see `progress.ts`: in
   * the status bar, and as a cancellable notification only while the pane's
   * transcript is hidden); `onCancel` when that notification's Cancel is pressed.
   */
  paneProgress(pane: string, title: string, onCancel: () => void, options: PaneProgressOptions): ProgressHandle;
  /** A turn failed: tell the user where they will see it (the transcript shows it already), with what to do. */
  turnFailed(pane: string, message: string, advice: Advice[]): void;
  info(message: string, ...actions: string[]): Promise<string | undefined>;
  error(message: string, ...actions: string[]): Promise<string | undefined>;
  /** The active editor's selection, if it selects something. */
  activeSelection(): Selection | undefined;
  /** A fresh progress token. */
  newToken(): string;
}

export interface Pane {
  name: string;
  /** The host's copy of the transcript (pane state, running turns). */
  transcript: Transcript;
  /** Everything folded into `transcript`, in order: a view replays it. */
  log: TranscriptInput[];
  effort: Effort;
  fastMode: boolean;
  /** `agent/submit` requests sent and not answered yet. */
  pendingSubmits: number;
  /** Their cancellation: Stop cancels them (`$/cancelRequest`). */
  requests: Set<CancelSource>;
}

export interface PaneSettings {
  effort: Effort;
  fastMode: boolean;
}

type Listener<T> = (value: T) => void;

class Emitter<T> {
  private readonly listeners = new Set<Listener<T>>();

  event = (listener: Listener<T>): Disposable => {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  };

  fire(value: T): void {
    for (const listener of [...this.listeners]) {
      listener(value);
    }
  }
}

export interface RevealRequest {
  pane: string;
  /** Open beside the main pane (a fork). */
  beside: boolean;
}

export function shorten(text: string, limit = 50): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length <= limit ? line : `${line.slice(0, limit - 1)}…`;
}

/** A sentence for the user about a failed request. */
export function describeError(error: unknown): string {
  if (isRpcError(error)) {
    switch (error.code) {
      case ErrorCode.paneUnavailable:
        return 'That pane is no longer available.';
      case ErrorCode.forkAlreadyOpen:
        return 'A fork is already open: close it before forking again.';
      case ErrorCode.agentStopped:
        return 'The agent server is shutting down.';
      case ErrorCode.paneBusy:
        return 'The pane has a turn in flight: cancel it first.';
      case ErrorCode.invalidParams:
        return `The server refused the request: ${error.message}`;
      case ConnectionErrorCode.closedBeforeAnswer:
        return 'The agent server stopped before it answered.';
      case ConnectionErrorCode.notRunning:
        return 'The agent server is not running: run AgentLS: Restart Server.';
      default:
        return error.message;
    }
  }
  return error instanceof Error ? error.message : String(error);
}

/** "just now", "5 min ago", "3 h ago", "2 d ago". */
export function age(iso: string, now: number = Date.now()): string {
  const seconds = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (!Number.isFinite(seconds)) {
    return '';
  }
  for (const [unit, size] of [
    ['d', 86_400],
    ['h', 3_600],
    ['min', 60],
  ] as const) {
    if (seconds >= size) {
      return `${Math.floor(seconds / size)} ${unit} ago`;
    }
  }
  return 'just now';
}

/** How the session pickers describe a session: its age and turns. */
export function sessionDescription(session: SessionInfo, now?: number): string {
  const turns = `${session.turns} turn${session.turns === 1 ? '' : 's'}`;
  return session.error !== undefined ? `${age(session.updatedAt, now)} · unreadable` : `${age(session.updatedAt, now)} · ${turns}`;
}

/** What went wrong with a session: the server's own words say which session and why. */
function sessionError(error: unknown): string {
  if (isRpcError(error) && (error.code === ErrorCode.sessionNotFound || error.code === ErrorCode.paneBusy)) {
    return `AgentLS: ${error.message}`;
  }
  return describeError(error);
}

function isCancelledError(error: unknown): boolean {
  return isRpcError(error) && error.code === ErrorCode.requestCancelled;
}

export class AgentController {
  private readonly panes = new Map<string, Pane>();
  /** Panes that were closed: late events for them are dropped. */
  private readonly closed = new Set<string>();
  /** Panes whose transcript is being rebuilt from agent/history: their live events wait here. */
  private readonly rebuilding = new Map<string, AgentEvent[]>();
  private active = MAIN_PANE;
  private defaults: PaneSettings;

  private readonly appended = new Emitter<{ pane: string; inputs: TranscriptInput[] }>();
  private readonly replaced = new Emitter<string>();
  private readonly panesChanged = new Emitter<void>();
  private readonly stateChanged = new Emitter<void>();
  private readonly revealRequested = new Emitter<RevealRequest>();

  /** Inputs appended to a pane's log (a view applies them). */
  readonly onDidAppend = this.appended.event;
  /** A pane's log was replaced (a view replays it from the start). */
  readonly onDidReplace = this.replaced.event;
  /** A pane opened or closed. */
  readonly onDidChangePanes = this.panesChanged.event;
  /** Pane state, effort, fast mode or the active pane changed. */
  readonly onDidChangeState = this.stateChanged.event;
  /** A command wants a pane's transcript shown. */
  readonly onDidRequestReveal = this.revealRequested.event;

  constructor(
    private client: Client,
    private readonly ui: Ui,
    defaults: PaneSettings = { effort: DEFAULT_EFFORT, fastMode: false },
  ) {
    this.defaults = { ...defaults };
    this.ensurePane(MAIN_PANE);
    this.toolProgress = new ToolProgress(ui, (pane, callId) => this.stopTool(pane, callId));
  }

  private readonly toolProgress: ToolProgress;

  // --- state ---------------------------------------------------------------------

  paneNames(): string[] {
    return [...this.panes.keys()];
  }

  pane(name: string): Pane | undefined {
    return this.panes.get(name);
  }

  get activePane(): string {
    return this.panes.has(this.active) ? this.active : MAIN_PANE;
  }

  setActivePane(name: string): void {
    if (this.panes.has(name) && name !== this.active) {
      this.active = name;
      this.stateChanged.fire();
    }
  }

  /** The open fork, if any. */
  forkPane(): string | undefined {
    return this.paneNames().find((name) => name !== MAIN_PANE);
  }

  paneState(name: string): PaneState {
    const pane = this.panes.get(name);
    if (pane === undefined) {
      return 'idle';
    }
    return pane.pendingSubmits > 0 ? 'running' : pane.transcript.state();
  }

  /** The efforts the configured model takes (none for a model that does not reason). */
  efforts(): Effort[] {
    const advertised = this.client.capabilities()?.efforts;
    return advertised !== undefined ? advertised.filter(isEffort) : [...EFFORTS];
  }

  // --- the server ------------------------------------------------------------------

  /** Route one `agent/event` to its pane. */
  handleEvent(event: AgentEvent): void {
    if (this.closed.has(event.pane)) {
      return;
    }
    const waiting = this.rebuilding.get(event.pane);
    if (waiting !== undefined) {
      waiting.push(event);
      return;
    }
    if (event.kind === 'pane.opened' && event.promotedFrom !== undefined) {
      this.promote(event.promotedFrom, event.pane);
    }
    const pane = this.ensurePane(event.pane);
    this.append(pane, [event]);
    this.toolProgress.handle(event);
    if (event.kind === 'turn.finished' && event.status === 'failed') {
      this.ui.turnFailed(event.pane, `AgentLS (${event.pane}): the turn failed: ${event.error ?? 'unknown error'}`, adviceFor(event.failure));
    }
    if (event.kind === 'pane.closed' && event.promotedTo === undefined) {
      this.removePane(event.pane);
    }
  }

  /** A (re)started server: every pane but main is gone, settings come from the editor again. */
  serverStarted(defaults: PaneSettings, client?: Client): void {
    if (client !== undefined) {
      this.client = client;
    }
    this.defaults = { ...defaults };
    this.closed.clear();
    const main = this.ensurePane(MAIN_PANE);
    main.effort = defaults.effort;
    main.fastMode = defaults.fastMode;
    this.stateChanged.fire();
  }

  /** The server went away: its turns are over, its forks are gone. */
  serverStopped(reason: string): void {
    this.toolProgress.endAll();
    for (const pane of [...this.panes.values()]) {
      if (pane.transcript.runningTurns().length > 0 || pane.name === MAIN_PANE) {
        this.append(pane, [{ kind: 'local.serverStopped', reason }]);
      }
      if (pane.name !== MAIN_PANE) {
        this.removePane(pane.name);
      }
    }
    this.closed.clear();
    this.stateChanged.fire();
  }

  /** Settings changed in the editor and were sent to the server: they apply to every pane. */
  settingsApplied(change: Partial<PaneSettings>): void {
    const { effort, fastMode } = change;
    for (const pane of this.panes.values()) {
      pane.effort = effort ?? pane.effort;
      pane.fastMode = fastMode ?? pane.fastMode;
    }
    this.defaults = { effort: effort ?? this.defaults.effort, fastMode: fastMode ?? this.defaults.fastMode };
    this.stateChanged.fire();
  }

  // --- commands ----------------------------------------------------------------------

  /**
   * AgentLS: Ask. `selection: 'include'` sends the active selection along when
   * there is one; `'require'` (Ask About Selection) insists on one.
   */
  async ask(
    options: {
      pane?: string;
      prompt?: string;
      selection?: 'include' | 'require' | 'none';
      /** The input box starts with this text (the user may edit it). */
      value?: string;
      /** Sent as the context, in place of the active selection. */
      context?: Context;
    } = {},
  ): Promise<TurnResult | undefined> {
    const pane = options.pane ?? this.activePane;
    const mode = options.selection ?? 'include';
    const selection = options.context?.selection ?? (mode === 'none' ? undefined : this.ui.activeSelection());
    if (mode === 'require' && selection === undefined) {
      await this.ui.info('Select some text in an editor first.');
      return undefined;
    }
    const prompt =
      options.prompt ??
      (await this.ui.inputBox({
        title: pane === MAIN_PANE ? 'AgentLS: Ask' : `AgentLS: Ask (${pane})`,
        prompt: selection !== undefined ? 'Ask about the selection' : 'Ask the agent',
        placeHolder:
          selection !== undefined ? 'e.g. Why does this fail on an empty list?' : 'e.g. Add a test for the parser',
        ...(options.value !== undefined ? { value: options.value } : {}),
      }));
    if (prompt === undefined || prompt.trim() === '') {
      return undefined;
    }
    const context = options.context ?? (selection !== undefined ? { selection } : undefined);
    return this.submit(pane, prompt, context);
  }

  /**
   * `agentls.ask` run by one of the server's code actions, in the main pane
   * (where the server means it to run), with its range as the selection.
   * "Fix with agentls" acts at once; "Ask agentls about this" opens Ask with
   * the server's question filled in, for the user to send or change.
   */
  async askFromServer(argument: AskArgument, text: string | undefined): Promise<TurnResult | undefined> {
    let context: Context | undefined;
    if (argument.uri !== undefined) {
      context =
        argument.range !== undefined && text !== undefined
          ? { selection: { uri: argument.uri, range: argument.range, text } }
          : { documents: [argument.uri] };
    }
    if (argument.kind === 'ask') {
      return this.ask({ pane: MAIN_PANE, value: argument.prompt, context });
    }
    return this.submit(MAIN_PANE, argument.prompt, context);
  }

  /**
   * Send one `agent/submit`. The request carries a cancellation token: Stop
   * in the transcript (and the progress notification's Cancel, while the
   * transcript is hidden) cancels it, and the client's own `$/cancelRequest`
   * cancels exactly this turn.
   */
  async submit(paneName: string, prompt: string, context?: Context): Promise<TurnResult | undefined> {
    const pane = this.panes.get(paneName);
    if (pane === undefined) {
      await this.ui.error(`There is no pane ${paneName}.`);
      return undefined;
    }
    const workDoneToken = this.ui.newToken();
    const params: SubmitParams = { pane: paneName, prompt, workDoneToken };
    if (context !== undefined) {
      params.context = context;
    }
    const request = new CancelSource();
    pane.requests.add(request);
    pane.pendingSubmits += 1;
    this.stateChanged.fire();
    this.revealRequested.fire({ pane: paneName, beside: paneName !== MAIN_PANE });
    const progress = this.ui.paneProgress(paneName, `AgentLS: ${shorten(prompt)}`, () => request.cancel(), {
      window: true,
    });
    const subscription = this.client.onProgress(workDoneToken, (value) => {
      if (value.kind !== 'end' && value.message !== undefined && value.message !== '') {
        progress.report(value.message);
      }
    });
    try {
      const result = await this.client.request<TurnResult>(Method.submit, params, request.token);
      const target = this.panes.get(result.pane) ?? pane;
      this.append(target, [{ kind: 'local.result', result, prompt }]);
      return result;
    } catch (error) {
      if (!isCancelledError(error)) {
        const message = `The request failed: ${describeError(error)}`;
        if (this.panes.get(paneName) === pane) {
          this.append(pane, [{ kind: 'local.notice', text: message, level: 'error' }]);
        }
        void this.ui.error(message);
      }
      // Cancelled: the server's turn.finished event carries the receipt.
      return undefined;
    } finally {
      subscription.dispose();
      progress.end();
      pane.requests.delete(request);
      pane.pendingSubmits -= 1;
      this.stateChanged.fire();
    }
  }

  /**
   * Stop (the transcript's button): the pane's turns end. Their requests are
   * cancelled through their tokens — the client sends `$/cancelRequest` and
   * each turn ends with its receipt. A turn this window did not ask for (a
   * steer that became a turn, a turn that ran on while the window reloaded)
   * has no request here: `agent/cancel` stops it.
   */
  async stop(options: { pane?: string } = {}): Promise<void> {
    const pane = this.panes.get(options.pane ?? this.activePane);
    if (pane === undefined) {
      return;
    }
    if (pane.requests.size > 0) {
      for (const request of [...pane.requests]) {
        request.cancel();
      }
      return;
    }
    if (pane.transcript.runningTurns().length > 0) {
      await this.call<CancelResult>(Method.cancel, { pane: pane.name });
    }
  }

  /** AgentLS: Steer — a message for the running turn (or a new turn if none runs). */
  async steer(options: { pane?: string; prompt?: string } = {}): Promise<SteerResult | undefined> {
    const pane = options.pane ?? this.activePane;
    const running = this.paneState(pane) === 'running';
    const prompt =
      options.prompt ??
      (await this.ui.inputBox({
        title: 'AgentLS: Steer',
        prompt: running ? 'Tell the running turn something' : 'No turn is running: this starts a new one',
        placeHolder: 'e.g. Use the existing helper instead',
      }));
    if (prompt === undefined || prompt.trim() === '') {
      return undefined;
    }
    return this.call<SteerResult>(Method.steer, { pane, prompt });
  }

  /** AgentLS: Cancel — every turn of the pane, running and queued. */
  async cancel(options: { pane?: string } = {}): Promise<CancelResult | undefined> {
    const pane = options.pane ?? this.activePane;
    const result = await this.call<CancelResult>(Method.cancel, { pane });
    if (result !== undefined && result.cancelled === 0) {
      void this.ui.info(`Nothing to cancel on ${pane}.`);
    }
    return result;
  }

  /**
   * Stop one running command (a Stop button, its progress notification's
   * Cancel): `agent/cancelTool`. Its processes are killed, the model gets what
   * it printed so far, and the turn goes on.
   */
  async stopTool(pane: string, callId: string): Promise<CancelToolResult | undefined> {
    return this.call<CancelToolResult>(Method.cancelTool, { pane, callId });
  }

  /** AgentLS: Fork — a new pane with a copy of the conversation, shown beside main. */
  async fork(options: { pane?: string } = {}): Promise<ForkResult | undefined> {
    const source = options.pane ?? MAIN_PANE;
    const open = this.forkPane();
    if (open !== undefined) {
      const choice = await this.ui.info(`${open} is already open: close it before forking again.`, 'Close Pane');
      if (choice === 'Close Pane') {
        await this.closePane({ pane: open });
      }
      return undefined;
    }
    const result = await this.call<ForkResult>(Method.fork, { pane: source });
    if (result === undefined) {
      return undefined;
    }
    const from = this.panes.get(source);
    const fork = this.ensurePane(result.pane);
    if (from !== undefined) {
      fork.effort = from.effort;
      fork.fastMode = from.fastMode;
    }
    this.active = result.pane;
    this.stateChanged.fire();
    this.revealRequested.fire({ pane: result.pane, beside: true });
    return result;
  }

  /**
   * AgentLS: Close Pane — cancels the pane's turns, ends its agent, closes its
   * view. By default the open fork; closing main while a fork is open makes
   * the fork main (the server's `pane.closed`/`pane.opened` events say so).
   */
  async closePane(options: { pane?: string } = {}): Promise<ClosePaneResult | undefined> {
    const pane = options.pane ?? this.forkPane();
    if (pane === undefined) {
      void this.ui.info('No fork is open.');
      return undefined;
    }
    const result = await this.call<ClosePaneResult>(Method.closePane, { pane });
    if (result !== undefined) {
      this.removePane(pane);
    }
    return result;
  }

  /** AgentLS: Set Effort — a quick pick of the server's efforts. */
  async setEffort(options: { pane?: string; effort?: Effort } = {}): Promise<Effort | undefined> {
    const paneName = options.pane ?? this.activePane;
    const pane = this.panes.get(paneName);
    if (pane === undefined) {
      return undefined;
    }
    if (options.effort === undefined && this.efforts().length === 0) {
      const model = this.client.capabilities()?.model ?? 'The model';
      await this.ui.info(`${model} does not reason, so it takes no effort.`);
      return undefined;
    }
    const effort =
      options.effort ??
      (await this.ui.quickPick(
        this.efforts().map((value) => ({
          value,
          label: value === pane.effort ? `$(check) ${value}` : value,
          description: value === pane.effort ? 'current' : undefined,
        })),
        {
          title: `AgentLS: Set Effort (${paneName})`,
          placeHolder: `Reasoning effort, now ${pane.effort}`,
          active: pane.effort,
        },
      ));
    if (effort === undefined) {
      return undefined;
    }
    const result = await this.call<SetEffortResult>(Method.setEffort, { pane: paneName, effort });
    if (result === undefined) {
      return undefined;
    }
    pane.effort = result.effort;
    this.stateChanged.fire();
    return result.effort;
  }

  /** AgentLS: Toggle Fast Mode on the active pane. */
  async toggleFastMode(options: { pane?: string } = {}): Promise<boolean | undefined> {
    const paneName = options.pane ?? this.activePane;
    const pane = this.panes.get(paneName);
    if (pane === undefined) {
      return undefined;
    }
    const result = await this.call<SetFastModeResult>(Method.setFastMode, {
      pane: paneName,
      enabled: !pane.fastMode,
    });
    if (result === undefined) {
      return undefined;
    }
    pane.fastMode = result.enabled;
    this.stateChanged.fire();
    return result.enabled;
  }

  /**
   * AgentLS: Compact Conversation — the pane's conversation summarised (or
   * cut) now, optionally with a focus for the summary; the pane must be idle.
   */
  async compact(options: { pane?: string; focus?: string } = {}): Promise<CompactResult | undefined> {
    const pane = options.pane ?? this.activePane;
    if (this.paneState(pane) === 'running') {
      await this.ui.info('A turn is running: compact the conversation when it is done.');
      return undefined;
    }
    const focus =
      options.focus ??
      (await this.ui.inputBox({
        title: 'AgentLS: Compact Conversation',
        prompt: 'What should the summary keep in particular? (Enter: nothing in particular)',
        placeHolder: 'e.g. the failing parser test',
      }));
    if (focus === undefined) {
      return undefined;
    }
    const params = focus.trim() !== '' ? { pane, focus: focus.trim() } : { pane };
    return this.call<CompactResult>(Method.compact, params);
  }

  /** "instructions: 2 files, 3.1 KiB (AGENTS.md, pkg/AGENTS.md)" for the pane's session. */
  async instructionsSummary(pane = MAIN_PANE): Promise<string> {
    try {
      const result = await this.client.request<InstructionsResult>(Method.instructions, { pane });
      return instructionsSummary(result.files, result.bytes, result.cutBytes);
    } catch (error) {
      return `instructions: unknown (${describeError(error)})`;
    }
  }

  /** AgentLS: New Session — a fresh agent on the pane (it must be idle). */
  async newSession(options: { pane?: string } = {}): Promise<NewSessionResult | undefined> {
    const pane = options.pane ?? this.activePane;
    return this.call<NewSessionResult>(Method.newSession, { pane });
  }

  // --- sessions -----------------------------------------------------------------------

  /**
   * The editor attached to a server that was running already (a reloaded
   * window): each pane's transcript comes back from `agent/history`, and the
   * events that arrive meanwhile follow it — no gap, no duplicate.
   */
  async rebuild(panes: string[]): Promise<void> {
    await Promise.all(panes.map((pane) => this.rebuildPane(pane)));
  }

  private async rebuildPane(name: string): Promise<void> {
    this.rebuilding.set(name, []);
    let history: HistoryResult | undefined;
    try {
      history = await this.client.request<HistoryResult>(Method.history, { pane: name, sinceSeq: 0 });
    } catch (error) {
      const waiting = this.rebuilding.get(name) ?? [];
      this.rebuilding.delete(name);
      this.append(this.ensurePane(name), [
        { kind: 'local.notice', text: `The transcript could not be rebuilt: ${describeError(error)}`, level: 'warning' },
      ]);
      waiting.forEach((event) => this.handleEvent(event));
      return;
    }
    const waiting = this.rebuilding.get(name) ?? [];
    this.rebuilding.delete(name);
    const pane = this.ensurePane(name);
    const log: TranscriptInput[] = [{ kind: 'local.reset', seqs: {} }];
    if (!history.complete) {
      log.push({
        kind: 'local.notice',
        text: 'The start of this session is no longer kept by the server: the transcript begins later.',
        level: 'warning',
      });
    }
    log.push(...history.events);
    const transcript = new Transcript();
    for (const input of log) {
      transcript.apply(input);
    }
    pane.log = log;
    pane.transcript = transcript;
    this.replaced.fire(name);
    for (const event of waiting) {
      if (event.seq > history.lastSeq) {
        this.handleEvent(event);
      }
    }
    this.stateChanged.fire();
    if (history.events.length > 0) {
      this.revealRequested.fire({ pane: name, beside: name !== MAIN_PANE });
    }
  }

  /** AgentLS: Resume Session… — a stored conversation continues in the pane. */
  async resumeSession(options: { pane?: string; sessionId?: string } = {}): Promise<ResumeResult | undefined> {
    const pane = options.pane ?? this.activePane;
    let sessionId = options.sessionId;
    if (sessionId === undefined) {
      sessionId = await this.pickSession('AgentLS: Resume Session', `Continue it in ${pane}`);
      if (sessionId === undefined) {
        return undefined;
      }
    }
    let result: ResumeResult;
    try {
      result = await this.client.request<ResumeResult>(Method.resume, { sessionId, pane });
    } catch (error) {
      void this.ui.error(sessionError(error));
      return undefined;
    }
    this.active = result.pane;
    this.stateChanged.fire();
    this.revealRequested.fire({ pane: result.pane, beside: result.pane !== MAIN_PANE });
    return result;
  }

  /** AgentLS: Delete Session… — a stored conversation is gone for good. */
  async deleteSession(options: { sessionId?: string } = {}): Promise<boolean> {
    let sessionId = options.sessionId;
    if (sessionId === undefined) {
      sessionId = await this.pickSession('AgentLS: Delete Session', 'It is deleted for good');
      if (sessionId === undefined) {
        return false;
      }
      const confirm = await this.ui.info('Delete this session? Its conversation cannot be brought back.', 'Delete');
      if (confirm !== 'Delete') {
        return false;
      }
    }
    try {
      await this.client.request(Method.deleteSession, { sessionId });
    } catch (error) {
      void this.ui.error(sessionError(error));
      return false;
    }
    void this.ui.info('The session was deleted.');
    return true;
  }

  /**
   * A fresh server (not one this window was attached to): offer to continue
   * the last session, if there is one and main has nothing yet.
   */
  async offerResume(): Promise<ResumeResult | undefined> {
    let listed: SessionsResult | undefined;
    try {
      listed = await this.client.request<SessionsResult>(Method.sessions, { limit: 5 });
    } catch {
      return undefined; // a server without sessions: nothing to offer
    }
    if (!Array.isArray(listed?.sessions)) {
      return undefined;
    }
    const last = listed.sessions.find((session) => session.pane === null && session.error === undefined);
    const main = this.panes.get(MAIN_PANE);
    if (last === undefined || (main !== undefined && main.transcript.turnList().length > 0)) {
      return undefined;
    }
    const choice = await this.ui.info(
      `AgentLS: continue your last session “${last.title}” (${sessionDescription(last)})?`,
      'Resume',
      'Other Sessions…',
    );
    if (choice === 'Resume') {
      return this.resumeSession({ pane: MAIN_PANE, sessionId: last.sessionId });
    }
    if (choice === 'Other Sessions…') {
      return this.resumeSession({ pane: MAIN_PANE });
    }
    return undefined;
  }

  /** A quick pick of this workspace's sessions not open in a pane (title, age, turns). */
  private async pickSession(title: string, placeHolder: string): Promise<string | undefined> {
    const listed = await this.call<SessionsResult>(Method.sessions, {});
    if (listed === undefined) {
      return undefined;
    }
    const choices = listed.sessions.filter((session) => session.pane === null);
    if (choices.length === 0) {
      void this.ui.info('There is no stored session of this workspace to choose from.');
      return undefined;
    }
    return this.ui.quickPick(
      choices.map((session) => ({
        value: session.sessionId,
        label: session.title,
        description: sessionDescription(session),
      })),
      { title, placeHolder },
    );
  }

  // --- internals -----------------------------------------------------------------

  private async call<R>(method: string, params: unknown): Promise<R | undefined> {
    try {
      return await this.client.request<R>(method, params);
    } catch (error) {
      void this.ui.error(describeError(error));
      return undefined;
    }
  }

  private ensurePane(name: string): Pane {
    let pane = this.panes.get(name);
    if (pane === undefined) {
      pane = {
        name,
        transcript: new Transcript(),
        log: [],
        effort: this.defaults.effort,
        fastMode: this.defaults.fastMode,
        pendingSubmits: 0,
        requests: new Set(),
      };
      this.panes.set(name, pane);
      this.closed.delete(name);
      this.panesChanged.fire();
    }
    return pane;
  }

  private append(pane: Pane, inputs: TranscriptInput[]): void {
    const before = this.paneState(pane.name);
    const meter = pane.transcript.context;
    for (const input of inputs) {
      pane.log.push(input);
      pane.transcript.apply(input);
    }
    this.appended.fire({ pane: pane.name, inputs });
    const after = pane.transcript.context;
    if (
      this.paneState(pane.name) !== before ||
      after?.tokens !== meter?.tokens ||
      after?.window !== meter?.window
    ) {
      this.stateChanged.fire(); // not once per delta: only when the state or the meter changes
    }
  }

  private removePane(name: string): void {
    if (name === MAIN_PANE || !this.panes.delete(name)) {
      return;
    }
    this.closed.add(name);
    if (this.active === name) {
      this.active = MAIN_PANE;
    }
    this.panesChanged.fire();
    this.stateChanged.fire();
  }

  /** `from` (the fork) is now `to` (main): `to` shows the fork's conversation from here on. */
  private promote(from: string, to: string): void {
    const fork = this.panes.get(from);
    const target = this.ensurePane(to);
    if (fork === undefined) {
      return;
    }
    // The fork's own events replay from its seq 1; main's channel goes on where it was.
    const seqs: Record<string, number> = { [to]: target.transcript.lastSeq(to) };
    const inherited = fork.log.filter((input) => input.kind !== 'local.reset' && input.kind !== 'pane.closed');
    const log: TranscriptInput[] = [{ kind: 'local.reset', seqs }, ...inherited];
    const transcript = new Transcript();
    for (const input of log) {
      transcript.apply(input);
    }
    target.log = log;
    target.transcript = transcript;
    target.effort = fork.effort;
    target.fastMode = fork.fastMode;
    this.panes.delete(from);
    this.closed.add(from);
    if (this.active === from) {
      this.active = to;
    }
    this.replaced.fire(to);
    this.panesChanged.fire();
  }
}
