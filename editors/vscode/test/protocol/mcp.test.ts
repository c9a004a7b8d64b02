/**
 * AgentLS: MCP Servers and MCP tool calls against the real server, with the
 * MCP server the Python tests use (tests/mcp_fixture.py, written with the
 * `mcp` SDK) and the fake model.
 */

import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import { AgentController } from '../../src/controller';
import { showMcpServers } from '../../src/mcp';
import type { McpServersResult } from '../../src/protocol';
import type { ToolCallEntry } from '../../src/transcript';
import { PYTHON, REPO_DIR, waitFor } from '../support/env';
import { stoppedAfterEach } from '../support/cleanup';
import { FakeModel } from '../support/fakeModel';
import { FakeUi } from '../support/fakeUi';
import { ServerProcess } from '../support/server';

const FIXTURE = path.join(REPO_DIR, 'tests', 'mcp_fixture.py');

const running = stoppedAfterEach();

describe('MCP servers against the real server', () => {
  test('the command lists them, restarts one, and an MCP tool call shows as NAME › TOOL', async () => {
    const fake = await FakeModel.start([
      { tool_call: { name: 'mcp__fx__pid', arguments: {} } },
      'It runs as a process of its own.',
    ]);
    running.push(fake);
    const server = await ServerProcess.start({
      baseUrl: fake.baseUrl,
      mcpServers: {
        fx: { command: PYTHON, args: [FIXTURE] },
        broken: { command: 'agentls-no-such-mcp-server' },
      },
    });
    running.push(server);
    const servers = async (): Promise<McpServersResult> => server.request<McpServersResult>('agent/mcpServers', {});
    await waitFor('fx to be ready and broken to fail', async () => {
      const { servers: list } = await servers();
      return list.every((s) => s.status === 'ready' || s.status === 'failed') && list.length === 2;
    });

    const ui = new FakeUi();
    ui.picks.push('fx', 'tools');
    await showMcpServers(server, ui);
    assert.deepEqual(
      ui.shown[0].items.map((item) => item.label),
      ['$(pass) fx', '$(error) broken'],
    );
    assert.match(String(ui.shown[0].items[1].detail), /command not found/);
    assert.ok(ui.shown[2].items.some((item) => item.label === 'notes.write'));

    const controller = new AgentController(server, ui);
    server.onEvent((event) => controller.handleEvent(event));
    controller.serverStarted({ effort: 'medium', fastMode: false });
    const result = await controller.submit('main', 'Which process are you?');
    assert.equal(result?.status, 'completed');
    const [call] = (controller.pane('main')?.transcript.turnList() ?? [])
      .flatMap((turn) => turn.entries)
      .filter((entry): entry is ToolCallEntry => entry.kind === 'tool');
    assert.equal(call.title, 'fx › pid');
    assert.equal(call.tool, 'mcp__fx__pid');
    assert.match(call.output, /^\d+$/);

    ui.picks.push('fx', 'restart');
    await showMcpServers(server, ui);
    assert.deepEqual(ui.infos, ['AgentLS: restarting the MCP server fx.']);
    await waitFor('fx to be ready again', async () => (await servers()).servers[0].status === 'ready');
  });
});
