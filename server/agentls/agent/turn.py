"""A turn: the handle a caller holds, its control, and its outcome."""

from __future__ import annotations

import enum
from collections import deque
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any, Protocol

import anyio

from agentls.agent.errors import (
    InvalidRequest,
    TurnCancelled,
    TurnNotCancellable,
    TurnNotSteerable,
)
from agentls.agent.interrupt import CancelToken
from agentls.agent.receipt import Receipt
from agentls.domain import TurnStatus
from agentls.model.types import ContextSize, Usage


class TurnOwner(Protocol):
    """The agent a turn belongs to, as its handle and control need it."""

    def admit_steer(self, turn: Turn, text: str) -> None: ...

    def waiting_changed(self) -> None: ...


class TurnState(enum.Enum):
    QUEUED = "queued"
    RUNNING = "running"
    FINISHED = "finished"


@dataclass(frozen=True, slots=True)
class TurnOutcome:
    """What a completed turn gives back."""

    turn_id: int
    final_message: str
    usage: Usage
    context: ContextSize | None = None


class Turn:
    """The handle of one accepted prompt.

    ``await turn`` gives the TurnOutcome, or raises TurnCancelled (with the
    receipt) or TurnFailed. Dropping the handle does not cancel the turn.
    """

    def __init__(self, agent: TurnOwner, turn_id: int, prompt: str) -> None:
        self._agent = agent
        self.id = turn_id
        self.prompt = prompt
        self.state = TurnState.QUEUED
        self.token = CancelToken()
        self.steers: deque[str] = deque()
        self.cancel_requested = False
        self.status: TurnStatus | None = None
        self.receipt: Receipt | None = None
        # The turn's token usage and how full the context window was at its end.
        self.usage = Usage()
        self.context: ContextSize | None = None
        self._outcome: TurnOutcome | None = None
        self._error: Exception | None = None
        self._resolved = anyio.Event()
        # Set once the turn has ended *and* cleaned up (processes dead, history consistent).
        self._ended = anyio.Event()

    def __repr__(self) -> str:
        return f"<Turn {self.id} {self.state.value}>"

    def __await__(self) -> Generator[Any, None, TurnOutcome]:
        return self.result().__await__()

    async def result(self) -> TurnOutcome:
        await self._resolved.wait()
        if self._error is not None:
            raise self._error
        assert self._outcome is not None
        return self._outcome

    def done(self) -> bool:
        return self._resolved.is_set()

    @property
    def control(self) -> TurnControl:
        return TurnControl(self)

    # --- used by the agent ----------------------------------------------------

    def resolve(self, outcome: TurnOutcome | None = None, error: Exception | None = None) -> None:
        if self._resolved.is_set():
            return
        self._outcome, self._error = outcome, error
        self._resolved.set()

    def end(self, status: TurnStatus, receipt: Receipt | None = None) -> None:
        self.state = TurnState.FINISHED
        self.status = status
        self.receipt = receipt
        self._ended.set()

    async def wait_ended(self) -> None:
        await self._ended.wait()


class TurnControl:
    """Steer or cancel a turn. Cheap to create; any number may exist."""

    __slots__ = ("_turn",)

    def __init__(self, turn: Turn) -> None:
        self._turn = turn

    @property
    def turn_id(self) -> int:
        return self._turn.id

    def steer(self, text: str) -> None:
        """Add a message for the model to the running turn.

        It reaches the model as its own user message at the turn's next model
        request, after the outputs of any tool calls in progress.
        """
        turn = self._turn
        if not text.strip():
            raise InvalidRequest("a steer needs some text")
        if turn.state is not TurnState.RUNNING or turn.cancel_requested:
            raise TurnNotSteerable()
        turn._agent.admit_steer(turn, text)

    def cancel_if_queued(self) -> Receipt | None:
        """Cancel the turn now if it has not started (it never will); None if it has."""
        turn = self._turn
        if turn.state is not TurnState.QUEUED or turn.done():
            return None
        receipt = Receipt(turn_id=turn.id)
        turn.cancel_requested = True
        turn.resolve(error=TurnCancelled(receipt))
        turn._agent.waiting_changed()
        return receipt

    async def cancel(self) -> Receipt:
        """Cancel the turn and return once it has really stopped.

        A queued turn is cancelled at once (it will never run). A running turn
        aborts its model stream, answers its in-flight tool calls, kills its
        processes, and only then does this return. Raises TurnNotCancellable if
        the turn finished first; its own result then stands.
        """
        turn = self._turn
        if turn.state is TurnState.FINISHED or (turn.done() and not turn.cancel_requested):
            raise TurnNotCancellable()
        receipt = self.cancel_if_queued()
        if receipt is not None:
            return receipt
        if turn.state is TurnState.QUEUED:
            # Cancelled while queued already (by cancel_if_queued): it never runs.
            return Receipt(turn_id=turn.id)
        turn.cancel_requested = True
        turn.token.cancel()
        await turn.wait_ended()
        if turn.status != "cancelled" or turn.receipt is None:
            raise TurnNotCancellable()
        return turn.receipt
