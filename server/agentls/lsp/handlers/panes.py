"""``agent/fork``, ``agent/closePane``, ``agent/newSession``."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from agentls.lsp.handlers.registry import handles
from agentls.protocol import errors, methods
from agentls.schema.wire import ClosePaneParams, ForkParams, NewSessionParams
from agentls.worker import messages as wm

if TYPE_CHECKING:
    from agentls.lsp.app import AgentServer


@handles(methods.FORK)
async def fork(server: AgentServer, params: ForkParams) -> dict[str, Any]:
    conn = await server.connection()
    conn.check_pane(params.pane)
    open_fork = conn.check_ready().fork_pane
    if open_fork is not None:
        # Checked before a fork name is taken: names count up without gaps.
        raise errors.ProtocolError("fork_already_open", f"a fork is already open: {open_fork}")
    reply: wm.Completion[wm.ForkOpened | wm.ForkFailed] = wm.Completion()
    result = await conn.command(wm.OpenFork(conn.next_fork_pane(), params.pane, reply), reply)
    if isinstance(result, wm.ForkFailed):
        raise errors.from_failure(result.failure)
    # pygls sends the answer from a done-callback it added before this task
    # started; this one runs after it: pane.opened follows the answer.
    task = asyncio.current_task()
    assert task is not None
    task.add_done_callback(lambda _: conn.fork_answered(result.pane))
    return {"pane": result.pane, "items": result.items}


@handles(methods.CLOSE_PANE)
async def close_pane(server: AgentServer, params: ClosePaneParams) -> dict[str, Any]:
    conn = await server.connection()
    conn.check_pane(params.pane)
    reply: wm.Completion[wm.PaneClosed | wm.Failure] = wm.Completion()
    result = await conn.command(wm.ClosePane(params.pane, reply), reply)
    if isinstance(result, wm.Failure):
        raise errors.from_failure(result)
    return {"cancelled": result.cancelled}


@handles(methods.NEW_SESSION)
async def new_session(server: AgentServer, params: NewSessionParams) -> dict[str, Any]:
    conn = await server.connection()
    conn.check_pane(params.pane)
    reply: wm.Completion[wm.SessionStarted | wm.Failure] = wm.Completion()
    result = await conn.command(wm.NewSession(params.pane, None, reply), reply)
    if isinstance(result, wm.Failure):
        raise errors.from_failure(result)
    return {"pane": result.pane, "sessionId": result.agent.session_id}
