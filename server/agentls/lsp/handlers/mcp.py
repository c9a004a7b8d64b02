"""``agent/mcpServers``, ``agent/mcpRestart``, ``agent/mcpRevoke``."""

from __future__ import annotations

from typing import Any

from agentls.lsp.face import LspFace
from agentls.lsp.handlers.registry import handles
from agentls.mcp.manager import ServerInfo, UnknownServer
from agentls.protocol import errors, methods
from agentls.schema.wire import McpRestartParams, McpRevokeParams, McpServersParams


def _server(info: ServerInfo) -> dict[str, Any]:
    server: dict[str, Any] = {
        "name": info.name,
        "status": info.status,
        "tools": len(info.tool_names),
        "toolNames": list(info.tool_names),
        "source": info.source,
        "transport": info.transport,
        "restarts": info.restarts,
    }
    optional = {"error": info.error, "command": info.command, "url": info.url}
    server.update({key: value for key, value in optional.items() if value is not None})
    if info.notes:
        server["notes"] = list(info.notes)
    return server


@handles(methods.MCP_SERVERS)
async def mcp_servers(face: LspFace, params: McpServersParams) -> dict[str, Any]:
    manager = (await face.service()).mcp
    await manager.loaded()
    result: dict[str, Any] = {"servers": [_server(info) for info in manager.servers()]}
    if manager.problems:
        result["problems"] = list(manager.problems)
    return result


@handles(methods.MCP_RESTART)
async def mcp_restart(face: LspFace, params: McpRestartParams) -> dict[str, Any]:
    manager = (await face.service()).mcp
    await manager.running()
    try:
        return _server(manager.restart(params.name))
    except UnknownServer as exc:
        raise errors.invalid_params(str(exc)) from None


@handles(methods.MCP_REVOKE)
async def mcp_revoke(face: LspFace, params: McpRevokeParams) -> dict[str, Any]:
    manager = (await face.service()).mcp
    await manager.running()
    try:
        return {"revoked": manager.revoke(params.name)}
    except (UnknownServer, ValueError) as exc:
        raise errors.invalid_params(str(exc)) from None
