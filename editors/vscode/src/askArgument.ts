/**
 * The argument of `agentls.ask` as the server's code actions send it
 * ("Ask agentls about this", "Fix with agentls"): `{prompt, uri?, range?, kind?}`.
 */

import type { Range } from './protocol';

export interface AskArgument {
  prompt: string;
  uri?: string;
  range?: Range;
  /** "ask": a question the user may edit first; "fix": a diagnostic to fix. */
  kind?: 'ask' | 'fix';
}

function isPosition(value: unknown): boolean {
  const position = value as { line?: unknown; character?: unknown } | null;
  return typeof position?.line === 'number' && typeof position.character === 'number';
}

/** The argument, or undefined when the command was run without one (the palette, a keybinding). */
export function askArgument(value: unknown): AskArgument | undefined {
  if (typeof value !== 'object' || value === null) {
    return undefined;
  }
  const { prompt, uri, range, kind } = value as Record<string, unknown>;
  if (typeof prompt !== 'string' || prompt.trim() === '') {
    return undefined;
  }
  const argument: AskArgument = { prompt };
  if (typeof uri === 'string') {
    argument.uri = uri;
    const { start, end } = (range ?? {}) as { start?: unknown; end?: unknown };
    if (isPosition(start) && isPosition(end)) {
      argument.range = range as Range;
    }
  }
  if (kind === 'ask' || kind === 'fix') {
    argument.kind = kind;
  }
  return argument;
}
