"""``agent/auxiliary``: a one-off prompt on an isolated copy of a pane's agent."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import anyio

from agentls.agent.interrupt import CancelToken
from agentls.lsp.handlers.registry import handles
from agentls.lsp.handlers.turns import check_prompt
from agentls.protocol import errors, methods
from agentls.schema.wire import AuxiliaryParams
from agentls.worker import messages as wm

if TYPE_CHECKING:
    from agentls.lsp.app import AgentServer


@handles(methods.AUXILIARY)
async def auxiliary(server: AgentServer, params: AuxiliaryParams) -> dict[str, Any]:
    conn = await server.connection()
    check_prompt(params.prompt)
    conn.check_pane(params.pane)
    scope = CancelToken()
    completion: wm.Completion[wm.AuxiliaryResult] = wm.Completion()
    conn.send(
        wm.Auxiliary(
            params.pane, conn.next_turn_id(), params.prompt, scope, completion, params.context
        )
    )
    try:
        result = await completion.wait()
    except asyncio.CancelledError:
        # $/cancelRequest: this job only. Answer -32800 once it has stopped.
        scope.cancel()
        with anyio.CancelScope(shield=True):
            await completion.wait()
        raise
    if isinstance(result, str):
        return {"text": result}
    if isinstance(result, wm.AuxiliaryCancelled):
        if conn.stopping:
            raise errors.stopping("the auxiliary job was cancelled: the server is shutting down")
        raise errors.ProtocolError(
            "cancelled", "the auxiliary job was cancelled (agent/cancel or its pane closed)"
        )
    failure = result.failure
    if failure.kind == "internal":
        raise errors.ProtocolError("internal", f"the auxiliary job failed: {failure.message}")
    raise errors.from_failure(failure)
