"""``agent/submit``, ``agent/steer``, ``agent/cancel``."""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import TYPE_CHECKING, Any

import anyio

from agentls.agent.receipt import Receipt
from agentls.model.types import Usage
from agentls.protocol import convert, errors, methods
from agentls.protocol.types import CancelParams, ProgressToken, SteerParams, SubmitParams
from agentls.server.context import compose_prompt
from agentls.server.progress import THINKING, TurnProgress
from agentls.tools.base import shorten
from agentls.worker import messages as wm

if TYPE_CHECKING:
    from agentls.server.app import AgentServer

log = logging.getLogger(__name__)


def _prompt_text(prompt: str) -> str:
    if not prompt.strip():
        raise errors.InvalidParams("invalid params: prompt: must not be empty")
    return prompt


async def open_progress(server: AgentServer, token: ProgressToken | None) -> TurnProgress | None:
    """Progress on the client's token, or on one we create if the client allows it."""
    if token is None:
        if not server.supports_progress:
            return None
        token = f"agentls/{uuid.uuid4().hex}"
        try:
            with anyio.fail_after(10):
                # Shielded: a cancelled await must not leave pygls a dead future (pygls#621).
                await asyncio.shield(server.work_done_progress.create_async(token))
        except Exception as exc:
            log.warning("the client did not create a progress token: %s", exc)
            return None
    return TurnProgress(server.work_done_progress, token)


def _title(prompt: str) -> str:
    return f"Agent: {shorten(prompt, 50)}"


async def submit(server: AgentServer, params: SubmitParams) -> dict[str, Any]:
    _prompt_text(params.prompt)
    pane = params.pane
    try:
        session = await server.session()
        agent = session.check_pane(pane)
    except errors.AgentStopped:
        # Shutdown began before this turn was accepted: like every pending
        # turn at shutdown, it is answered as cancelled (it never ran).
        turn_id = server.next_turn_id()
        return convert.turn_result(pane, turn_id, "cancelled", "", None, Usage(), Receipt(turn_id))
    assert session.config is not None
    text = compose_prompt(params.prompt, params.context, session.config.workspace)
    turn_id = session.next_turn_id()
    done = session.expect_turn(turn_id)

    def cancel_turn() -> None:
        if not done.done():
            session.send(wm.Cancel(pane, turn_id))

    # $/cancelRequest cancels exactly this turn (see SoftCancel); the request
    # is answered once the turn has really stopped, with its receipt.
    soft_cancel = server.soft_cancel()
    with anyio.CancelScope(shield=True):
        progress = await open_progress(server, params.work_done_token)
        if progress is not None:
            waiting = "Queued behind the running turn" if agent.busy else THINKING
            progress.begin(_title(params.prompt), waiting, cancel_turn)
            session.track_progress(turn_id, progress)
        session.send(wm.Submit(pane, turn_id, text))
        soft_cancel.on_request(cancel_turn)
        finished = await done.wait()
    session.end_turn(finished)
    if finished.rejected:
        if finished.error == wm.PANE_UNAVAILABLE:
            raise errors.PaneUnavailable(pane)
        raise errors.AgentStopped(finished.error or "the server is shutting down")
    return convert.finished_result(finished)


async def steer(server: AgentServer, params: SteerParams) -> dict[str, Any]:
    session = await server.session()
    _prompt_text(params.prompt)
    session.check_pane(params.pane)
    fallback = session.next_turn_id()
    reply: wm.Completion[wm.SteerAdmitted | wm.SteerPromoted | wm.SteerFailed] = wm.Completion()
    result = await session.command(
        wm.Steer(
            params.pane,
            session.next_steer_id(),
            fallback,
            params.prompt,
            params.expected_turn_id,
            reply,
        ),
        reply,
    )
    match result:
        case wm.SteerAdmitted():
            return {"outcome": "admitted", "turnId": result.id}
        case wm.SteerPromoted():
            # A turn with no request of its own: it reports on a token we create.
            session.spawn(_promoted_progress, server, params, result.id)
            return {"outcome": "promoted", "turnId": result.id}
        case wm.SteerFailed():
            if result.error == wm.PANE_UNAVAILABLE:
                raise errors.PaneUnavailable(params.pane)
            if result.error == wm.STOPPING:
                raise errors.AgentStopped()
            raise errors.InvalidRequest(f"the steer was refused: {result.error}")


async def _promoted_progress(server: AgentServer, params: SteerParams, turn_id: int) -> None:
    progress = await open_progress(server, None)
    if progress is None:
        return
    session = await server.session()

    def cancel_turn() -> None:
        session.send(wm.Cancel(params.pane, turn_id))

    progress.begin(_title(params.prompt), THINKING, cancel_turn)
    if not session.track_progress(turn_id, progress):
        progress.end("Done")  # it finished while the token was being created


async def cancel(server: AgentServer, params: CancelParams) -> dict[str, Any]:
    session = await server.session()
    session.check_pane(params.pane)
    reply: wm.Completion[wm.TurnsCancelled] = wm.Completion()
    command: wm.Command
    if params.turn_id is None:
        command = wm.CancelAll(params.pane, reply)
    else:
        command = wm.Cancel(params.pane, params.turn_id, reply)
    result = await session.command(command, reply)
    if result.error == wm.STOPPING:
        raise errors.AgentStopped()
    return {
        "cancelled": result.count,
        "receipts": [convert.receipt(receipt) for receipt in result.receipts],
    }


HANDLERS: dict[str, tuple[type, Any]] = {
    methods.SUBMIT: (SubmitParams, submit),
    methods.STEER: (SteerParams, steer),
    methods.CANCEL: (CancelParams, cancel),
}
