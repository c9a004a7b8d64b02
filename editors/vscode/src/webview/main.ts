/**
 * The transcript webview: one `Transcript` per pane it holds (the side bar
 * holds every pane, a tab each; an editor tab holds one), folded from the
 * host's batched inputs and redrawn, at most once per animation frame, only
 * where it changed. Markdown goes through markdown-it with raw HTML disabled;
 * code blocks are coloured by highlight.js and carry Copy and Insert;
 * everything else is text.
 */

import MarkdownIt from 'markdown-it';
import { type Advice, adviceFor } from '../advice';
import {
  compactionSummary,
  contextPercent,
  contextSummary,
  receiptSummary,
  retryLine,
  toolStatusLabel,
  turnHeading,
  usageSummary,
} from '../format';
import { type SelectionRef, selectionLabel, splitPrompt } from '../promptContext';
import type { Citation, SessionEntry, Source } from '../protocol';
import {
  type Compaction,
  type CompactionItem,
  type Earlier,
  type Entry,
  type Item,
  type Notice,
  type RetryEntry,
  type ToolCallEntry,
  Transcript,
  type TranscriptInput,
  type Turn,
} from '../transcript';
import type { HostMessage, PaneTab, ViewMessage, ViewState } from '../viewMessages';
import { highlight } from './highlight';
import { toolRenderers } from './toolEntries';

interface VsCodeApi {
  postMessage(message: ViewMessage): void;
}

declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();
const markdown = new MarkdownIt({
  html: false,
  linkify: true,
  typographer: false,
  highlight: (code, language) => highlight(code, language) ?? '',
});
// Link only what is written as a URL: `app.py` is a file, not a Paraguayan domain.
markdown.linkify.set({ fuzzyLink: false, fuzzyEmail: false });

// A fenced code block: its language, Copy and Insert above it (the clicks are handled below, once).
const fence = markdown.renderer.rules.fence!;
markdown.renderer.rules.fence = (tokens, index, options, env, self) => {
  const info = markdown.utils.unescapeAll(tokens[index].info).trim();
  const language = markdown.utils.escapeHtml(info.split(/\s+/)[0] ?? '');
  return (
    '<div class="code-block"><div class="code-head">' +
    `<span class="code-language">${language}</span>` +
    '<button type="button" class="code-action" data-code-action="copy" title="Copy the code">Copy</button>' +
    '<button type="button" class="code-action" data-code-action="insert" title="Insert at the cursor of the editor you used last">Insert</button>' +
    `</div>${fence(tokens, index, options, env, self)}</div>`
  );
};

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

function button(label: string, className: string, title: string, onClick: () => void): HTMLButtonElement {
  const node = element('button', className, label);
  node.type = 'button';
  node.title = title;
  node.addEventListener('click', (event) => {
    event.preventDefault();
    event.stopPropagation();
    onClick();
  });
  return node;
}

/** The buttons that go with an error: "Open agentls.baseUrl", "How to provide OPENAI_API_KEY to VS Code". */
function adviceButtons(advice: Advice[]): HTMLElement {
  const row = element('div', 'advice');
  for (const item of advice) {
    row.append(button(item.label, 'secondary', item.label, () => vscode.postMessage({ type: 'advice', action: item.action })));
  }
  return row;
}

/** `app.py:8–12`: the selection that went along with the prompt; a click shows those lines. */
function fileChip(ref: SelectionRef): HTMLElement {
  const lines = ref.startLine === ref.endLine ? `line ${ref.startLine}` : `lines ${ref.startLine}–${ref.endLine}`;
  const chip = button(selectionLabel(ref), 'file-chip', `${ref.path}, ${lines} (sent along with the prompt): click to show`, () =>
    vscode.postMessage({ type: 'reveal', ref: { path: ref.path, startLine: ref.startLine, endLine: ref.endLine } }),
  );
  chip.dataset.path = ref.path;
  return chip;
}

/** A prompt as the user wrote it, with the selection it carried as a chip (not the pasted text). */
function renderPrompt(container: HTMLElement, prompt: string, placeholder: string): void {
  const split = splitPrompt(prompt);
  const words = element('div', 'markdown');
  words.innerHTML = markdown.render(split.text.trim() === '' ? placeholder : split.text);
  container.replaceChildren(words);
  if (split.selection !== undefined || split.documents !== undefined) {
    const chips = element('div', 'chips');
    if (split.selection !== undefined) {
      chips.append(fileChip(split.selection));
    }
    if (split.documents !== undefined) {
      const open = element('span', 'documents', `${split.documents.length} open file${split.documents.length === 1 ? '' : 's'}`);
      open.title = split.documents.join('\n');
      chips.append(open);
    }
    container.append(chips);
  }
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

/** Retry lines that count down, in every pane: redrawn every half second while any waits. */
const waitingRetries = new Map<HTMLElement, RetryEntry>();
let retryTicker: number | undefined;

function renderRetry(node: HTMLElement, entry: RetryEntry): void {
  node.dataset.state = entry.state;
  node.title = entry.reason;
  node.replaceChildren(element('span', 'text', retryLine(entry, Date.now())));
  // While it waits: what to do about it; once the turn failed, its error has the buttons.
  const advice = entry.state === 'waiting' ? adviceFor(entry.failure) : [];
  if (advice.length > 0) {
    node.append(adviceButtons(advice));
  }
  if (entry.state === 'waiting') {
    waitingRetries.set(node, entry);
    retryTicker ??= window.setInterval(() => {
      for (const [line, waiting] of waitingRetries) {
        if (!line.isConnected || waiting.state !== 'waiting') {
          waitingRetries.delete(line);
        } else {
          query(line, '.text').textContent = retryLine(waiting, Date.now());
        }
      }
      if (waitingRetries.size === 0) {
        window.clearInterval(retryTicker);
        retryTicker = undefined;
      }
    }, 500);
  } else {
    waitingRetries.delete(node);
  }
}

class TranscriptRenderer {
  private transcript = new Transcript();
  private readonly items = new Map<string, HTMLElement>();
  private readonly turns = new Map<string, TurnView>();
  private readonly entries = new Map<number, EntryView>();
  private frame = 0;

  constructor(readonly root: HTMLElement) {}

  get isEmpty(): boolean {
    return this.transcript.items.length === 0;
  }

  replay(inputs: readonly TranscriptInput[]): void {
    this.transcript = new Transcript();
    this.clear();
    this.apply(inputs);
  }

  apply(inputs: readonly TranscriptInput[]): void {
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
    showEmpty();
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
      node.append(earlierEntry(entry));
    }
    return node;
  }

  private createTurn(turn: Turn): HTMLElement {
    const node = element('section', 'turn');
    node.dataset.turn = String(turn.id);
    const head = element('div', 'turn-head');
    head.append(element('span', 'who', 'You'), element('span', 'turn-status'));
    node.append(head, element('div', 'prompt'), element('div', 'entries'), element('div', 'turn-footer'));
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
    if (turn.number !== undefined) {
      node.dataset.number = String(turn.number);
    }
    const activity = turn.status === 'running' && turn.activity !== undefined ? ` · ${turn.activity}` : '';
    query(node, '.turn-status').textContent = `${turnHeading(turn)}${activity}`;
    if (view.prompt !== turn.prompt) {
      view.prompt = turn.prompt;
      renderPrompt(query(node, '.prompt'), turn.prompt, '*(queued prompt)*');
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
      const advice = adviceFor(turn.failure);
      if (advice.length > 0) {
        footer.append(adviceButtons(advice));
      }
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
      case 'tool':
        return this.createTool(entry);
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

  /** A tool call: its title, state and Stop button in the summary; arguments and output below. */
  private createTool(entry: ToolCallEntry): HTMLElement {
    const node = element('details', 'entry tool');
    node.dataset.call = entry.callId;
    node.dataset.tool = entry.tool;
    const summary = element('summary');
    const stop = button('Stop', 'stop secondary', 'Stop this command (the turn goes on)', () => {
      stop.disabled = true;
      vscode.postMessage({ type: 'stopTool', callId: entry.callId });
    });
    summary.append(element('span', 'icon'), element('span', 'title'), element('span', 'state'), stop);
    node.append(summary);
    toolRenderers.get(entry.tool)?.create(node, entry);
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
        renderRetry(node, entry);
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
    toolRenderers.get(entry.tool)?.update(node, entry, (message) => vscode.postMessage(message));
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
    if (!view.toggled) {
      // An entry with a diff stays open on it (the diff itself folds).
      node.open = entry.status === 'running' || entry.diff !== undefined;
    }
  }
}

/** One entry of an earlier conversation (a resumed session, what a fork inherited). */
function earlierEntry(entry: SessionEntry): HTMLElement {
  const row = element('div', `earlier-entry ${entry.role}`);
  row.dataset.role = entry.role;
  if (entry.role === 'user') {
    row.append(element('div', 'who', 'You'));
    const prompt = element('div', 'prompt');
    renderPrompt(prompt, entry.text, '');
    row.append(prompt);
  } else if (entry.role === 'assistant' || entry.role === 'summary') {
    if (entry.role === 'summary') {
      row.append(element('div', 'who', 'Summary of earlier turns'));
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
  return row;
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

const container = query<HTMLElement>(document, '#transcripts');
const prompt = query<HTMLTextAreaElement>(document, '#prompt');
const renderers = new Map<string, TranscriptRenderer>();
const states = new Map<string, ViewState>();
let shown = document.body.dataset.pane ?? 'main';

function renderer(pane: string): TranscriptRenderer {
  let found = renderers.get(pane);
  if (found === undefined) {
    const root = element('main', 'transcript');
    root.dataset.pane = pane;
    root.hidden = pane !== shown;
    container.append(root);
    found = new TranscriptRenderer(root);
    renderers.set(pane, found);
  }
  return found;
}

function showEmpty(): void {
  document.body.classList.toggle('has-items', renderers.get(shown)?.isEmpty === false);
}

function showPane(pane: string): void {
  shown = pane;
  document.body.dataset.pane = pane;
  for (const [name, view] of renderers) {
    view.root.hidden = name !== pane;
  }
  for (const tab of document.querySelectorAll<HTMLButtonElement>('.tabs button')) {
    tab.setAttribute('aria-selected', String(tab.dataset.pane === pane));
  }
  const state = states.get(pane);
  if (state !== undefined) {
    showState(state);
  }
  showEmpty();
}

function showTabs(panes: PaneTab[], tabs: boolean): void {
  const nav = query<HTMLElement>(document, '.tabs');
  nav.hidden = !tabs;
  query<HTMLElement>(document, '.pane-name').hidden = tabs;
  nav.replaceChildren(
    ...panes.map(({ pane, state }) => {
      const tab = button(pane, 'tab', `${pane}: ${state}`, () => {
        showPane(pane);
        vscode.postMessage({ type: 'showPane', pane });
      });
      tab.setAttribute('role', 'tab');
      tab.dataset.pane = pane;
      tab.dataset.state = state;
      return tab;
    }),
  );
  for (const [name, view] of [...renderers]) {
    if (!panes.some((tab) => tab.pane === name)) {
      view.root.remove();
      renderers.delete(name);
      states.delete(name);
    }
  }
}

function showState(next: ViewState): void {
  states.set(next.pane, next);
  if (next.pane !== shown) {
    return;
  }
  document.body.dataset.state = next.state;
  const badge = query<HTMLElement>(document, '.pane-state');
  badge.dataset.state = next.state;
  badge.textContent = next.state;
  query(document, '.pane-name').textContent = next.pane;
  const effort = query<HTMLButtonElement>(document, '[data-action="effort"]');
  effort.textContent = `effort: ${next.effort}`;
  effort.title = `Reasoning effort of ${next.pane}: ${next.effort}. Click to change.`;
  query<HTMLElement>(document, '.fast-mode').hidden = !next.fastMode;
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
  const running = next.state === 'running';
  query<HTMLButtonElement>(document, '[data-action="fork"]').hidden = !isMain || next.fork !== undefined;
  query<HTMLButtonElement>(document, '[data-action="closePane"]').hidden = isMain;
  query<HTMLButtonElement>(document, '[data-action="steer"]').hidden = !running;
  const stop = query<HTMLButtonElement>(document, '[data-action="stop"]');
  stop.hidden = !running;
  stop.disabled = false;
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
    send(states.get(shown)?.state === 'running' ? 'steer' : 'ask');
  }
});

for (const action of document.querySelectorAll<HTMLButtonElement>('button[data-action]')) {
  action.addEventListener('click', () => {
    const name = action.dataset.action;
    if (name === 'ask' || name === 'steer') {
      send(name);
    } else if (name === 'stop') {
      action.disabled = true; // until the state says whether the turn ended
      vscode.postMessage({ type: 'stop' });
    } else if (name === 'fork' || name === 'closePane' || name === 'effort') {
      vscode.postMessage({ type: name });
    }
  });
}

/** The code of a block, as written (without the fence's last newline). */
function codeOf(block: Element): string {
  return (block.querySelector('pre code')?.textContent ?? '').replace(/\n$/, '');
}

/** Copy in the webview when it may write the clipboard (Chromium), else through the extension. */
async function copy(text: string): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    vscode.postMessage({ type: 'copy', text });
  }
}

container.addEventListener('click', (event) => {
  const target = (event.target as Element | null)?.closest<HTMLButtonElement>('[data-code-action]');
  const block = target?.closest('.code-block');
  if (target === null || target === undefined || block === null || block === undefined) {
    return;
  }
  const text = codeOf(block);
  if (target.dataset.codeAction === 'copy') {
    void copy(text).then(() => {
      target.textContent = 'Copied';
      target.dataset.done = 'true';
      window.setTimeout(() => {
        target.textContent = 'Copy';
        delete target.dataset.done;
      }, 1500);
    });
  } else {
    vscode.postMessage({ type: 'insert', text });
  }
});

window.addEventListener('message', (event: MessageEvent<HostMessage>) => {
  const message = event.data;
  switch (message.type) {
    case 'replay':
      showState(message.state);
      renderer(message.pane).replay(message.inputs);
      return;
    case 'append':
      renderer(message.pane).apply(message.inputs);
      return;
    case 'state':
      showState(message.state);
      return;
    case 'panes':
      showTabs(message.panes, message.tabs);
      for (const tab of message.panes) {
        renderer(tab.pane);
      }
      showPane(message.shown);
      return;
  }
});

vscode.postMessage({ type: 'ready' });
