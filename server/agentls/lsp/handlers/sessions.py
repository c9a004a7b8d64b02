"""``agent/sessions``, ``agent/resume``, ``agent/deleteSession``, ``agent/history``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anyio

from agentls.lsp.handlers.registry import handles
from agentls.protocol import errors, methods
from agentls.schema.wire import DeleteSessionParams, HistoryParams, ResumeParams, SessionsParams

if TYPE_CHECKING:
    from agentls.lsp.app import AgentServer


@handles(methods.SESSIONS)
async def sessions(server: AgentServer, params: SessionsParams) -> dict[str, Any]:
    conn = await server.connection()
    conn.check_ready()
    if params.limit is not None and params.limit < 0:
        raise errors.invalid_params("limit: must not be negative")
    assert conn.store is not None
    found = await anyio.to_thread.run_sync(conn.store.list, params.limit)
    open_in = {agent.session_id: pane for pane, agent in conn.panes().items()}
    return {
        "sessions": [{**info.as_json(), "pane": open_in.get(info.session_id)} for info in found]
    }


@handles(methods.RESUME)
async def resume(server: AgentServer, params: ResumeParams) -> dict[str, Any]:
    conn = await server.connection()
    started = await conn.resume(params.pane, params.session_id)
    resumed = started.resumed
    assert resumed is not None
    return {
        "pane": started.pane,
        "sessionId": started.agent.session_id,
        "turns": resumed.turns,
        "title": resumed.title,
        "interrupted": resumed.repair.interrupted,
        "unsent": resumed.repair.unsent,
    }


@handles(methods.DELETE_SESSION)
async def delete_session(server: AgentServer, params: DeleteSessionParams) -> dict[str, Any]:
    conn = await server.connection()
    await conn.delete_session(params.session_id)
    return {"deleted": True}


@handles(methods.HISTORY)
async def history(server: AgentServer, params: HistoryParams) -> dict[str, Any]:
    conn = await server.connection()
    agent = conn.check_pane(params.pane)
    retained = conn.relay.history(params.pane, params.since_seq)
    return {
        "pane": params.pane,
        "sessionId": agent.session_id,
        "events": retained.events,
        "lastSeq": retained.last_seq,
        "complete": retained.complete,
        "runningTurnId": agent.running_turn_id,
    }
