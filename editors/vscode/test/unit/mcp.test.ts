import * as assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { serverItem, showMcpServers, summary } from '../../src/mcp';
import type { McpServer, McpServersResult } from '../../src/protocol';
import { FakeClient } from '../support/fakeClient';
import { FakeUi } from '../support/fakeUi';

const ready: McpServer = {
  name: 'everything',
  status: 'ready',
  tools: 2,
  toolNames: ['echo', 'get-sum'],
  source: 'options',
  transport: 'stdio',
  command: 'node everything.js stdio',
  restarts: 0,
};
const failed: McpServer = {
  name: 'db',
  status: 'failed',
  tools: 0,
  toolNames: [],
  error: 'cannot start psql-mcp: command not found\nlast lines of its stderr:\n…',
  source: 'project',
  transport: 'stdio',
  command: 'psql-mcp',
  restarts: 0,
};

function setUp(result: McpServersResult): { client: FakeClient; ui: FakeUi } {
  const client = new FakeClient();
  client.handlers.set('agent/mcpServers', async () => result);
  client.handlers.set('agent/mcpRestart', async ({ name }) => ({ ...ready, name, status: 'starting' }));
  client.handlers.set('agent/mcpRevoke', async ({ name }) => ({ revoked: [name] }));
  return { client, ui: new FakeUi() };
}

describe('AgentLS: MCP Servers', () => {
  test('lists every server with its status, tools and what runs or why it failed', async () => {
    const { client, ui } = setUp({ servers: [ready, failed] });
    await showMcpServers(client, ui);
    const [list] = ui.shown;
    assert.equal(list.title, 'AgentLS: MCP Servers');
    assert.deepEqual(
      list.items.map((item) => [item.label, item.description, item.detail]),
      [
        ['$(pass) everything', 'ready · 2 tools · options, stdio', 'node everything.js stdio'],
        ['$(error) db', 'failed · 0 tools · project, stdio', 'cannot start psql-mcp: command not found'],
      ],
    );
    assert.equal(summary({ ...ready, tools: 1 }), 'ready · 1 tool · options, stdio');
    assert.equal(serverItem({ ...failed, status: 'disabled', error: undefined }).label, '$(circle-slash) db');
  });

  test('Restart restarts the server; Show Tools lists its tools', async () => {
    const { client, ui } = setUp({ servers: [ready, failed] });
    ui.picks.push('everything', 'restart');
    await showMcpServers(client, ui);
    assert.deepEqual(client.requests.at(-1), { method: 'agent/mcpRestart', params: { name: 'everything' }, token: undefined });
    assert.deepEqual(ui.infos, ['AgentLS: restarting the MCP server everything.']);
    assert.deepEqual(
      ui.shown[1].items.map((item) => item.value),
      ['restart', 'tools'], // ready, from the options: nothing to show or revoke
    );
    ui.picks.push('everything', 'tools');
    await showMcpServers(client, ui);
    assert.deepEqual(
      ui.shown.at(-1)?.items.map((item) => item.label),
      ['echo', 'get-sum'],
    );
  });

  test('a failed project server shows its error and can lose its permission', async () => {
    const { client, ui } = setUp({ servers: [failed] });
    ui.picks.push('db', 'error');
    await showMcpServers(client, ui);
    assert.deepEqual(ui.shown[1].items.map((item) => item.value), ['restart', 'error', 'revoke']);
    assert.match(ui.errors[0], /^AgentLS: MCP server db: cannot start psql-mcp: command not found/);
    ui.picks.push('db', 'revoke');
    await showMcpServers(client, ui);
    assert.deepEqual(client.requests.at(-1)?.params, { name: 'db' });
    assert.match(ui.infos[0], /db may no longer start/);
  });

  test('no servers, configuration problems, and a server that is not running', async () => {
    const none = setUp({ servers: [] });
    await showMcpServers(none.client, none.ui);
    assert.match(none.ui.infos[0], /no MCP servers are configured/);
    assert.equal(none.ui.shown.length, 0);

    const broken = setUp({ servers: [], problems: ['/ws/.mcp.json: not valid JSON'] });
    broken.ui.picks.push('\u0000problems');
    await showMcpServers(broken.client, broken.ui);
    assert.deepEqual(broken.ui.errors, ['AgentLS: MCP configuration: /ws/.mcp.json: not valid JSON']);

    const down = new FakeClient();
    const ui = new FakeUi();
    down.handlers.set('agent/mcpServers', () => Promise.reject({ code: -32096, message: 'not running' }));
    await showMcpServers(down, ui);
    assert.match(ui.errors[0], /not running: run AgentLS: Restart Server/);
  });
});
