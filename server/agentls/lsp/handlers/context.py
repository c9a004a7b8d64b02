"""``agent/compact`` and ``agent/instructions``: the context window and what
the model is told."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentls.lsp.handlers.registry import handles
from agentls.protocol import errors, methods
from agentls.schema.wire import CompactParams, InstructionsParams
from agentls.worker import messages as wm

if TYPE_CHECKING:
    from agentls.lsp.app import AgentServer


@handles(methods.COMPACT)
async def compact(server: AgentServer, params: CompactParams) -> dict[str, Any]:
    conn = await server.connection()
    conn.check_pane(params.pane)
    reply: wm.Completion[wm.Compacted | wm.Failure] = wm.Completion()
    result = await conn.command(wm.Compact(params.pane, params.focus, reply), reply)
    if isinstance(result, wm.Failure):
        raise errors.from_failure(result)
    return {
        "beforeTokens": result.before_tokens,
        "afterTokens": result.after_tokens,
        "mode": result.mode,
    }


@handles(methods.INSTRUCTIONS)
async def instructions(server: AgentServer, params: InstructionsParams) -> dict[str, Any]:
    """The project instructions (AGENTS.md files) the pane's session follows."""
    conn = await server.connection()
    docs = conn.check_pane(params.pane).project
    return {
        "files": [{"path": f.path, "bytes": f.bytes} for f in docs.files],
        "bytes": docs.total_bytes,
        "cutBytes": docs.cut,
    }
