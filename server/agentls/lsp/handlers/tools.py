"""``agent/cancelTool`` and ``agent/processes``: one tool call, and the
pane's background processes."""

from __future__ import annotations

from typing import cast

from agentls.lsp.face import LspFace
from agentls.lsp.handlers.registry import handles
from agentls.protocol import methods
from agentls.schema.wire import (
    BackgroundProcess,
    CancelToolParams,
    CancelToolResult,
    ProcessesParams,
    ProcessesResult,
)


@handles(methods.CANCEL_TOOL)
async def cancel_tool(face: LspFace, params: CancelToolParams) -> CancelToolResult:
    """Stop one running command; answered once its processes are dead."""
    result = await (await face.service()).cancel_tool(params.pane, params.call_id)
    return {"cancelled": result.cancelled, "killedProcesses": result.killed_processes}


@handles(methods.PROCESSES)
async def processes(face: LspFace, params: ProcessesParams) -> ProcessesResult:
    listed = (await face.service()).pane(params.pane).processes()
    return {"processes": [cast(BackgroundProcess, entry) for entry in listed]}
