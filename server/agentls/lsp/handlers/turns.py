"""``agent/submit``, ``agent/steer``, ``agent/cancel``."""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import TYPE_CHECKING, Any

import anyio

from agentls.agent.receipt import Receipt
from agentls.lsp.context import compose_prompt
from agentls.lsp.handlers.registry import handles
from agentls.lsp.progress import THINKING, TurnProgress
from agentls.model.types import Usage
from agentls.protocol import convert, errors, methods
from agentls.schema.wire import CancelParams, ProgressToken, SteerParams, SubmitParams
from agentls.tools.base import shorten
from agentls.worker import messages as wm

if TYPE_CHECKING:
    from agentls.lsp.app import AgentServer

log = logging.getLogger(__name__)


def check_prompt(prompt: str) -> None:
    if not prompt.strip():
        raise errors.invalid_params("prompt: must not be empty")


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


@handles(methods.SUBMIT)
async def submit(server: AgentServer, params: SubmitParams) -> dict[str, Any]:
    check_prompt(params.prompt)
    pane = params.pane
    try:
        conn = await server.connection()
        agent = conn.check_pane(pane)
    except errors.ProtocolError as exc:
        if exc.kind != "stopping":
            raise
        # Shutdown began before this turn was accepted: like every pending
        # turn at shutdown, it is answered as cancelled (it never ran).
        turn_id = server.next_turn_id()
        return convert.turn_result(pane, turn_id, "cancelled", "", None, Usage(), Receipt(turn_id))
    assert conn.config is not None
    text = compose_prompt(params.prompt, params.context, conn.config.workspace)
    turn_id = conn.next_turn_id()
    done = conn.expect_turn(turn_id)

    def cancel_turn() -> None:
        if not done.done():
            conn.send(wm.Cancel(pane, turn_id))

    # $/cancelRequest cancels exactly this turn (see SoftCancel); the request
    # is answered once the turn has really stopped, with its receipt.
    soft_cancel = server.soft_cancel()
    with anyio.CancelScope(shield=True):
        progress = await open_progress(server, params.work_done_token)
        if progress is not None:
            waiting = "Queued behind the running turn" if agent.busy else THINKING
            progress.begin(_title(params.prompt), waiting, cancel_turn)
            conn.track_progress(turn_id, progress)
        if soft_cancel.requested:
            # Cancelled while we set up its progress: queued and cancelled in one step.
            conn.send(wm.Submit(pane, turn_id, text, cancelled=True))
        else:
            conn.send(wm.Submit(pane, turn_id, text))
            soft_cancel.on_request(cancel_turn)
        finished = await done.wait()
    conn.end_turn(finished)
    if finished.rejected is not None:
        raise errors.from_failure(finished.rejected)
    return convert.finished_result(finished)


@handles(methods.STEER)
async def steer(server: AgentServer, params: SteerParams) -> dict[str, Any]:
    conn = await server.connection()
    check_prompt(params.prompt)
    conn.check_pane(params.pane)
    reply: wm.Completion[wm.SteerAdmitted | wm.SteerPromoted | wm.SteerFailed] = wm.Completion()
    result = await conn.command(
        wm.Steer(
            params.pane,
            conn.next_steer_id(),
            conn.next_turn_id,
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
            conn.spawn(_promoted_progress, server, params, result.id)
            return {"outcome": "promoted", "turnId": result.id}
        case wm.SteerFailed():
            raise errors.from_failure(result.failure)


async def _promoted_progress(server: AgentServer, params: SteerParams, turn_id: int) -> None:
    progress = await open_progress(server, None)
    if progress is None:
        return
    conn = await server.connection()

    def cancel_turn() -> None:
        conn.send(wm.Cancel(params.pane, turn_id))

    progress.begin(_title(params.prompt), THINKING, cancel_turn)
    if not conn.track_progress(turn_id, progress):
        progress.end("Done")  # it finished while the token was being created


@handles(methods.CANCEL)
async def cancel(server: AgentServer, params: CancelParams) -> dict[str, Any]:
    conn = await server.connection()
    conn.check_pane(params.pane)
    reply: wm.Completion[wm.TurnsCancelled] = wm.Completion()
    command: wm.Command
    if params.turn_id is None:
        command = wm.CancelAll(params.pane, reply)
    else:
        command = wm.Cancel(params.pane, params.turn_id, reply)
    result = await conn.command(command, reply)
    if result.failure is not None and result.failure.kind == "stopping":
        raise errors.from_failure(result.failure)
    return {
        "cancelled": result.count,
        "receipts": [convert.receipt(receipt) for receipt in result.receipts],
    }
