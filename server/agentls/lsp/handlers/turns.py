"""``agent/submit``, ``agent/steer``, ``agent/cancel``."""

from __future__ import annotations

import logging

import anyio

from agentls.agent.receipt import Receipt
from agentls.lsp.context import compose_prompt
from agentls.lsp.face import LspFace
from agentls.lsp.handlers.registry import handles
from agentls.lsp.progress import THINKING
from agentls.model.types import Usage
from agentls.protocol import convert, errors, methods
from agentls.schema.wire import (
    CancelParams,
    CancelResult,
    SteerParams,
    SteerResult,
    SubmitParams,
    TurnResult,
)
from agentls.service.errors import ServiceError, from_failure
from agentls.tools.base import shorten
from agentls.worker import messages as wm

log = logging.getLogger(__name__)


def check_prompt(prompt: str) -> None:
    if not prompt.strip():
        raise errors.invalid_params("prompt: must not be empty")


def _title(prompt: str) -> str:
    return f"Agent: {shorten(prompt, 50)}"


@handles(methods.SUBMIT)
async def submit(face: LspFace, params: SubmitParams) -> TurnResult:
    check_prompt(params.prompt)
    pane = params.pane
    try:
        service = await face.service()
        view = service.pane(pane)
        ticket = service.new_turn(pane)
    except ServiceError as exc:
        if exc.kind != "stopping":
            raise
        # Shutdown began before this turn was accepted: like every pending
        # turn at shutdown, it is answered as cancelled (it never ran).
        turn_id = face.next_turn_id()
        return convert.turn_result(pane, turn_id, "cancelled", "", None, Usage(), Receipt(turn_id))
    assert service.config is not None
    text = compose_prompt(params.prompt, params.context, service.config.workspace)

    # $/cancelRequest cancels exactly this turn (see SoftCancel); the request
    # is answered once the turn has really stopped, with its receipt.
    soft_cancel = face.soft_cancel()
    with anyio.CancelScope(shield=True):
        progress = await face.open_progress(params.work_done_token)
        if progress is not None:
            waiting = "Queued behind the running turn" if view.busy else THINKING
            progress.begin(_title(params.prompt), waiting, ticket.cancel)
            face.track_progress(ticket.id, progress)
        if soft_cancel.requested:
            # Cancelled while we set up its progress: queued and cancelled in one step.
            ticket.submit(text, cancelled=True)
        else:
            ticket.submit(text)
            soft_cancel.on_request(ticket.cancel)
        finished = await ticket.result()
    face.end_turn(finished)
    if finished.rejected is not None:
        raise from_failure(finished.rejected)
    return convert.finished_result(finished)


@handles(methods.STEER)
async def steer(face: LspFace, params: SteerParams) -> SteerResult:
    service = await face.service()
    check_prompt(params.prompt)
    result = await service.steer(params.pane, params.prompt, params.expected_turn_id)
    if isinstance(result, wm.SteerAdmitted):
        return {"outcome": "admitted", "turnId": result.id}
    # A turn with no request of its own: it reports on a token we create.
    service.spawn(_promoted_progress, face, params, result.id)
    return {"outcome": "promoted", "turnId": result.id}


async def _promoted_progress(face: LspFace, params: SteerParams, turn_id: int) -> None:
    progress = await face.open_progress(None)
    if progress is None:
        return
    service = await face.service()

    def cancel_turn() -> None:
        service.cancel_soon(params.pane, turn_id)

    progress.begin(_title(params.prompt), THINKING, cancel_turn)
    if not face.track_progress(turn_id, progress):
        progress.end("Done")  # it finished while the token was being created


@handles(methods.CANCEL)
async def cancel(face: LspFace, params: CancelParams) -> CancelResult:
    result = await (await face.service()).cancel(params.pane, params.turn_id)
    return {
        "cancelled": result.count,
        "receipts": [convert.receipt(receipt) for receipt in result.receipts],
    }
