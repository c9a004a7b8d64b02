/**
 * AgentLS: MCP Servers — the workspace's MCP servers: their status, tools
 * and errors; restart one; take back the permission of a project's server.
 *
 * Talks to the server through `Client` and to the user through quick picks
 * and messages; imports nothing from VS Code (unit tests run it with fakes,
 * protocol tests against the real server).
 */

import type { Client } from './client';
import { type PickItem, type Ui, describeError } from './controller';
import { Method, type McpRevokeResult, type McpServer, type McpServersResult, type McpStatus } from './protocol';

export type McpUi = Pick<Ui, 'quickPick' | 'info' | 'error'>;

export const STATUS_ICONS: Record<McpStatus, string> = {
  ready: '$(pass)',
  starting: '$(loading~spin)',
  failed: '$(error)',
  disabled: '$(circle-slash)',
};

const PROBLEMS = '\u0000problems';
const NONE_CONFIGURED =
  'AgentLS: no MCP servers are configured. Add them to the agentls.mcpServers setting, to ' +
  '~/.config/agentls/mcp.json, or to the project’s .mcp.json.';

/** "ready · 13 tools · options, stdio" */
export function summary(server: McpServer): string {
  const tools = server.tools === 1 ? '1 tool' : `${server.tools} tools`;
  return `${server.status} · ${tools} · ${server.source}, ${server.transport}`;
}

/** The first line of a server's error, or what it runs. */
function detail(server: McpServer): string | undefined {
  return server.error?.split('\n')[0] ?? server.command ?? server.url;
}

export function serverItem(server: McpServer): PickItem {
  return {
    value: server.name,
    label: `${STATUS_ICONS[server.status] ?? ''} ${server.name}`,
    description: summary(server),
    detail: detail(server),
  };
}

type Action = 'restart' | 'tools' | 'error' | 'revoke';

function actions(server: McpServer): PickItem<Action>[] {
  const items: PickItem<Action>[] = [
    {
      value: 'restart',
      label: 'Restart',
      description: server.status === 'disabled' ? 'asks for your permission again' : 'stop it and start it again',
    },
  ];
  if (server.toolNames.length > 0) {
    items.push({ value: 'tools', label: 'Show Tools', description: `${server.toolNames.length}` });
  }
  if (server.error !== undefined) {
    items.push({ value: 'error', label: 'Show Error', description: server.error.split('\n')[0] });
  }
  if (server.source === 'project') {
    items.push({ value: 'revoke', label: 'Revoke Permission', description: 'stop it; ask again at its next start' });
  }
  return items;
}

/** The command: pick a server, then what to do with it. */
export async function showMcpServers(client: Client, ui: McpUi): Promise<void> {
  let result: McpServersResult;
  try {
    result = await client.request<McpServersResult>(Method.mcpServers, {});
  } catch (error) {
    await ui.error(`AgentLS: ${describeError(error)}`);
    return;
  }
  const problems = result.problems ?? [];
  if (result.servers.length === 0 && problems.length === 0) {
    await ui.info(NONE_CONFIGURED);
    return;
  }
  const items = result.servers.map(serverItem);
  if (problems.length > 0) {
    items.push({ value: PROBLEMS, label: '$(warning) Configuration problems', description: `${problems.length}` });
  }
  const picked = await ui.quickPick(items, {
    title: 'AgentLS: MCP Servers',
    placeHolder: 'Pick a server to restart it, see its tools or why it failed',
  });
  if (picked === PROBLEMS) {
    await ui.error(`AgentLS: MCP configuration: ${problems.join('; ')}`);
    return;
  }
  const server = result.servers.find((s) => s.name === picked);
  if (server === undefined) {
    return;
  }
  const action = await ui.quickPick(actions(server), {
    title: `AgentLS: MCP server ${server.name}`,
    placeHolder: summary(server),
  });
  try {
    await run(client, ui, server, action);
  } catch (error) {
    await ui.error(`AgentLS: ${describeError(error)}`);
  }
}

async function run(client: Client, ui: McpUi, server: McpServer, action: Action | undefined): Promise<void> {
  const name = server.name;
  switch (action) {
    case 'restart': {
      const restarted = await client.request<McpServer>(Method.mcpRestart, { name });
      await ui.info(
        restarted.status === 'starting'
          ? `AgentLS: restarting the MCP server ${name}.`
          : `AgentLS: the MCP server ${name} is ${restarted.status}.`,
      );
      return;
    }
    case 'tools':
      await ui.quickPick(
        server.toolNames.map((tool) => ({ value: tool, label: tool })),
        { title: `AgentLS: tools of ${name}`, placeHolder: `The agent calls them as ${name} › TOOL` },
      );
      return;
    case 'error':
      await ui.error(`AgentLS: MCP server ${name}: ${server.error ?? ''}`);
      return;
    case 'revoke': {
      const result = await client.request<McpRevokeResult>(Method.mcpRevoke, { name });
      await ui.info(
        result.revoked.length > 0
          ? `AgentLS: ${name} may no longer start; it asks again at its next start.`
          : `AgentLS: ${name} is stopped; you had not decided about it yet.`,
      );
      return;
    }
    default:
      return;
  }
}
