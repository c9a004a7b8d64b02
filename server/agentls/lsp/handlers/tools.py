"""``agent/cancelTool`` and ``agent/processes``: one tool call, and the
pane's background processes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentls.lsp.handlers.registry import handles
from agentls.protocol import errors, methods
from agentls.schema.wire import CancelToolParams, ProcessesParams
from agentls.worker import messages as wm

if TYPE_CHECKING:
    from agentls.lsp.app import AgentServer


@handles(methods.CANCEL_TOOL)
async def cancel_tool(server: AgentServer, params: CancelToolParams) -> dict[str, Any]:
    """Stop one running command; answered once its processes are dead."""
    conn = await server.connection()
    conn.check_pane(params.pane)
    reply: wm.Completion[wm.ToolCancelled | wm.Failure] = wm.Completion()
    result = await conn.command(wm.CancelTool(params.pane, params.call_id, reply), reply)
    if isinstance(result, wm.Failure):
        raise errors.from_failure(result)
    return {"cancelled": result.cancelled, "killedProcesses": result.killed_processes}


@handles(methods.PROCESSES)
async def processes(server: AgentServer, params: ProcessesParams) -> dict[str, Any]:
    conn = await server.connection()
    agent = conn.check_pane(params.pane)
    return {"processes": [entry.describe() for entry in agent.processes()]}
