"""The agent's error types: one class per thing that can go wrong, so callers
(the pane worker, the protocol layer) can map each to its own answer."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentls.agent.receipt import Receipt


class AgentError(Exception):
    """Base of every error the agent raises on purpose."""


class InvalidRequest(AgentError):
    """The request cannot be carried out as given (an empty prompt...)."""


class InvalidSnapshot(InvalidRequest):
    """A snapshot handed to ``Agent.resume`` is not one we can restore."""


class AgentStopped(AgentError):
    """The agent has been shut down and takes no more work."""

    def __init__(self, message: str = "the agent has stopped") -> None:
        super().__init__(message)


class AgentBusy(AgentError):
    """The command needs an idle agent, and a turn is in flight."""

    def __init__(self, message: str = "a turn is in flight; wait for it to finish") -> None:
        super().__init__(message)


class TurnStopped(AgentError):
    """A guard stopped the turn (too many model requests, a looping model).

    The message says why, for the user.
    """


class TurnNotSteerable(AgentError):
    """Only a running turn takes a steer."""

    def __init__(self, message: str = "the turn is not running, so it cannot be steered") -> None:
        super().__init__(message)


class SteerQueueFull(AgentError):
    def __init__(self, limit: int) -> None:
        super().__init__(f"the turn already has {limit} pending steers")
        self.limit = limit


class TurnNotCancellable(AgentError):
    """The turn had already finished when the cancel arrived."""

    def __init__(self, message: str = "the turn has already finished") -> None:
        super().__init__(message)


class TurnCancelled(AgentError):
    """The turn was cancelled; ``receipt`` says what the cancellation cleaned up."""

    def __init__(self, receipt: Receipt) -> None:
        super().__init__("the turn was cancelled")
        self.receipt = receipt


class TurnFailed(AgentError):
    """The turn ended with an error (model failure, internal fault).

    The message is meant for the user and never contains credentials;
    ``failure`` is its kind (see ``TurnFinished.failure``).
    """

    def __init__(self, message: str, failure: str = "internal") -> None:
        super().__init__(message)
        self.failure = failure
