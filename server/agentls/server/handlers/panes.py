"""``agent/fork``, ``agent/closePane``, ``agent/newSession``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentls.protocol import errors, methods
from agentls.protocol.types import ClosePaneParams, ForkParams, NewSessionParams
from agentls.worker import messages as wm

if TYPE_CHECKING:
    from agentls.server.app import AgentServer


def _failure(pane: str, kind: str, message: str) -> errors.ProtocolError:
    if kind == "pane_unavailable":
        return errors.PaneUnavailable(pane)
    if kind == "fork_already_open":
        return errors.ForkAlreadyOpen(message)
    if kind == "pane_busy":
        return errors.PaneBusy(pane)
    if kind == "stopping":
        return errors.AgentStopped()
    return errors.InternalError(message)


async def fork(server: AgentServer, params: ForkParams) -> dict[str, Any]:
    session = await server.session()
    session.check_pane(params.pane)
    if session.check_ready().fork_pane is not None:
        raise errors.ForkAlreadyOpen()
    reply: wm.Completion[wm.ForkOpened | wm.ForkFailed] = wm.Completion()
    result = await session.command(wm.OpenFork(session.next_fork_pane(), params.pane, reply), reply)
    if isinstance(result, wm.ForkFailed):
        raise _failure(params.pane, result.kind, result.error)
    return {"pane": result.pane, "items": result.items}


async def close_pane(server: AgentServer, params: ClosePaneParams) -> dict[str, Any]:
    session = await server.session()
    session.check_pane(params.pane)
    reply: wm.Completion[wm.PaneClosed | wm.Failure] = wm.Completion()
    result = await session.command(wm.ClosePane(params.pane, reply), reply)
    if isinstance(result, wm.Failure):
        raise _failure(params.pane, result.kind, result.message)
    return {"cancelled": result.cancelled}


async def new_session(server: AgentServer, params: NewSessionParams) -> dict[str, Any]:
    session = await server.session()
    session.check_pane(params.pane)
    reply: wm.Completion[wm.AgentReplaced | wm.Failure] = wm.Completion()
    result = await session.command(wm.ReplaceAgent(params.pane, None, reply), reply)
    if isinstance(result, wm.Failure):
        raise _failure(params.pane, result.kind, result.message)
    return {"pane": result.pane, "sessionId": result.agent.session_id}


HANDLERS: dict[str, tuple[type, Any]] = {
    methods.FORK: (ForkParams, fork),
    methods.CLOSE_PANE: (ClosePaneParams, close_pane),
    methods.NEW_SESSION: (NewSessionParams, new_session),
}
