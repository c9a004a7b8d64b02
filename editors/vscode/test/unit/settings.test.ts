import * as assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  type Settings,
  configurationChange,
  initializationOptions,
  mcpChanged,
  needsRestart,
  readSettings,
  restartReason,
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
      approval: 'on-request',
      sandbox: 'workspace-write',
      network: false,
      idleTimeout: 0,
      serverCommand: [],
      pythonPath: '',
      mcpServers: {},
      webSearch: false,
      contextWindow: 0,
      autoCompact: 0.85,
      reattach: true,
      sessionRetention: 200,
      review: false,
      saveAfterEdit: true,
      transcriptLocation: 'sideBar',
    });
  });

  test('approval, sandbox, network and idle timeout are read and checked', () => {
    const settings = readSettings(reader({ approval: 'always', sandbox: 'off', network: true, idleTimeout: 45 }));
    assert.deepEqual(
      [settings.approval, settings.sandbox, settings.network, settings.idleTimeout],
      ['always', 'off', true, 45],
    );
    const bad = readSettings(reader({ approval: 'sometimes', sandbox: 'on', network: 'yes', idleTimeout: -1 }));
    assert.deepEqual([bad.approval, bad.sandbox, bad.network, bad.idleTimeout], ['on-request', 'workspace-write', false, 0]);
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
    const base = {
      effort: 'medium',
      fastMode: false,
      approval: 'on-request',
      sandbox: 'workspace-write',
      network: false,
      webSearch: false,
      autoCompact: 0.85,
    };
    assert.deepEqual(initializationOptions(defaults), base);
    assert.deepEqual(initializationOptions({ ...defaults, sessionRetention: 0 }), { ...base, sessionRetention: 0 });
    assert.equal(readSettings(reader({ sessionRetention: -3 })).sessionRetention, 200);
    assert.equal(readSettings(reader({ reattach: false })).reattach, false);
    assert.equal(readSettings(reader({ saveAfterEdit: false })).saveAfterEdit, false);
    assert.deepEqual(initializationOptions({ ...defaults, review: true }), { ...base, review: true });
    assert.deepEqual(
      initializationOptions({ ...defaults, model: 'm', baseUrl: 'http://x/v1', effort: 'high' }, '/ws'),
      { ...base, effort: 'high', model: 'm', baseUrl: 'http://x/v1', workspace: '/ws' },
    );
    assert.equal(initializationOptions({ ...defaults, idleTimeout: 30 }).idleTimeout, 30);
    assert.deepEqual(initializationOptions({ ...defaults, contextWindow: 32768, webSearch: true }), {
      ...base,
      webSearch: true,
      contextWindow: 32768,
    });
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
    assert.deepEqual(configurationChange(defaults, { ...defaults, approval: 'always' }), {
      settings: { agentls: { approval: 'always' } },
    });
  });

  test('MCP servers go to initializationOptions and apply at the next start', () => {
    const servers = { fx: { command: 'python3', args: ['server.py'] } };
    const settings = readSettings(reader({ mcpServers: servers }));
    assert.deepEqual(initializationOptions(settings).mcpServers, servers);
    assert.equal(readSettings(reader({ mcpServers: ['not', 'an', 'object'] })).mcpServers.length, undefined);
    assert.equal(mcpChanged(defaults, settings), true);
    assert.equal(mcpChanged(settings, { ...settings, model: 'x' }), false);
    assert.equal(configurationChange(defaults, settings), undefined);
  });

  test('web search applies at once', () => {
    assert.deepEqual(configurationChange(defaults, { ...defaults, webSearch: true }), {
      settings: { agentls: { webSearch: true } },
    });
    assert.deepEqual(configurationChange(defaults, { ...defaults, review: true }), {
      settings: { agentls: { review: true } },
    });
  });

  test('the context window and auto-compaction are read, checked, and need a restart', () => {
    const read = readSettings(reader({ contextWindow: 65536.7, autoCompact: 0.5, webSearch: true }));
    assert.deepEqual([read.contextWindow, read.autoCompact, read.webSearch], [65536, 0.5, true]);
    const bad = readSettings(reader({ contextWindow: 10, autoCompact: 1.5 }));
    assert.deepEqual([bad.contextWindow, bad.autoCompact], [0, 0.85], 'out of range: the defaults');
    assert.equal(needsRestart(defaults, { ...defaults, contextWindow: 8192 }), true);
    assert.equal(needsRestart(defaults, { ...defaults, autoCompact: 0 }), true);
    assert.equal(needsRestart(defaults, { ...defaults, webSearch: true }), false);
  });

  test('a new server command or Python needs a restart; the rest does not', () => {
    assert.equal(needsRestart(defaults, { ...defaults, model: 'x', effort: 'high' }), false);
    assert.equal(needsRestart(defaults, { ...defaults, pythonPath: '/p' }), true);
    assert.equal(needsRestart(defaults, { ...defaults, serverCommand: ['agentls', 'serve'] }), true);
    assert.equal(needsRestart(defaults, { ...defaults, approval: 'never' }), false, 'approval applies at once');
    for (const change of [{ sandbox: 'off' as const }, { network: true }, { idleTimeout: 30 }]) {
      assert.equal(needsRestart(defaults, { ...defaults, ...change }), true, JSON.stringify(change));
    }
    assert.equal(restartReason(defaults, { ...defaults, network: true }), 'the sandbox settings changed');
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
