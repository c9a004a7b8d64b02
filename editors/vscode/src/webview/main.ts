/**
 * The transcript webview: folds the host's batched inputs into a Transcript
 * and redraws, at most once per animation frame, only what changed. Markdown
 * goes through markdown-it with raw HTML disabled; everything else is text.
 */

import MarkdownIt from 'markdown-it';
import {
  compactionSummary,
  contextPercent,
  contextSummary,
  receiptSummary,
  toolStatusLabel,
  turnStatusLabel,
  usageSummary,
} from '../format';
import type { Citation, Source } from '../protocol';
import { renderDiff } from './diff';
import {
  type Compaction,
  type CompactionItem,
  type Earlier,
  type Entry,
  type Item,
  type Notice,
  type ToolCallEntry,
  Transcript,
  type Turn,
} from '../transcript';
import type { HostMessage, ViewMessage, ViewState } from '../viewMessages';

interface VsCodeApi {
  postMessage(message: ViewMessage): void;
}

declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();
const markdown = new MarkdownIt({ html: false, linkify: true, typographer: false });
// Link only what is written as a URL: `app.py` is a file, not a Paraguayan domain.
markdown.linkify.set({ fuzzyLink: false, fuzzyEmail: false });

function element<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className?: string,
  text?: string,
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className !== undefined) {
    node.className = className;
  }
  if (text !== undefined) {
    node.textContent = text;
  }
  return node;
}

function query<T extends Element>(root: ParentNode, selector: string): T {
  const found = root.querySelector<T>(selector);
  if (found === null) {
    throw new Error(`missing ${selector}`);
  }
  return found;
}

interface EntryView {
  node: HTMLElement;
  rev: number;
  /** Tool output already in the DOM (characters, and how many had been dropped then). */
  shown: number;
  dropped: number;
  /** The user opened or closed the tool call: leave it as they want it. */
  toggled: boolean;
}

interface TurnView {
  node: HTMLElement;
  prompt: string | undefined;
}

class TranscriptRenderer {
  private transcript = new Transcript();
  private readonly items = new Map<string, HTMLElement>();
  private readonly turns = new Map<string, TurnView>();
  private readonly entries = new Map<number, EntryView>();
  private frame = 0;

  constructor(private readonly root: HTMLElement) {}

  replay(inputs: readonly Parameters<Transcript['apply']>[0][]): void {
    this.transcript = new Transcript();
    this.clear();
    this.apply(inputs);
  }

  apply(inputs: readonly Parameters<Transcript['apply']>[0][]): void {
    for (const input of inputs) {
      this.transcript.apply(input);
    }
    if (this.frame === 0) {
      this.frame = requestAnimationFrame(() => {
        this.frame = 0;
        this.render();
      });
    }
  }

  private clear(): void {
    this.root.replaceChildren();
    this.items.clear();
    this.turns.clear();
    this.entries.clear();
  }

  private render(): void {
    const { reset, keys } = this.transcript.takeChanges();
    if (reset) {
      this.clear();
    }
    const stick = this.root.scrollHeight - this.root.scrollTop - this.root.clientHeight < 40;
    for (const key of keys) {
      const item = this.transcript.item(key);
      if (item !== undefined) {
        this.renderItem(item);
      }
    }
    document.body.classList.toggle('has-items', this.transcript.items.length > 0);
    if (stick) {
      this.root.scrollTop = this.root.scrollHeight;
    }
  }

  private renderItem(item: Item): void {
    let node = this.items.get(item.key);
    if (node === undefined) {
      node =
        item.type === 'turn'
          ? this.createTurn(item)
          : item.type === 'compaction'
            ? element('div', 'compaction')
            : item.type === 'earlier'
              ? this.createEarlier(item)
              : this.createNotice(item);
      this.items.set(item.key, node);
      this.root.append(node);
    }
    if (item.type === 'turn') {
      this.updateTurn(item);
    } else if (item.type === 'compaction') {
      renderCompaction(node, item);
    }
  }

  private createNotice(notice: Notice): HTMLElement {
    const node = element('div', 'notice', notice.text);
    node.dataset.level = notice.level;
    node.setAttribute('role', notice.level === 'info' ? 'status' : 'alert');
    return node;
  }

  /** A conversation shown as it was stored: prompts, answers, tool calls, steers, summaries. */
  private createEarlier(earlier: Earlier): HTMLElement {
    const node = element('details', 'earlier');
    node.open = true;
    node.append(element('summary', undefined, earlier.title));
    for (const entry of earlier.entries) {
      const row = element('div', `earlier-entry ${entry.role}`);
      row.dataset.role = entry.role;
      if (entry.role === 'assistant' || entry.role === 'summary' || entry.role === 'user') {
        if (entry.role !== 'assistant') {
          row.append(element('div', 'who', entry.role === 'user' ? 'You' : 'Summary of earlier turns'));
        }
        const text = element('div', 'markdown');
        text.innerHTML = markdown.render(entry.text);
        row.append(text);
      } else if (entry.role === 'tool') {
        row.dataset.status = entry.status ?? 'completed';
        const title = element('span', 'title');
        title.innerHTML = markdown.renderInline(entry.text);
        row.append(element('span', 'icon'), title, element('span', 'state', entry.status ?? ''));
      } else {
        row.append(element('span', 'label', 'Steer'), element('span', 'text', entry.text));
      }
      node.append(row);
    }
    return node;
  }

  private createTurn(turn: Turn): HTMLElement {
    const node = element('section', 'turn');
    node.dataset.turn = String(turn.id);
    const head = element('div', 'turn-head');
    head.append(element('span', 'who', 'You'), element('span', 'turn-status'));
    node.append(head, element('div', 'prompt markdown'), element('div', 'entries'), element('div', 'turn-footer'));
    this.turns.set(turn.key, { node, prompt: undefined });
    return node;
  }

  private updateTurn(turn: Turn): void {
    const view = this.turns.get(turn.key);
    if (view === undefined) {
      return;
    }
    const node = view.node;
    node.dataset.status = turn.status;
    const activity = turn.status === 'running' && turn.activity !== undefined ? ` · ${turn.activity}` : '';
    query(node, '.turn-status').textContent = `turn ${turn.id} · ${turnStatusLabel(turn.status)}${activity}`;
    if (view.prompt !== turn.prompt) {
      view.prompt = turn.prompt;
      query(node, '.prompt').innerHTML = markdown.render(turn.prompt === '' ? '*(queued prompt)*' : turn.prompt);
    }
    const container = query<HTMLElement>(node, '.entries');
    for (const entry of turn.entries) {
      let entryView = this.entries.get(entry.id);
      if (entryView === undefined) {
        entryView = { node: this.createEntry(entry), rev: 0, shown: 0, dropped: 0, toggled: false };
        this.entries.set(entry.id, entryView);
        container.append(entryView.node);
      }
      if (entryView.rev !== entry.rev) {
        entryView.rev = entry.rev;
        this.updateEntry(entryView, entry);
      }
    }
    const footer = query<HTMLElement>(node, '.turn-footer');
    footer.replaceChildren();
    if (turn.status === 'cancelled') {
      footer.append(element('div', 'receipt', turn.receipt !== undefined ? receiptSummary(turn.receipt) : 'Cancelled.'));
    } else if (turn.status === 'failed') {
      footer.append(element('div', 'error', `Failed: ${turn.error ?? 'unknown error'}`));
    }
    if (turn.usage !== undefined && turn.status !== 'running') {
      footer.append(element('div', 'usage', usageSummary(turn.usage)));
    }
  }

  private createEntry(entry: Entry): HTMLElement {
    switch (entry.kind) {
      case 'message':
        return element('div', 'entry message markdown');
      case 'reasoning': {
        const node = element('details', 'entry reasoning');
        node.append(element('summary', undefined, 'Reasoning'), element('div', 'text'));
        return node;
      }
      case 'tool': {
        const node = element('details', 'entry tool');
        node.dataset.call = entry.callId;
        const summary = element('summary');
        const stop = element('button', 'stop secondary', 'Stop');
        stop.title = 'Stop this command (the turn goes on)';
        stop.addEventListener('click', (event) => {
          event.preventDefault(); // not a click on the summary: the entry stays as it is
          event.stopPropagation();
          stop.disabled = true;
          vscode.postMessage({ type: 'stopTool', callId: entry.callId });
        });
        summary.append(element('span', 'icon'), element('span', 'title'), element('span', 'state'), stop);
        node.append(summary);
        if (entry.tool === 'apply_patch') {
          node.append(element('pre', 'args'));
        }
        node.append(element('pre', 'output'));
        node.open = true;
        summary.addEventListener('click', () => {
          const view = this.entries.get(entry.id);
          if (view !== undefined) {
            view.toggled = true;
          }
        });
        return node;
      }
      case 'steer':
        return element('div', 'entry steer');
      case 'retry':
        return element('div', 'entry retry');
      case 'plan':
        return element('div', 'entry plan');
      case 'compaction':
        return element('div', 'entry compaction');
      case 'citations':
        return element('div', 'entry citations');
    }
  }

  private updateEntry(view: EntryView, entry: Entry): void {
    const node = view.node;
    switch (entry.kind) {
      case 'message':
        node.innerHTML = markdown.render(entry.text);
        node.classList.toggle('refusal', entry.refusal === true);
        if (entry.refusal === true) {
          node.prepend(element('div', 'label', 'The model refused'));
        }
        return;
      case 'compaction':
        renderCompaction(node, entry);
        return;
      case 'citations':
        node.replaceChildren(element('div', 'label', 'Sources'), links(entry.citations));
        return;
      case 'reasoning':
        query(node, '.text').textContent = entry.text;
        return;
      case 'tool':
        this.updateTool(view, entry);
        return;
      case 'steer': {
        node.dataset.applied = String(entry.applied);
        node.replaceChildren(
          element('span', 'label', 'Steer'),
          element('span', 'text', entry.text),
          element('span', 'state', entry.applied ? 'sent to the model' : 'waiting for the next model request'),
        );
        return;
      }
      case 'retry':
        node.textContent =
          `Model unavailable (${entry.reason}); retrying in ${Math.round(entry.delayMs / 100) / 10} s ` +
          `(attempt ${entry.attempt + 1} of ${entry.maxAttempts}).`;
        return;
      case 'plan': {
        const list = element('ol');
        for (const step of entry.plan) {
          const item = element('li', undefined, step.step);
          item.dataset.status = step.status;
          list.append(item);
        }
        node.replaceChildren(element('div', 'label', 'Plan'));
        if (entry.explanation !== undefined) {
          node.append(element('div', 'explanation', entry.explanation));
        }
        node.append(list);
        return;
      }
    }
  }

  private updateTool(view: EntryView, entry: ToolCallEntry): void {
    const node = view.node as HTMLDetailsElement;
    node.dataset.status = entry.status;
    const stop = query<HTMLButtonElement>(node, 'button.stop');
    stop.hidden = entry.status !== 'running';
    query(node, '.title').innerHTML = markdown.renderInline(entry.title);
    query(node, '.state').textContent = toolStatusLabel(entry);
    query<HTMLElement>(node, 'summary').title = JSON.stringify(entry.arguments, null, 2) ?? '';
    const args = node.querySelector('.args');
    if (args !== null && typeof (entry.arguments as { patch?: unknown })?.patch === 'string') {
      args.textContent = (entry.arguments as { patch: string }).patch;
    }
    if (entry.sources !== undefined && node.querySelector('.sources') === null) {
      const sources = links(entry.sources);
      sources.classList.add('sources');
      node.append(sources);
    }
    const output = query<HTMLElement>(node, '.output');
    if (entry.droppedOutput === view.dropped && entry.output.length >= view.shown) {
      // Only new text arrived: append it, do not redraw what is there.
      if (entry.output.length > view.shown) {
        output.append(document.createTextNode(entry.output.slice(view.shown)));
      }
    } else {
      output.textContent = (entry.droppedOutput > 0 ? `… ${entry.droppedOutput} characters dropped …\n` : '') + entry.output;
    }
    view.shown = entry.output.length;
    view.dropped = entry.droppedOutput;
    output.hidden = entry.output === '';
    if (entry.diff !== undefined) {
      // The diff replaces the patch's text; the entry stays open on it (the diff itself folds).
      renderDiff(node, entry.diff, (diff) => vscode.postMessage({ type: 'openDiff', diff }));
      args?.setAttribute('hidden', '');
    }
    if (!view.toggled) {
      node.open = entry.status === 'running' || entry.diff !== undefined;
    }
  }
}

/** A compaction, in its turn or on its own: what it did, and the summary (folded). */
function renderCompaction(node: HTMLElement, compaction: Compaction | CompactionItem): void {
  node.dataset.state = compaction.state;
  node.replaceChildren(element('div', 'label', compactionSummary(compaction)));
  if (compaction.summary !== undefined && compaction.summary !== '') {
    const details = element('details');
    details.append(element('summary', undefined, 'Summary'), element('div', 'text', compaction.summary));
    node.append(details);
  }
}

/** Numbered links; the webview host opens them in the browser. */
function links(sources: Array<Citation | Source>): HTMLElement {
  const list = element('ol', 'links');
  const seen = new Set<string>();
  for (const source of sources) {
    if (seen.has(source.url) || !/^https?:\/\//.test(source.url)) {
      continue;
    }
    seen.add(source.url);
    const anchor = element('a', undefined, source.title ?? source.url);
    anchor.href = source.url;
    anchor.title = source.url;
    const item = element('li');
    item.append(anchor);
    list.append(item);
  }
  return list;
}

// --- the page ------------------------------------------------------------------------------

const root = query<HTMLElement>(document, '#transcript');
const renderer = new TranscriptRenderer(root);
const prompt = query<HTMLTextAreaElement>(document, '#prompt');
let state: ViewState | undefined;

function showState(next: ViewState): void {
  state = next;
  document.body.dataset.state = next.state;
  const badge = query<HTMLElement>(document, '.pane-state');
  badge.dataset.state = next.state;
  badge.textContent = next.state;
  query(document, '.pane-settings').textContent = `effort: ${next.effort}${next.fastMode ? ' · fast' : ''}`;
  const meter = query<HTMLElement>(document, '.pane-context');
  meter.hidden = next.context === undefined;
  if (next.context !== undefined) {
    const percent = contextPercent(next.context);
    meter.textContent = `${percent}% of context`;
    meter.title = contextSummary(next.context);
    meter.dataset.level = percent >= 85 ? 'high' : percent >= 60 ? 'medium' : 'low';
    meter.style.setProperty('--fill', `${percent}%`);
  }
  const isMain = next.pane === 'main';
  query<HTMLButtonElement>(document, '[data-action="fork"]').hidden = !isMain || next.fork !== undefined;
  query<HTMLButtonElement>(document, '[data-action="closePane"]').hidden = isMain;
  query<HTMLButtonElement>(document, '[data-action="steer"]').disabled = next.state !== 'running';
  query<HTMLButtonElement>(document, '[data-action="cancel"]').disabled = next.state !== 'running';
}

function send(kind: 'ask' | 'steer'): void {
  const text = prompt.value.trim();
  if (text === '') {
    return;
  }
  vscode.postMessage({ type: kind, text });
  prompt.value = '';
}

prompt.addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    send(state?.state === 'running' ? 'steer' : 'ask');
  }
});

for (const button of document.querySelectorAll<HTMLButtonElement>('button[data-action]')) {
  button.addEventListener('click', () => {
    const action = button.dataset.action;
    if (action === 'ask' || action === 'steer') {
      send(action);
    } else if (action === 'cancel' || action === 'fork' || action === 'closePane') {
      vscode.postMessage({ type: action });
    }
  });
}

window.addEventListener('message', (event: MessageEvent<HostMessage>) => {
  const message = event.data;
  switch (message.type) {
    case 'replay':
      showState(message.state);
      renderer.replay(message.inputs);
      return;
    case 'append':
      renderer.apply(message.inputs);
      return;
    case 'state':
      showState(message.state);
      return;
  }
});

vscode.postMessage({ type: 'ready' });
