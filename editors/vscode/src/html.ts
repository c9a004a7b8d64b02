/** The transcript webview's HTML: a strict Content-Security-Policy, no remote resources. */

import { randomBytes } from 'node:crypto';

export function nonce(): string {
  return randomBytes(18).toString('base64');
}

export interface PageParts {
  /** `webview.cspSource` */
  cspSource: string;
  nonce: string;
  scriptUri: string;
  styleUri: string;
  pane: string;
}

export function contentSecurityPolicy(cspSource: string, scriptNonce: string): string {
  return [
    "default-src 'none'",
    `style-src ${cspSource}`,
    `script-src 'nonce-${scriptNonce}'`,
    `img-src ${cspSource} data:`,
    `font-src ${cspSource}`,
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
}

function escapeAttribute(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export function transcriptHtml(parts: PageParts): string {
  const csp = contentSecurityPolicy(parts.cspSource, parts.nonce);
  const pane = escapeAttribute(parts.pane);
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${escapeAttribute(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${escapeAttribute(parts.styleUri)}">
<title>AgentLS: ${pane}</title>
</head>
<body data-pane="${pane}">
<header class="bar">
  <nav class="tabs" role="tablist" aria-label="Panes" hidden></nav>
  <span class="pane-name">${pane}</span>
  <span class="pane-state" data-state="idle">idle</span>
  <span class="pane-context" hidden></span>
  <span class="spacer"></span>
  <button type="button" class="secondary" data-action="fork" title="Fork this conversation into a second pane: try another direction without losing this one">Fork</button>
  <button type="button" class="secondary" data-action="closePane" title="Close this pane: its turns are cancelled">Close Pane</button>
</header>
<p class="empty">Ask the agent something: type below, or select code and run <em>AgentLS: Ask About Selection</em>.</p>
<div id="transcripts" aria-live="polite"></div>
<footer class="composer">
  <textarea id="prompt" rows="3" placeholder="Ask, or steer a running turn… (Enter sends, Shift+Enter: new line)" aria-label="Prompt"></textarea>
  <div class="composer-bar">
    <button type="button" class="chip" data-action="effort" title="Reasoning effort of this pane: click to change">effort: medium</button>
    <span class="fast-mode" title="Fast mode: the priority service tier" hidden>fast</span>
    <span class="spacer"></span>
    <button type="button" class="secondary" data-action="stop" title="Stop the running turn (its commands are killed; the receipt says what)" hidden>Stop</button>
    <button type="button" class="secondary" data-action="steer" title="Tell the running turn (Enter, while a turn runs)" hidden>Steer</button>
    <button type="button" data-action="ask" title="Ask (queues behind a running turn)">Ask</button>
  </div>
</footer>
<script nonce="${escapeAttribute(parts.nonce)}" src="${escapeAttribute(parts.scriptUri)}"></script>
</body>
</html>
`;
}
