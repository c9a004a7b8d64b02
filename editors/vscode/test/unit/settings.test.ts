import * as assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  type Settings,
  configurationChange,
  initializationOptions,
  needsRestart,
  readSettings,
  splitCommandLine,
} from '../../src/settings';

function reader(values: Record<string, unknown>) {
  return { get: <T>(key: string) => values[key] as T | undefined };
}

const defaults: Settings = readSettings(reader({}));

describe('settings', () => {
  test('defaults when nothing is set', () => {
    assert.deepEqual(defaults, {
      model: '',
      baseUrl: '',
      effort: 'medium',
      fastMode: false,
      serverCommand: [],
      pythonPath: '',
      reattach: true,
      sessionRetention: 200,
    });
  });

  test('values are read and cleaned; a bad effort falls back to the default', () => {
    const settings = readSettings(
      reader({
        model: ' gpt-test ',
        baseUrl: 'http://127.0.0.1:9/v1',
        effort: 'turbo',
        fastMode: true,
        serverCommand: '/opt/my agent/bin/agentls serve',
        pythonPath: '/usr/bin/python3',
      }),
    );
    assert.equal(settings.model, 'gpt-test');
    assert.equal(settings.effort, 'medium');
    assert.equal(settings.fastMode, true);
    assert.deepEqual(settings.serverCommand, ['/opt/my', 'agent/bin/agentls', 'serve']);
    assert.deepEqual(readSettings(reader({ serverCommand: ['/a b/agentls', 'serve', ''] })).serverCommand, [
      '/a b/agentls',
      'serve',
    ]);
  });

  test('initializationOptions leaves empty settings to the server', () => {
    assert.deepEqual(initializationOptions(defaults), { effort: 'medium', fastMode: false });
    assert.deepEqual(initializationOptions({ ...defaults, sessionRetention: 0 }), {
      effort: 'medium',
      fastMode: false,
      sessionRetention: 0,
    });
    assert.equal(readSettings(reader({ sessionRetention: -3 })).sessionRetention, 200);
    assert.equal(readSettings(reader({ reattach: false })).reattach, false);
    assert.deepEqual(
      initializationOptions({ ...defaults, model: 'm', baseUrl: 'http://x/v1', effort: 'high' }, '/ws'),
      { effort: 'high', fastMode: false, model: 'm', baseUrl: 'http://x/v1', workspace: '/ws' },
    );
  });

  test('didChangeConfiguration carries only what changed', () => {
    assert.equal(configurationChange(defaults, { ...defaults }), undefined);
    assert.deepEqual(configurationChange(defaults, { ...defaults, model: 'other' }), {
      settings: { agentls: { model: 'other' } },
    });
    assert.deepEqual(configurationChange(defaults, { ...defaults, effort: 'low', fastMode: true, baseUrl: 'u' }), {
      settings: { agentls: { baseUrl: 'u', effort: 'low', fastMode: true } },
    });
    assert.equal(configurationChange(defaults, { ...defaults, pythonPath: '/p' }), undefined);
  });

  test('a new server command or Python needs a restart; the rest does not', () => {
    assert.equal(needsRestart(defaults, { ...defaults, model: 'x', effort: 'high' }), false);
    assert.equal(needsRestart(defaults, { ...defaults, pythonPath: '/p' }), true);
    assert.equal(needsRestart(defaults, { ...defaults, serverCommand: ['agentls', 'serve'] }), true);
    assert.equal(needsRestart(defaults, { ...defaults, reattach: false }), true);
    assert.equal(needsRestart(defaults, { ...defaults, sessionRetention: 5 }), true);
  });

  test('command lines split like a shell', () => {
    assert.deepEqual(splitCommandLine('agentls serve'), ['agentls', 'serve']);
    assert.deepEqual(splitCommandLine(`  "/opt/my tools/agentls"   serve --log-level 'DEBUG' `), [
      '/opt/my tools/agentls',
      'serve',
      '--log-level',
      'DEBUG',
    ]);
    assert.deepEqual(splitCommandLine('a\\ b "c\\"d" \'\''), ['a b', 'c"d', '']);
    assert.deepEqual(splitCommandLine(''), []);
  });
});
