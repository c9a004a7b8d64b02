"""What an agent tells whoever keeps its conversation (the session store).

The agent calls a ``Recorder`` at every point where its conversation or its
promises to the user change: a turn starts or ends, a model response asks for
tool calls (before they run), a tool call is answered, prompts wait in the
queue or steers wait for the model, a setting changes. Committed steps and
compactions arrive through ``History.listener`` (a Recorder is one). The
agent never imports the store: it only knows this interface.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from agentls.agent.history import HistoryListener
from agentls.domain import TurnStatus
from agentls.model.types import Item

if TYPE_CHECKING:
    from agentls.agent.history import History
    from agentls.agent.settings import Settings


class Recorder(HistoryListener, Protocol):
    @property
    def session_id(self) -> str: ...

    def attach(self, history: History, settings: Settings) -> None:
        """The conversation and settings this recorder follows (called once,
        by the agent it belongs to)."""

    def turn_started(self, turn_id: int, prompt: str) -> None: ...

    def step_started(self, items: Sequence[Item]) -> None:
        """A model response with tool calls, before any of them runs."""

    def tool_answered(self, item: Item) -> None:
        """The output of one tool call of the step in progress."""

    def turn_finished(self, turn_id: int, status: TurnStatus) -> None: ...

    def waiting(self, queued: Sequence[str], steers: Sequence[str]) -> None:
        """The prompts queued behind the running turn and the steers the model
        has not been sent yet (the whole of both, each time either changes)."""

    def settings_changed(self) -> None: ...

    def sibling(self, inherited: History, settings: Settings) -> Recorder:
        """The recorder of a new session that starts from ``inherited`` (a
        fork's conversation, or an empty one)."""

    def close(self) -> None:
        """The agent has stopped: nothing more will be recorded."""
