/**
 * Which command starts the server, and whether it can run, decided before a
 * language client is created: a missing server becomes one sentence that
 * names what was tried, never a failed client start with a stack trace.
 */

import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Settings } from './settings';

export type ServerCommandSource = 'agentls.serverCommand' | 'agentls.pythonPath' | 'Python extension' | 'PATH';

export interface ServerCommand {
  command: string;
  args: string[];
  source: ServerCommandSource;
  /** The candidates passed over before this one, and why (for the message when it cannot run). */
  skipped: string[];
}

export interface ServerCommandProbes {
  /** The interpreter the Python extension has selected, if it is installed. */
  pythonExtensionInterpreter(): Promise<string | undefined>;
  /** Whether `python -c "import agentls"` works. */
  hasAgentls(python: string): Promise<boolean>;
  /** The executable `command` names (a path, relative to `cwd`, or a name looked up on PATH), if there is one. */
  findExecutable(command: string, cwd: string): Promise<string | undefined>;
}

/**
 * How to start the server: `agentls.serverCommand`, else `agentls.pythonPath
 * -m agentls serve`, else the Python extension's interpreter (when it has
 * agentls installed), else `agentls serve` from PATH.
 */
export async function resolveServerCommand(settings: Settings, probes: ServerCommandProbes): Promise<ServerCommand> {
  if (settings.serverCommand.length > 0) {
    const [command, ...args] = settings.serverCommand;
    return { command, args, source: 'agentls.serverCommand', skipped: [] };
  }
  if (settings.pythonPath !== '') {
    return { command: settings.pythonPath, args: ['-m', 'agentls', 'serve'], source: 'agentls.pythonPath', skipped: [] };
  }
  const skipped = ['agentls.serverCommand and agentls.pythonPath are not set'];
  const python = await probes.pythonExtensionInterpreter().catch(() => undefined);
  if (python !== undefined && python !== '') {
    if (await probes.hasAgentls(python).catch(() => false)) {
      return { command: python, args: ['-m', 'agentls', 'serve'], source: 'Python extension', skipped };
    }
    skipped.push(`the Python extension's interpreter ${python} has no agentls`);
  } else {
    skipped.push('no Python extension interpreter');
  }
  return { command: 'agentls', args: ['serve'], source: 'PATH', skipped };
}

/**
 * The arguments the server is started with: a resolved `serve` goes through
 * `serve --reattach` (the server outlives a window reload) unless
 * `agentls.reattach` is off; `agentls.serverCommand` is used as written.
 * Not on Windows: `--reattach` needs a Unix socket.
 */
export function spawnArgs(command: ServerCommand, reattach: boolean, platform: string = process.platform): string[] {
  const add = reattach && command.source !== 'agentls.serverCommand' && platform !== 'win32';
  return add ? [...command.args, '--reattach'] : command.args;
}

/** Whether the server this command starts outlives the editor (it goes through --reattach). */
export function reattaches(args: string[]): boolean {
  return args.includes('--reattach');
}

/** What to do when the server cannot be found (the install instructions of docs/install.md). */
export const INSTALL_ADVICE =
  'Install agentls: in a clone of its repository run "pipx install ." (or "pip install ."); ' +
  'or set agentls.serverCommand or agentls.pythonPath';

/**
 * Why `command` cannot start the server, or undefined when it can be tried:
 * a sentence for the user that says what to do, without a final full stop.
 */
export async function serverCommandProblem(
  command: ServerCommand,
  probes: ServerCommandProbes,
  cwd: string,
): Promise<string | undefined> {
  const found = await probes.findExecutable(command.command, cwd);
  switch (command.source) {
    case 'agentls.serverCommand':
      return found === undefined ? `agentls.serverCommand: ${notFound(command.command)}. Fix the setting` : undefined;
    case 'agentls.pythonPath':
      if (found === undefined) {
        return `agentls.pythonPath: ${notFound(command.command)}. Fix the setting`;
      }
      return (await probes.hasAgentls(found))
        ? undefined
        : `agentls.pythonPath: ${command.command} has no agentls installed. ` +
            `Install it into that Python (in a clone of agentls: "${command.command} -m pip install ."), or fix the setting`;
    case 'Python extension':
      return found === undefined
        ? `the Python extension's interpreter: ${notFound(command.command)}. Select another interpreter`
        : undefined;
    case 'PATH':
      return found === undefined
        ? `agentls is not on PATH (${command.skipped.join('; ')}). ${INSTALL_ADVICE}`
        : undefined;
  }
}

function notFound(command: string): string {
  return hasDirectory(command) ? `${command} does not exist or is not executable` : `${command} is not on PATH`;
}

function hasDirectory(command: string): boolean {
  return command.includes('/') || (process.platform === 'win32' && command.includes('\\'));
}

async function isExecutableFile(file: string): Promise<boolean> {
  try {
    const stat = await fs.promises.stat(file);
    if (!stat.isFile()) {
      return false;
    }
    await fs.promises.access(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** `findExecutable` of the Node process: a path as it is, a bare name on PATH (with PATHEXT on Windows). */
export async function findExecutable(
  command: string,
  env: NodeJS.ProcessEnv = process.env,
  cwd: string = process.cwd(),
): Promise<string | undefined> {
  const extensions = process.platform === 'win32' ? ['', ...(env.PATHEXT ?? '.EXE;.CMD;.BAT').split(';')] : [''];
  const candidates = hasDirectory(command)
    ? extensions.map((extension) => path.resolve(cwd, command + extension))
    : (env.PATH ?? '')
        .split(path.delimiter)
        .filter((dir) => dir !== '')
        .flatMap((dir) => extensions.map((extension) => path.join(dir, command + extension)));
  for (const candidate of candidates) {
    if (await isExecutableFile(candidate)) {
      return candidate;
    }
  }
  return undefined;
}

export function hasAgentls(python: string): Promise<boolean> {
  return new Promise((resolve) => {
    execFile(python, ['-c', 'import agentls'], { timeout: 15_000 }, (error) => resolve(error === null));
  });
}
