"""``agent/auxiliary``: a one-off prompt on an isolated copy of a pane's agent."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import anyio

from agentls.agent.interrupt import CancelToken
from agentls.protocol import errors, methods
from agentls.protocol.types import AuxiliaryParams
from agentls.worker import messages as wm

if TYPE_CHECKING:
    from agentls.server.app import AgentServer


async def auxiliary(server: AgentServer, params: AuxiliaryParams) -> dict[str, Any]:
    session = await server.session()
    if not params.prompt.strip():
        raise errors.InvalidParams("invalid params: prompt: must not be empty")
    session.check_pane(params.pane)
    scope = CancelToken()
    completion: wm.Completion[wm.AuxiliaryResult] = wm.Completion()
    session.send(
        wm.Auxiliary(
            params.pane, session.next_turn_id(), params.prompt, scope, completion, params.context
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
        if session.stopping:
            raise errors.AgentStopped(
                "the auxiliary job was cancelled: the server is shutting down"
            )
        raise errors.RequestCancelled(
            "the auxiliary job was cancelled (agent/cancel or its pane closed)"
        )
    if result.message == wm.PANE_UNAVAILABLE:
        raise errors.PaneUnavailable(params.pane)
    raise errors.InternalError(f"the auxiliary job failed: {result.message}")


HANDLERS: dict[str, tuple[type, Any]] = {methods.AUXILIARY: (AuxiliaryParams, auxiliary)}
