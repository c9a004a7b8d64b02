"""``agent/fork``, ``agent/closePane``, ``agent/newSession``."""

from __future__ import annotations

import asyncio

from agentls.lsp.face import LspFace
from agentls.lsp.handlers.registry import handles
from agentls.protocol import methods
from agentls.schema.wire import (
    ClosePaneParams,
    ClosePaneResult,
    ForkParams,
    ForkResult,
    NewSessionParams,
    NewSessionResult,
)


@handles(methods.FORK)
async def fork(face: LspFace, params: ForkParams) -> ForkResult:
    forked = await (await face.service()).fork(params.pane)
    # pygls sends the answer from a done-callback it added before this task
    # started; this one runs after it: pane.opened follows the answer.
    task = asyncio.current_task()
    assert task is not None
    task.add_done_callback(lambda _: face.fork_answered(forked.pane))
    return {"pane": forked.pane, "items": forked.items}


@handles(methods.CLOSE_PANE)
async def close_pane(face: LspFace, params: ClosePaneParams) -> ClosePaneResult:
    return {"cancelled": await (await face.service()).close_pane(params.pane)}


@handles(methods.NEW_SESSION)
async def new_session(face: LspFace, params: NewSessionParams) -> NewSessionResult:
    session_id = await (await face.service()).new_session(params.pane)
    return {"pane": params.pane, "sessionId": session_id}
