/**
 * The transcript of one pane: `agent/event`s folded into turns and entries.
 *
 * Pure data, no VS Code: the extension host keeps one per pane (for the status
 * bar and pane state) and the webview replays the same inputs into its own
 * copy to render. Events are applied in arrival order; `seq` is checked per
 * channel (the pane name the server sent it under): a repeated or older seq is
 * dropped, a jump forward is recorded as a gap and shown, and the event is
 * still applied (a turn's final `turn.finished` or submit result repairs the
 * state a lost event would have set).
 */

import type {
  AgentEvent,
  Citation,
  CompactionFinishedEvent,
  CompactionMode,
  ContextMeter,
  PlanStep,
  Receipt,
  Source,
  SessionEntry,
  ToolCallStatus,
  TurnResult,
  TurnStatus,
  Usage,
} from './protocol';

/** Inputs that do not come from the server's event stream. */
export type LocalInput =
  | { kind: 'local.notice'; text: string; level?: NoticeLevel }
  /** The answer to `agent/submit`: repairs a turn whose events were lost. */
  | { kind: 'local.result'; result: TurnResult; prompt?: string }
  /** The server went away: running turns failed, and a new server counts seq from 1. */
  | { kind: 'local.serverStopped'; reason: string }
  /** Start over (promotion): forget every item, continue the given channels' seq. */
  | { kind: 'local.reset'; seqs: Record<string, number> };

export type TranscriptInput = AgentEvent | LocalInput;

export type NoticeLevel = 'info' | 'warning' | 'error';

export type TurnState = 'running' | TurnStatus;

/** What the status bar shows for a pane. */
export type PaneState = 'idle' | 'running' | 'cancelled' | 'failed';

/** Longest tool output kept per tool call (the tail is kept). */
export const MAX_TOOL_OUTPUT = 200_000;

interface EntryBase {
  /** Unique within the transcript, stable for the life of the entry. */
  id: number;
  /** Bumped on every change, so a renderer can redraw only what changed. */
  rev: number;
}

export interface MessageEntry extends EntryBase {
  kind: 'message';
  text: string;
  /** The model refused: `text` is what it said. */
  refusal?: boolean;
}

export interface ReasoningEntry extends EntryBase {
  kind: 'reasoning';
  text: string;
}

export interface ToolCallEntry extends EntryBase {
  kind: 'tool';
  callId: string;
  tool: string;
  title: string;
  arguments: unknown;
  output: string;
  /** Characters dropped from the head of `output` to stay under MAX_TOOL_OUTPUT. */
  droppedOutput: number;
  status: ToolCallStatus;
  exitCode?: number;
  /** What a web search used. */
  sources?: Source[];
  /** What a patch changed (unified diff). */
  diff?: string;
}

export interface SteerEntry extends EntryBase {
  kind: 'steer';
  text: string;
  /** The model has been sent it. */
  applied: boolean;
}

/**
 * The model requests that failed and were retried, as one line that updates
 * with each attempt: `waiting` until the model answers (`recovered`) or the
 * turn ends without it.
 */
export interface RetryEntry extends EntryBase {
  kind: 'retry';
  state: 'waiting' | 'recovered' | 'failed' | 'cancelled';
  /** The attempt that failed last (1-based); the next one is attempt + 1. */
  attempt: number;
  maxAttempts: number;
  delayMs: number;
  /** When the next attempt goes (ms since the epoch). */
  retryAt?: number;
  /** What failed last: `rate_limit`, `server`, `connection`, `timeout`, `stream`. */
  failure?: string;
  reason: string;
}

export interface PlanEntry extends EntryBase {
  kind: 'plan';
  explanation?: string;
  plan: PlanStep[];
}

/** What a compaction did (while it runs: only why, and the size before). */
export interface Compaction {
  state: 'running' | 'done';
  reason: string;
  beforeTokens: number;
  afterTokens?: number;
  mode?: CompactionMode;
  summary?: string;
}

export interface CompactionEntry extends EntryBase, Compaction {
  kind: 'compaction';
}

/** The sources the answer before it cites. */
export interface CitationsEntry extends EntryBase {
  kind: 'citations';
  citations: Citation[];
}

export type Entry =
  | MessageEntry
  | ReasoningEntry
  | ToolCallEntry
  | SteerEntry
  | RetryEntry
  | PlanEntry
  | CompactionEntry
  | CitationsEntry;

type WithoutIds<E> = E extends Entry ? Omit<E, 'id' | 'rev'> : never;
type NewEntry = WithoutIds<Entry>;

export interface Turn {
  type: 'turn';
  /** `t<turnId>` */
  key: string;
  id: number;
  /** Its number in the pane's session ("turn 3"), from `turn.started`. */
  number?: number;
  rev: number;
  prompt: string;
  status: TurnState;
  entries: Entry[];
  finalMessage?: string;
  error?: string;
  /** What failed (`failure` of the result): what the advice under the error depends on. */
  failure?: string;
  usage?: Usage;
  receipt?: Receipt;
  /** What the model is writing now ("Writing a patch…"), until the call starts. */
  activity?: string;
}

export interface Notice {
  type: 'notice';
  /** `n<counter>` */
  key: string;
  rev: number;
  text: string;
  level: NoticeLevel;
}

/** A compaction outside any turn (`agent/compact`): an entry of its own in the transcript. */
export interface CompactionItem extends Compaction {
  type: 'compaction';
  /** `c<counter>` */
  key: string;
  rev: number;
}


/** A conversation the pane did not see happen: a resumed session, or what a fork inherited. */
export interface Earlier {
  type: 'earlier';
  /** `e<counter>` */
  key: string;
  rev: number;
  /** "Resumed “Fix the tests”", "Inherited from main". */
  title: string;
  entries: SessionEntry[];
}

export type Item = Turn | Notice | CompactionItem | Earlier;

export interface Gap {
  channel: string;
  /** First and last missing seq. */
  from: number;
  to: number;
}

export type ApplyOutcome = 'applied' | 'duplicate' | 'gap';

export class Transcript {
  readonly items: Item[] = [];
  readonly gaps: Gap[] = [];
  private readonly turns = new Map<number, Turn>();
  private readonly seqs = new Map<string, number>();
  private readonly changed = new Set<string>();
  private removedAll = false;
  private nextEntryId = 1;
  private nextNotice = 1;
  /** How full the context window is, from the last report (undefined: none yet). */
  context: ContextMeter | undefined;
  private nextEarlier = 1;

  /** The last seq applied on a channel (0: none yet). */
  lastSeq(channel: string): number {
    return this.seqs.get(channel) ?? 0;
  }

  turn(id: number): Turn | undefined {
    return this.turns.get(id);
  }

  /** The item with this key (`t<turnId>` or `n<counter>`). */
  item(key: string): Item | undefined {
    if (key.startsWith('t')) {
      return this.turns.get(Number(key.slice(1)));
    }
    return this.items.find((item) => item.key === key);
  }

  /** Turns in the order they appeared. */
  turnList(): Turn[] {
    return this.items.filter((item): item is Turn => item.type === 'turn');
  }

  runningTurns(): Turn[] {
    return this.turnList().filter((turn) => turn.status === 'running');
  }

  /** idle / running / cancelled / failed: running while any turn runs, else how the last one ended. */
  state(): PaneState {
    const turns = this.turnList();
    if (turns.some((turn) => turn.status === 'running')) {
      return 'running';
    }
    const last = turns[turns.length - 1];
    if (last === undefined || last.status === 'completed') {
      return 'idle';
    }
    return last.status;
  }

  /**
   * Keys of items changed since the last call, and whether everything was
   * removed first (then the renderer starts from an empty page).
   */
  takeChanges(): { reset: boolean; keys: string[] } {
    const result = { reset: this.removedAll, keys: [...this.changed] };
    this.changed.clear();
    this.removedAll = false;
    return result;
  }

  apply(input: TranscriptInput): ApplyOutcome {
    let outcome: ApplyOutcome = 'applied';
    if ('seq' in input) {
      const last = this.lastSeq(input.pane);
      if (input.seq <= last) {
        return 'duplicate';
      }
      if (input.seq > last + 1) {
        outcome = 'gap';
        const gap = { channel: input.pane, from: last + 1, to: input.seq - 1 };
        this.gaps.push(gap);
        const count = gap.to - gap.from + 1;
        this.notice(
          `${count} event${count === 1 ? '' : 's'} of ${gap.channel} went missing (seq ${gap.from}` +
            `${count === 1 ? '' : `–${gap.to}`}); the transcript may be incomplete.`,
          'warning',
        );
      }
      this.seqs.set(input.pane, input.seq);
    }
    this.fold(input);
    return outcome;
  }

  private fold(input: TranscriptInput): void {
    switch (input.kind) {
      case 'turn.started': {
        const turn = this.ensureTurn(input.turnId);
        turn.prompt = input.prompt;
        turn.status = 'running';
        if (input.number !== undefined) {
          turn.number = input.number;
        }
        this.touch(turn);
        return;
      }
      case 'message.delta':
      case 'reasoning.delta': {
        const turn = this.ensureTurn(input.turnId);
        this.answered(turn);
        turn.activity = undefined;
        const kind = input.kind === 'message.delta' ? 'message' : 'reasoning';
        const last = turn.entries[turn.entries.length - 1];
        if (last !== undefined && last.kind === kind) {
          last.text += input.text;
          this.touchEntry(turn, last);
        } else {
          this.push(turn, { kind, text: input.text });
        }
        return;
      }
      case 'tool.started': {
        const turn = this.ensureTurn(input.turnId);
        this.answered(turn);
        turn.activity = undefined;
        this.push(turn, {
          kind: 'tool',
          callId: input.callId,
          tool: input.tool,
          title: input.title,
          arguments: input.arguments,
          output: '',
          droppedOutput: 0,
          status: 'running',
        });
        return;
      }
      case 'tool.output': {
        const turn = this.ensureTurn(input.turnId);
        const entry = this.toolCall(turn, input.callId);
        entry.output += input.text;
        if (entry.output.length > MAX_TOOL_OUTPUT) {
          const drop = entry.output.length - MAX_TOOL_OUTPUT;
          entry.output = entry.output.slice(drop);
          entry.droppedOutput += drop;
        }
        this.touchEntry(turn, entry);
        return;
      }
      case 'tool.finished': {
        const turn = this.ensureTurn(input.turnId);
        const entry = this.toolCall(turn, input.callId);
        entry.status = input.status;
        if (input.exitCode !== undefined) {
          entry.exitCode = input.exitCode;
        }
        if (input.sources !== undefined) {
          entry.sources = input.sources;
        }
        if (input.diff !== undefined) {
          entry.diff = input.diff;
        }
        this.touchEntry(turn, entry);
        return;
      }
      case 'tool.preparing': {
        const turn = this.ensureTurn(input.turnId);
        this.answered(turn);
        turn.activity = input.title;
        this.touch(turn);
        return;
      }
      case 'compaction.started':
      case 'compaction.finished':
        this.compaction(input);
        return;
      case 'message.citations': {
        const turn = this.ensureTurn(input.turnId);
        this.push(turn, { kind: 'citations', citations: input.citations });
        return;
      }
      case 'message.refusal': {
        const turn = this.ensureTurn(input.turnId);
        const message = this.lastMessage(turn);
        if (message !== undefined) {
          message.refusal = true;
          this.touchEntry(turn, message);
        } else {
          this.push(turn, { kind: 'message', text: input.text, refusal: true });
        }
        return;
      }
      case 'steer.admitted': {
        const turn = this.ensureTurn(input.turnId);
        this.push(turn, { kind: 'steer', text: input.text, applied: false });
        return;
      }
      case 'steer.applied': {
        const turn = this.ensureTurn(input.turnId);
        const steer = turn.entries.find(
          (entry): entry is SteerEntry => entry.kind === 'steer' && !entry.applied && entry.text === input.text,
        );
        if (steer !== undefined) {
          steer.applied = true;
          this.touchEntry(turn, steer);
        } else {
          this.push(turn, { kind: 'steer', text: input.text, applied: true });
        }
        return;
      }
      case 'usage': {
        const turn = this.ensureTurn(input.turnId);
        this.answered(turn);
        turn.usage = {
          inputTokens: input.inputTokens,
          outputTokens: input.outputTokens,
          reasoningTokens: input.reasoningTokens,
          cachedTokens: input.cachedTokens,
        };
        this.meter(input);
        this.touch(turn);
        return;
      }
      case 'model.retry': {
        const turn = this.ensureTurn(input.turnId);
        const fields = {
          attempt: input.attempt,
          maxAttempts: input.maxAttempts,
          delayMs: input.delayMs,
          retryAt: input.retryAt,
          failure: input.failure,
          reason: input.reason,
        };
        const waiting = this.waitingRetry(turn);
        if (waiting !== undefined) {
          Object.assign(waiting, fields);
          this.touchEntry(turn, waiting);
        } else {
          this.push(turn, { kind: 'retry', state: 'waiting', ...fields });
        }
        return;
      }
      case 'plan.updated': {
        const turn = this.ensureTurn(input.turnId);
        const plan = turn.entries.find((entry): entry is PlanEntry => entry.kind === 'plan');
        if (plan !== undefined) {
          plan.plan = input.plan;
          plan.explanation = input.explanation;
          this.touchEntry(turn, plan);
        } else {
          this.push(turn, { kind: 'plan', plan: input.plan, explanation: input.explanation });
        }
        return;
      }
      case 'turn.finished':
        this.finish(this.ensureTurn(input.turnId), input);
        return;
      case 'pane.opened':
        if (input.promotedFrom === undefined) {
          this.context = undefined; // a new conversation: the next usage says how full it is
        }
        if (input.promotedFrom !== undefined) {
          this.notice(`${input.promotedFrom} is now ${input.pane}: the conversation continues here.`, 'info');
        } else if (input.items !== undefined && input.items > 0) {
          this.notice(`Forked: ${input.items} conversation item${input.items === 1 ? '' : 's'} copied.`, 'info');
          if (input.entries !== undefined && input.entries.length > 0) {
            this.earlier(`What this fork inherited (${inheritedSummary(input.entries)})`, input.entries);
          }
        } else {
          // A new session: what was shown belongs to the old one (stored; Resume Session brings it back).
          this.clearItems();
          this.notice('New session: the agent starts with an empty conversation.', 'info');
        }
        return;
      case 'session.resumed': {
        // The pane now holds that conversation: what was shown before is another one.
        this.clearItems();
        const turns = `${input.turns} turn${input.turns === 1 ? '' : 's'}`;
        this.earlier(`Resumed “${input.title}” (${turns})`, input.entries);
        if (input.notice !== undefined && input.notice !== '') {
          this.notice(input.notice, input.interrupted || input.unsent.length > 0 ? 'warning' : 'info');
        }
        return;
      }
      case 'pane.closed':
        this.notice(
          input.promotedTo !== undefined ? `This pane became ${input.promotedTo}.` : 'This pane was closed.',
          'info',
        );
        return;
      case 'local.notice':
        this.notice(input.text, input.level ?? 'info');
        return;
      case 'local.result': {
        const known = this.turns.get(input.result.turnId);
        const turn = this.ensureTurn(input.result.turnId);
        if (known === undefined || turn.prompt === '') {
          turn.prompt = input.prompt ?? turn.prompt;
        }
        if (turn.status === 'running') {
          this.finish(turn, input.result);
        } else {
          this.touch(turn);
        }
        return;
      }
      case 'local.serverStopped':
        for (const turn of this.runningTurns()) {
          this.finish(turn, { status: 'failed', finalMessage: '', error: input.reason });
        }
        this.seqs.clear();
        this.notice(input.reason, 'error');
        return;
      case 'local.reset':
        this.clearItems();
        this.seqs.clear();
        for (const [channel, seq] of Object.entries(input.seqs)) {
          this.seqs.set(channel, seq);
        }
        return;
    }
  }

  private clearItems(): void {
    this.items.length = 0;
    this.turns.clear();
    this.changed.clear();
    this.removedAll = true;
  }

  private earlier(title: string, entries: SessionEntry[]): void {
    const item: Earlier = { type: 'earlier', key: `e${this.nextEarlier++}`, rev: 1, title, entries };
    this.items.push(item);
    this.changed.add(item.key);
  }

  /** A turn's end: its result, or its `turn.finished` event (the same fields). */
  private finish(turn: Turn, result: Omit<TurnResult, 'pane' | 'turnId'>): void {
    turn.status = result.status;
    turn.finalMessage = result.finalMessage;
    turn.error = result.error;
    turn.failure = result.status === 'failed' ? result.failure : undefined;
    turn.activity = undefined;
    const waiting = this.waitingRetry(turn);
    if (waiting !== undefined) {
      waiting.state = result.status === 'completed' ? 'recovered' : result.status;
      this.touchEntry(turn, waiting);
    }
    if (result.usage !== undefined) {
      turn.usage = result.usage;
      this.meter(result.usage);
    }
    turn.receipt = result.receipt;
    for (const entry of turn.entries) {
      if (entry.kind === 'tool' && entry.status === 'running') {
        entry.status = result.status === 'completed' ? 'completed' : 'cancelled';
        this.touchEntry(turn, entry);
      }
    }
    // The streamed answer is what the user saw; if deltas went missing, the
    // final message the server reports wins.
    const final = result.finalMessage;
    if (result.status === 'completed' && final !== '') {
      // The answer's sources come after it: they do not hide it.
      const last = turn.entries.filter((entry) => entry.kind !== 'citations').at(-1);
      if (last !== undefined && last.kind === 'message') {
        if (last.text !== final) {
          last.text = final;
          this.touchEntry(turn, last);
        }
      } else {
        this.push(turn, { kind: 'message', text: final });
      }
    }
    this.touch(turn);
  }

  /** A compaction: an entry of its turn, or (turnId null) an item of its own. */
  private compaction(input: AgentEvent & { kind: 'compaction.started' | 'compaction.finished' }): void {
    const turn = input.turnId !== null ? this.ensureTurn(input.turnId) : undefined;
    const running = (candidate: Compaction): boolean => candidate.state === 'running';
    let target: Compaction | undefined;
    if (turn !== undefined) {
      target = turn.entries.find((entry): entry is CompactionEntry => entry.kind === 'compaction' && running(entry));
    } else {
      target = this.items.find((item): item is CompactionItem => item.type === 'compaction' && running(item));
    }
    if (input.kind === 'compaction.started' || target === undefined) {
      const fields: Compaction = {
        state: 'running',
        reason: input.kind === 'compaction.started' ? input.reason : 'manual',
        beforeTokens: input.beforeTokens,
      };
      if (turn !== undefined) {
        target = this.push(turn, { kind: 'compaction', ...fields });
      } else {
        const item: CompactionItem = { type: 'compaction', key: `c${this.nextNotice++}`, rev: 0, ...fields };
        this.items.push(item);
        target = item;
      }
    }
    if (input.kind === 'compaction.finished') {
      this.finishCompaction(target, input);
    }
    if (turn !== undefined) {
      this.touchEntry(turn, target as CompactionEntry);
    } else {
      this.touch(target as CompactionItem);
    }
  }

  private finishCompaction(target: Compaction, input: CompactionFinishedEvent): void {
    target.state = 'done';
    target.beforeTokens = input.beforeTokens;
    target.afterTokens = input.afterTokens;
    target.mode = input.mode;
    target.summary = input.summary;
    if (this.context !== undefined) {
      this.context = { tokens: input.afterTokens, window: this.context.window };
    }
  }

  /** Follow the context meter (usage events and results carry it). */
  private meter(usage: Partial<Usage>): void {
    if (usage.contextTokens !== undefined && usage.contextWindow !== undefined) {
      this.context = { tokens: usage.contextTokens, window: usage.contextWindow };
    }
  }

  /** The retry line still waiting for the model, if any (at most one per turn). */
  private waitingRetry(turn: Turn): RetryEntry | undefined {
    return turn.entries.find((entry): entry is RetryEntry => entry.kind === 'retry' && entry.state === 'waiting');
  }

  /** The model answered: a retry line that waited is done. */
  private answered(turn: Turn): void {
    const waiting = this.waitingRetry(turn);
    if (waiting !== undefined) {
      waiting.state = 'recovered';
      this.touchEntry(turn, waiting);
    }
  }

  private lastMessage(turn: Turn): MessageEntry | undefined {
    return turn.entries.filter((entry): entry is MessageEntry => entry.kind === 'message').at(-1);
  }

  private ensureTurn(id: number): Turn {
    let turn = this.turns.get(id);
    if (turn === undefined) {
      turn = { type: 'turn', key: `t${id}`, id, rev: 0, prompt: '', status: 'running', entries: [] };
      this.turns.set(id, turn);
      this.items.push(turn);
      this.touch(turn);
    }
    return turn;
  }

  private toolCall(turn: Turn, callId: string): ToolCallEntry {
    const found = turn.entries.find((entry): entry is ToolCallEntry => entry.kind === 'tool' && entry.callId === callId);
    if (found !== undefined) {
      return found;
    }
    // Its tool.started went missing: show what we know.
    return this.push(turn, {
      kind: 'tool' as const,
      callId,
      tool: 'tool',
      title: callId,
      arguments: undefined,
      output: '',
      droppedOutput: 0,
      status: 'running' as ToolCallStatus,
    });
  }

  private push<F extends NewEntry>(turn: Turn, fields: F): F & EntryBase {
    const entry = { ...fields, id: this.nextEntryId++, rev: 1 };
    turn.entries.push(entry as Entry);
    this.touch(turn);
    return entry;
  }

  private touchEntry(turn: Turn, entry: Entry): void {
    entry.rev += 1;
    this.touch(turn);
  }

  private touch(item: Item): void {
    item.rev += 1;
    this.changed.add(item.key);
  }

  private notice(text: string, level: NoticeLevel): void {
    const notice: Notice = { type: 'notice', key: `n${this.nextNotice++}`, rev: 1, text, level };
    this.items.push(notice);
    this.changed.add(notice.key);
  }
}

/** "2 prompts, 3 tool calls" — what a fork starts with, in a few words. */
export function inheritedSummary(entries: SessionEntry[]): string {
  const count = (role: SessionEntry['role']): number => entries.filter((entry) => entry.role === role).length;
  const parts = [`${count('user')} prompt${count('user') === 1 ? '' : 's'}`];
  const tools = count('tool');
  if (tools > 0) {
    parts.push(`${tools} tool call${tools === 1 ? '' : 's'}`);
  }
  if (count('summary') > 0) {
    parts.push('a summary of earlier turns');
  }
  return parts.join(', ');
}
