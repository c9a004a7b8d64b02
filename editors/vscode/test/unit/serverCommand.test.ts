import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import {
  type ServerCommandProbes,
  findExecutable,
  reattaches,
  resolveServerCommand,
  serverCommandProblem,
  spawnArgs,
} from '../../src/serverCommand';
import { type Settings, readSettings } from '../../src/settings';
import { tempDir } from '../support/env';

const defaults: Settings = readSettings({ get: () => undefined });

function probes(python: string | undefined, has: boolean, executables: string[] = []) {
  const checked: string[] = [];
  const found: ServerCommandProbes = {
    async pythonExtensionInterpreter() {
      return python;
    },
    async hasAgentls(candidate: string) {
      checked.push(candidate);
      return has;
    },
    async findExecutable(command: string) {
      return executables.includes(command) ? command : undefined;
    },
  };
  return { ...found, checked };
}

describe('the server command', () => {
  test('agentls.serverCommand wins', async () => {
    const command = await resolveServerCommand({ ...defaults, serverCommand: ['/x/agentls', 'serve'], pythonPath: '/p' }, probes('/py', true));
    assert.deepEqual(command, { command: '/x/agentls', args: ['serve'], source: 'agentls.serverCommand', skipped: [] });
  });

  test('then agentls.pythonPath', async () => {
    const command = await resolveServerCommand({ ...defaults, pythonPath: '/venv/bin/python' }, probes('/py', true));
    assert.deepEqual(command, {
      command: '/venv/bin/python',
      args: ['-m', 'agentls', 'serve'],
      source: 'agentls.pythonPath',
      skipped: [],
    });
  });

  test('then the Python extension interpreter, if it has agentls', async () => {
    const withIt = probes('/env/bin/python', true);
    assert.deepEqual(await resolveServerCommand(defaults, withIt), {
      command: '/env/bin/python',
      args: ['-m', 'agentls', 'serve'],
      source: 'Python extension',
      skipped: ['agentls.serverCommand and agentls.pythonPath are not set'],
    });
    assert.deepEqual(withIt.checked, ['/env/bin/python']);
    const without = await resolveServerCommand(defaults, probes('/env/bin/python', false));
    assert.equal(without.source, 'PATH');
    assert.deepEqual(without.skipped, [
      'agentls.serverCommand and agentls.pythonPath are not set',
      "the Python extension's interpreter /env/bin/python has no agentls",
    ]);
  });

  test('else agentls on PATH', async () => {
    assert.deepEqual(await resolveServerCommand(defaults, probes(undefined, true)), {
      command: 'agentls',
      args: ['serve'],
      source: 'PATH',
      skipped: ['agentls.serverCommand and agentls.pythonPath are not set', 'no Python extension interpreter'],
    });
    const failing = { ...probes(undefined, true), pythonExtensionInterpreter: () => Promise.reject(new Error('no API')) };
    assert.equal((await resolveServerCommand(defaults, failing)).source, 'PATH');
  });

  test('the check before the start says what is wrong and what to do', async () => {
    const cwd = '/ws';
    const problem = async (settings: Partial<Settings>, p: ServerCommandProbes) =>
      serverCommandProblem(await resolveServerCommand({ ...defaults, ...settings }, p), p, cwd);
    assert.equal(
      await problem({ serverCommand: ['/x/agentls', 'serve'] }, probes(undefined, true)),
      'agentls.serverCommand: /x/agentls does not exist or is not executable. Fix the setting',
    );
    assert.equal(
      await problem({ serverCommand: ['agentls-dev', 'serve'] }, probes(undefined, true)),
      'agentls.serverCommand: agentls-dev is not on PATH. Fix the setting',
    );
    assert.equal(await problem({ serverCommand: ['/x/agentls', 'serve'] }, probes(undefined, true, ['/x/agentls'])), undefined);
    assert.equal(
      await problem({ pythonPath: '/venv/bin/python' }, probes(undefined, true)),
      'agentls.pythonPath: /venv/bin/python does not exist or is not executable. Fix the setting',
    );
    assert.match(
      String(await problem({ pythonPath: '/venv/bin/python' }, probes(undefined, false, ['/venv/bin/python']))),
      /^agentls\.pythonPath: \/venv\/bin\/python has no agentls installed\. Install it into that Python/,
    );
    assert.equal(await problem({ pythonPath: '/venv/bin/python' }, probes(undefined, true, ['/venv/bin/python'])), undefined);
    assert.match(
      String(await problem({}, probes(undefined, false))),
      /^agentls is not on PATH \(agentls\.serverCommand and agentls\.pythonPath are not set; no Python extension interpreter\)\. /,
    );
    assert.equal(await problem({}, probes(undefined, false, ['agentls'])), undefined);
  });

  test('findExecutable: a path as it is (relative to the workspace), a bare name on PATH, only executable files', async () => {
    const dir = tempDir('which');
    const tool = path.join(dir, 'tool');
    fs.writeFileSync(tool, '#!/bin/sh\n', { mode: 0o755 });
    try {
      fs.writeFileSync(path.join(dir, 'plain'), 'not executable', { mode: 0o644 });
      fs.mkdirSync(path.join(dir, 'folder'));
      const env = { PATH: ['/nonexistent', dir].join(path.delimiter) };
      assert.equal(await findExecutable('tool', env, '/'), tool);
      assert.equal(await findExecutable(tool, {}, '/'), tool);
      assert.equal(await findExecutable('./tool', {}, dir), tool);
      assert.equal(await findExecutable('plain', env, '/'), undefined);
      assert.equal(await findExecutable('folder', env, '/'), undefined);
      assert.equal(await findExecutable('missing', env, '/'), undefined);
      assert.equal(await findExecutable('tool', {}, dir), undefined, 'a bare name is not looked up in the working directory');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a found server is started through --reattach unless agentls.reattach is off; a set command as written', async () => {
    const found = await resolveServerCommand(defaults, probes('/py', true));
    assert.deepEqual(spawnArgs(found, true, 'linux'), ['-m', 'agentls', 'serve', '--reattach']);
    assert.deepEqual(spawnArgs(found, false, 'linux'), ['-m', 'agentls', 'serve']);
    assert.deepEqual(spawnArgs(found, true, 'win32'), ['-m', 'agentls', 'serve']);
    const set = await resolveServerCommand({ ...defaults, serverCommand: ['/x/agentls', 'serve'] }, probes('/py', true));
    assert.deepEqual(spawnArgs(set, true, 'linux'), ['serve']);
    assert.equal(reattaches(['serve', '--reattach']), true);
    assert.equal(reattaches(['serve']), false);
  });
});
