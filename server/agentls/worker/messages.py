"""What the pane worker is told (commands) and what it tells (events).

Every command may carry a ``reply``: a one-shot the worker resolves with the
command's own result, for requesters that wait on one thing (the protocol
layer). The events report the same facts to observers (a UI), in order.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Generic, Literal, TypeVar

import anyio

from agentls.agent.agent import Agent
from agentls.agent.interrupt import CancelToken
from agentls.agent.receipt import Receipt
from agentls.agent.settings import SettingChange
from agentls.agent.stream import EventStream
from agentls.domain import FailureKind, TurnStatus
from agentls.model.types import ContextSize, Usage
from agentls.schema.names import CompactionMode

if TYPE_CHECKING:
    from agentls.sessions.store import Resumed

PaneId = str
MAIN: PaneId = "main"
TurnId = int
AgentEvents = EventStream

T = TypeVar("T")


class Completion(Generic[T]):
    """A one-shot result: the first ``set`` wins, ``wait`` returns it."""

    __slots__ = ("_event", "_value")

    def __init__(self) -> None:
        self._event = anyio.Event()
        self._value: T | None = None

    def set(self, value: T) -> None:
        if not self._event.is_set():
            self._value = value
            self._event.set()

    def done(self) -> bool:
        return self._event.is_set()

    def peek(self) -> T | None:
        return self._value

    async def wait(self) -> T:
        await self._event.wait()
        return self._value  # type: ignore[return-value]


# --- results carried by replies ------------------------------------------------


@dataclass(frozen=True, slots=True)
class Failure:
    """A command that could not be carried out. ``kind`` is what callers act
    on (the protocol layer maps it to an error code); ``message`` is for people
    and may be reworded freely."""

    kind: FailureKind
    message: str
    pane: PaneId | None = None


def pane_unavailable(pane: PaneId) -> Failure:
    return Failure(
        "pane_unavailable",
        f"pane {pane!r} is no longer available (it was closed, or never opened)",
        pane,
    )


STOPPING = Failure("stopping", "the server is shutting down")


@dataclass(frozen=True, slots=True)
class AuxiliaryCancelled:
    pass


@dataclass(frozen=True, slots=True)
class AuxiliaryFailed:
    failure: Failure


AuxiliaryResult = str | AuxiliaryCancelled | AuxiliaryFailed


# --- commands --------------------------------------------------------------------


@dataclass(slots=True)
class Submit:
    pane: PaneId
    id: TurnId
    prompt: str
    # Cancelled before it was even submitted (the editor's $/cancelRequest came
    # first): it takes its place in the queue, and is cancelled there at once.
    cancelled: bool = False


@dataclass(slots=True)
class Auxiliary:
    pane: PaneId
    id: TurnId
    prompt: str
    # The job's own cancel scope: cancelling it cancels only this job.
    shutdown: CancelToken
    completion: Completion[AuxiliaryResult]
    # "clean" runs on a spawned agent; "conversation" on a fork of the pane's.
    context: Literal["clean", "conversation"] = "clean"


@dataclass(slots=True)
class Steer:
    pane: PaneId
    queue_id: int
    # The id a promoted steer's new turn gets, or where it gets one: the
    # server allocates it only if the steer is promoted, so an admitted steer
    # uses up no turn id.
    fallback_id: TurnId | Callable[[], TurnId]
    prompt: str
    # Only this turn may take the steer; any other counts as "no running turn".
    expected_turn_id: TurnId | None = None
    reply: Completion[SteerAdmitted | SteerPromoted | SteerFailed] | None = None


@dataclass(slots=True)
class NewSession:
    """Start a new session in the pane: a new agent (``None``: a fresh sibling
    of the current one, with its settings) replaces the pane's agent."""

    pane: PaneId
    agent: Agent | None = None
    reply: Completion[SessionStarted | Failure] | None = None
    # The agent continues a stored session (``agent/resume``).
    resumed: Resumed | None = None


@dataclass(slots=True)
class ChangeSetting:
    """Change one of the pane's settings; it applies from the next model
    request or tool call, also in the middle of a turn."""

    pane: PaneId
    change: SettingChange
    reply: Completion[SettingChanged] | None = None


@dataclass(slots=True)
class CancelAll:
    pane: PaneId
    reply: Completion[TurnsCancelled] | None = None
    # Queued turns the worker cancelled the moment the command arrived.
    early: list[Receipt] = field(default_factory=list)


@dataclass(slots=True)
class Cancel:
    """Cancel one turn; the pane's other turns go on."""

    pane: PaneId
    id: TurnId
    reply: Completion[TurnsCancelled] | None = None
    early: list[Receipt] = field(default_factory=list)


@dataclass(slots=True)
class OpenFork:
    """Open ``pane`` as a fork of ``source``'s conversation."""

    pane: PaneId
    source: PaneId = MAIN
    reply: Completion[ForkOpened | ForkFailed] | None = None


@dataclass(slots=True)
class ClosePane:
    pane: PaneId
    reply: Completion[PaneClosed | Failure] | None = None


@dataclass(slots=True)
class CancelTool:
    """Stop one running tool call; its turn goes on."""

    pane: PaneId
    call_id: str
    reply: Completion[ToolCancelled | Failure] | None = None


@dataclass(slots=True)
class Compact:
    """Compact the pane's conversation now; the pane must be idle."""

    pane: PaneId
    focus: str | None = None
    reply: Completion[Compacted | Failure] | None = None


Command = (
    Submit
    | Auxiliary
    | Steer
    | NewSession
    | ChangeSetting
    | CancelAll
    | Cancel
    | OpenFork
    | ClosePane
    | CancelTool
    | Compact
)


# --- events ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TurnAccepted:
    pane: PaneId
    id: TurnId


@dataclass(frozen=True, slots=True)
class TurnFinished:
    """A turn ended. ``error`` (for the user) is None for completed and for
    cancelled turns. ``rejected`` says why a turn never started."""

    pane: PaneId
    id: TurnId
    error: str | None
    status: TurnStatus = "failed"
    final_message: str = ""
    usage: Usage = field(default_factory=Usage)
    receipt: Receipt | None = None
    rejected: Failure | None = None
    context: ContextSize | None = None
    # What failed (``agent.events.TurnFinished.failure``), for a failed turn.
    failure: str | None = None


@dataclass(frozen=True, slots=True)
class SteerAdmitted:
    pane: PaneId
    queue_id: int
    # The running turn that took it.
    id: TurnId


@dataclass(frozen=True, slots=True)
class SteerPromoted:
    pane: PaneId
    queue_id: int
    id: TurnId
    prompt: str


@dataclass(frozen=True, slots=True)
class SteerFailed:
    pane: PaneId
    queue_id: int
    failure: Failure


@dataclass(frozen=True, slots=True)
class TurnsCancelled:
    pane: PaneId
    count: int
    failure: Failure | None
    receipts: tuple[Receipt, ...] = ()


@dataclass(frozen=True, slots=True)
class ForkOpened:
    pane: PaneId
    events: AgentEvents
    items: int = 0


@dataclass(frozen=True, slots=True)
class ForkFailed:
    pane: PaneId
    failure: Failure


@dataclass(frozen=True, slots=True)
class ForkPromoted:
    """The main pane closed while a fork was open: the fork is the main pane now."""

    fork: PaneId
    pane: PaneId


@dataclass(frozen=True, slots=True)
class PaneClosed:
    pane: PaneId
    cancelled: int
    # The fork that became this pane, when main closed with a fork open.
    promoted: PaneId | None = None


@dataclass(frozen=True, slots=True)
class SessionStarted:
    """The pane has a new agent (a new session)."""

    pane: PaneId
    agent: Agent
    events: AgentEvents
    resumed: Resumed | None = None


@dataclass(frozen=True, slots=True)
class SettingChanged:
    pane: PaneId
    change: SettingChange
    failure: Failure | None = None


@dataclass(frozen=True, slots=True)
class ToolCancelled:
    pane: PaneId
    call_id: str
    cancelled: bool
    killed_processes: int


@dataclass(frozen=True, slots=True)
class Compacted:
    pane: PaneId
    before_tokens: int
    after_tokens: int
    mode: CompactionMode


@dataclass(frozen=True, slots=True)
class Stopped:
    error: str | None = None


WorkerEvent = (
    TurnAccepted
    | TurnFinished
    | SteerAdmitted
    | SteerPromoted
    | SteerFailed
    | TurnsCancelled
    | ForkOpened
    | ForkFailed
    | ForkPromoted
    | PaneClosed
    | SessionStarted
    | SettingChanged
    | Stopped
)
