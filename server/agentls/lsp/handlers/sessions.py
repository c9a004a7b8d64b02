"""``agent/sessions``, ``agent/resume``, ``agent/deleteSession``, ``agent/history``."""

from __future__ import annotations

from typing import cast

from agentls.lsp.face import LspFace
from agentls.lsp.handlers.registry import handles
from agentls.protocol import errors, methods
from agentls.schema.wire import (
    DeleteSessionParams,
    DeleteSessionResult,
    HistoryParams,
    HistoryResult,
    ResumeParams,
    ResumeResult,
    SessionInfo,
    SessionsParams,
    SessionsResult,
)


@handles(methods.SESSIONS)
async def sessions(face: LspFace, params: SessionsParams) -> SessionsResult:
    service = await face.service()
    service.check_ready()
    if params.limit is not None and params.limit < 0:
        raise errors.invalid_params("limit: must not be negative")
    found = await service.sessions(params.limit)
    # As ``agentls sessions --json`` shows them, and where each is open.
    listed = [cast(SessionInfo, {**info.as_json(), "pane": pane}) for info, pane in found]
    return {"sessions": listed}


@handles(methods.RESUME)
async def resume(face: LspFace, params: ResumeParams) -> ResumeResult:
    resumed = await (await face.service()).resume(params.pane, params.session_id)
    return {
        "pane": resumed.pane,
        "sessionId": resumed.session_id,
        "turns": resumed.turns,
        "title": resumed.title,
        "interrupted": resumed.interrupted,
        "unsent": resumed.unsent,
    }


@handles(methods.DELETE_SESSION)
async def delete_session(face: LspFace, params: DeleteSessionParams) -> DeleteSessionResult:
    await (await face.service()).delete_session(params.session_id)
    return {"deleted": True}


@handles(methods.HISTORY)
async def history(face: LspFace, params: HistoryParams) -> HistoryResult:
    service = await face.service()
    pane = service.pane(params.pane)
    service.drain(params.pane)  # everything emitted so far goes out (and is kept) first
    retained = face.relay.history(params.pane, params.since_seq)
    return {
        "pane": params.pane,
        "sessionId": pane.session_id,
        "events": retained.events,  # type: ignore[typeddict-item]
        "lastSeq": retained.last_seq,
        "complete": retained.complete,
        "runningTurnId": pane.running_turn_id,
    }
