/** Where things are, and small waiting helpers for the tests (no plain sleeps: wait for a condition). */

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** editors/vscode */
export const EXTENSION_DIR = findUp(__dirname, 'package.json', (dir) => fs.existsSync(path.join(dir, 'src', 'extension.ts')));
/** The repository root (it has pyproject.toml). */
export const REPO_DIR = findUp(EXTENSION_DIR, 'pyproject.toml');

export const PYTHON = process.env.AGENTLS_PYTHON ?? path.join(REPO_DIR, '.venv', 'bin', 'python');
export const AGENTLS = process.env.AGENTLS_BIN ?? path.join(REPO_DIR, '.venv', 'bin', 'agentls');
export const FAKE_MODEL_SCRIPT = path.join(EXTENSION_DIR, 'test', 'support', 'fake_model.py');

function findUp(start: string, marker: string, accept: (dir: string) => boolean = () => true): string {
  let dir = start;
  for (;;) {
    if (fs.existsSync(path.join(dir, marker)) && accept(dir)) {
      return dir;
    }
    const parent = path.dirname(dir);
    if (parent === dir) {
      throw new Error(`no ${marker} above ${start}`);
    }
    dir = parent;
  }
}

export function tempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `agentls-${prefix}-`));
}

/** Resolve when `check()` returns a value other than undefined/false; poll every `intervalMs`. */
export async function waitFor<T>(
  what: string,
  check: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 15_000,
  intervalMs = 25,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) {
      return value;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

export function pidAlive(pid: number): boolean {
  // /proc/<pid> of a zombie still exists; a zombie is dead for our purposes.
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    return !/^State:\s+Z/m.test(status);
  } catch {
    return false;
  }
}

export function pidsIn(text: string): number[] {
  return [...text.matchAll(/pid=(\d+)/g)].map((match) => Number(match[1]));
}

/**
 * Live processes whose command line contains `needle`, by their real pids.
 * A sandboxed command cannot print its real pid (it has its own pid
 * namespace): tests give it a unique argument and find it by that.
 */
export function processesWith(needle: string): number[] {
  const pids: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) {
      continue;
    }
    try {
      const cmdline = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (cmdline.includes(needle) && pidAlive(Number(entry))) {
        pids.push(Number(entry));
      }
    } catch {
      // gone, or not ours to read
    }
  }
  return pids;
}

/** A `sleep` duration no other test uses: 300.<unique digits>. */
export function uniqueDuration(): string {
  return `300.${process.pid}${Date.now() % 1_000_000}${Math.floor(Math.random() * 1000)}`;
}
