"""The pane worker: one actor between an editor and its agents.

It owns the main pane's agent and at most one fork, runs turns, routes
steers, cancels, forks, closes panes, replaces agents, runs isolated
auxiliary jobs, and shuts everything down in order. It knows agents, not LSP.

Commands for one pane run one after another, in the order they were sent,
each pane in its own lane: a slow command (cancelling a running turn, closing
a pane) holds up its own pane only, so a steer to main is handled while the
fork is closing.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import anyio
import anyio.abc
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from agentls.agent.agent import Agent
from agentls.agent.errors import (
    AgentError,
    AgentStopped,
    TurnCancelled,
    TurnNotCancellable,
    TurnNotSteerable,
)
from agentls.agent.interrupt import CancelToken
from agentls.agent.receipt import Receipt
from agentls.agent.turn import Turn, TurnControl, TurnOutcome
from agentls.worker.messages import (
    FORK_ALREADY_OPEN,
    MAIN,
    PANE_BUSY,
    PANE_UNAVAILABLE,
    PRIMARY_UNAVAILABLE,
    STOPPING,
    AgentReplaced,
    ApprovalUpdated,
    Auxiliary,
    AuxiliaryCancelled,
    AuxiliaryFailed,
    Cancel,
    CancelAll,
    ClosePane,
    Command,
    Completion,
    EffortUpdated,
    Failure,
    FastModeUpdated,
    ForkFailed,
    ForkOpened,
    ForkPromoted,
    OpenFork,
    PaneClosed,
    PaneId,
    ReplaceAgent,
    SetApproval,
    SetEffort,
    SetFastMode,
    Steer,
    SteerAdmitted,
    SteerFailed,
    SteerPromoted,
    Stopped,
    Submit,
    TurnAccepted,
    TurnFinished,
    TurnId,
    TurnsCancelled,
    WorkerEvent,
)

log = logging.getLogger(__name__)

R = TypeVar("R")


@dataclass(slots=True)
class _ActiveTurn:
    pane: PaneId  # changes if the pane is promoted
    id: TurnId
    control: TurnControl
    job: Auxiliary | None = None
    # The worker asked for this cancellation (so it is not an error).
    cancelled: bool = False


def _answer(reply: Completion[R] | None, value: R) -> None:
    if reply is not None:
        reply.set(value)


class PaneWorker:
    """Create with the main pane's agent, then ``await worker.run(shutdown)``."""

    def __init__(self, agent: Agent) -> None:
        self._agents: dict[PaneId, Agent] = {MAIN: agent}
        self._fork: PaneId | None = None
        self._turns: dict[tuple[PaneId, TurnId], _ActiveTurn] = {}
        self._lanes: dict[PaneId, MemoryObjectSendStream[Command]] = {}
        self._stopping = False
        send, receive = anyio.create_memory_object_stream[Command](math.inf)
        self.commands: MemoryObjectSendStream[Command] = send
        self._command_rx = receive
        out, self.events = anyio.create_memory_object_stream[WorkerEvent](math.inf)
        self._events_tx: MemoryObjectSendStream[WorkerEvent] = out
        self._turn_group: anyio.abc.TaskGroup | None = None
        self._lane_group: anyio.abc.TaskGroup | None = None

    # --- read-only views for the protocol layer ---------------------------------

    def agent(self, pane: PaneId) -> Agent | None:
        return self._agents.get(pane)

    def pane_of(self, turn_id: TurnId) -> PaneId | None:
        """The pane a running or queued turn belongs to now."""
        return next((key[0] for key in self._turns if key[1] == turn_id), None)

    @property
    def fork_pane(self) -> PaneId | None:
        return self._fork

    @property
    def stopping(self) -> bool:
        return self._stopping

    def send(self, command: Command) -> None:
        """Queue a command (never blocks). After shutdown, it is answered as refused."""
        try:
            self.commands.send_nowait(command)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._refuse(command)

    # --- the actor -----------------------------------------------------------------

    async def run(self, shutdown: CancelToken | None = None) -> None:
        """Serve commands until ``shutdown`` fires or the command channel closes,
        then stop in order: refuse what is left, cancel every turn, shut the
        agents down, report every turn, and emit Stopped last."""
        error: str | None = None
        try:
            async with anyio.create_task_group() as turns:
                self._turn_group = turns
                async with anyio.create_task_group() as lanes:
                    self._lane_group = lanes
                    await self._dispatch(shutdown)
                    self._stopping = True
                    self.commands.close()
                    for command in self._drain():
                        self._refuse(command)
                    for lane in self._lanes.values():
                        lane.close()
                error = await self._stop_everything()
        finally:
            self._stopping = True
            self._emit(Stopped(error=error))
            self._events_tx.close()

    async def _dispatch(self, shutdown: CancelToken | None) -> None:
        async with anyio.create_task_group() as group:
            if shutdown is not None:

                async def watch() -> None:
                    await shutdown.cancelled()
                    group.cancel_scope.cancel()

                group.start_soon(watch)
            async for command in self._command_rx:
                self._route(command)
            group.cancel_scope.cancel()

    def _drain(self) -> list[Command]:
        drained: list[Command] = []
        while True:
            try:
                drained.append(self._command_rx.receive_nowait())
            except (anyio.WouldBlock, anyio.EndOfStream, anyio.ClosedResourceError):
                return drained

    def _route(self, command: Command) -> None:
        lane = self._lanes.get(command.pane)
        if lane is None:
            lane, receive = anyio.create_memory_object_stream[Command](math.inf)
            self._lanes[command.pane] = lane
            assert self._lane_group is not None
            self._lane_group.start_soon(self._lane, receive, name=f"lane {command.pane}")
        lane.send_nowait(command)

    async def _lane(self, receive: MemoryObjectReceiveStream[Command]) -> None:
        async with receive:
            async for command in receive:
                if self._stopping:
                    self._refuse(command)
                    continue
                try:
                    await self._handle(command)
                except Exception as exc:  # a bug must not take the whole worker down
                    log.exception("worker command %r failed", command)
                    self._refuse(command, f"internal error: {exc}")

    async def _handle(self, command: Command) -> None:
        match command:
            case Submit():
                self._submit(command)
            case Auxiliary():
                self._auxiliary(command)
            case Steer():
                self._steer(command)
            case SetEffort():
                self._set_effort(command)
            case SetFastMode():
                self._set_fast_mode(command)
            case SetApproval():
                self._set_approval(command)
            case OpenFork():
                self._open_fork(command)
            case CancelAll():
                keys = [key for key in self._turns if key[0] == command.pane]
                event = await self._cancel(command.pane, keys)
                self._emit(event)
                _answer(command.reply, event)
            case Cancel():
                # By id alone: turn ids are unique, and a promoted fork's turns moved pane.
                keys = [key for key in self._turns if key[1] == command.id]
                event = await self._cancel(command.pane, keys)
                self._emit(event)
                _answer(command.reply, event)
            case ClosePane():
                await self._close_pane(command)
            case ReplaceAgent():
                await self._replace_agent(command)

    def _refuse(self, command: Command, message: str = STOPPING) -> None:
        """Answer a command that will not be carried out: nothing is silently dropped."""
        match command:
            case Submit():
                self._emit(TurnFinished(command.pane, command.id, message, None, rejected=True))
            case Auxiliary():
                command.completion.set(AuxiliaryCancelled())
            case Steer():
                event = SteerFailed(command.pane, command.queue_id, message)
                self._emit(event)
                _answer(command.reply, event)
            case SetEffort():
                _answer(command.reply, EffortUpdated(command.pane, command.effort, message))
            case SetFastMode():
                _answer(command.reply, FastModeUpdated(command.pane, command.enabled, message))
            case SetApproval():
                _answer(command.reply, ApprovalUpdated(command.pane, command.policy, message))
            case OpenFork():
                _answer(command.reply, ForkFailed(command.pane, message, "stopping"))
            case CancelAll() | Cancel():
                _answer(command.reply, TurnsCancelled(command.pane, 0, message))
            case ClosePane():
                _answer(command.reply, Failure("stopping", message))
            case ReplaceAgent():
                _answer(command.reply, Failure("stopping", message))

    def _emit(self, event: WorkerEvent) -> None:
        try:
            self._events_tx.send_nowait(event)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass

    # --- turns ---------------------------------------------------------------------

    def _submit(self, command: Submit) -> None:
        agent = self._agents.get(command.pane)
        if agent is None:
            self._emit(
                TurnFinished(command.pane, command.id, PANE_UNAVAILABLE, None, rejected=True)
            )
            return
        try:
            turn = agent.prompt(command.prompt, turn_id=command.id)
        except AgentError as exc:
            self._emit(TurnFinished(command.pane, command.id, str(exc), None, rejected=True))
            return
        self._track(command.pane, turn)
        self._emit(TurnAccepted(command.pane, command.id))

    def _track(
        self, pane: PaneId, turn: Turn, job: Auxiliary | None = None, isolated: Agent | None = None
    ) -> None:
        active = _ActiveTurn(pane, turn.id, turn.control, job)
        self._turns[(pane, turn.id)] = active
        assert self._turn_group is not None
        self._turn_group.start_soon(self._watch, active, turn, isolated)

    def _auxiliary(self, job: Auxiliary) -> None:
        if job.shutdown.is_cancelled():
            job.completion.set(AuxiliaryCancelled())
            return
        agent = self._agents.get(job.pane)
        if agent is None:
            job.completion.set(AuxiliaryFailed(PANE_UNAVAILABLE))
            return
        try:
            if job.context == "conversation":
                isolated = agent.fork(background=True)
            else:
                isolated = agent.spawn(background=True)
        except AgentError as exc:
            job.completion.set(AuxiliaryFailed(str(exc)))
            return
        assert self._turn_group is not None
        self._turn_group.start_soon(_drain_events, isolated)  # nobody may see its events
        try:
            turn = isolated.prompt(job.prompt, turn_id=job.id)
        except AgentError as exc:
            job.completion.set(AuxiliaryFailed(str(exc)))
            self._turn_group.start_soon(isolated.shutdown)
            return
        self._track(job.pane, turn, job, isolated)

    async def _watch(self, active: _ActiveTurn, turn: Turn, isolated: Agent | None) -> None:
        """Await one turn (racing an auxiliary job's scope) and report its end."""
        by_scope = False
        result: TurnOutcome | Exception
        try:
            job = active.job
            if job is None:
                result = await _settle(turn)
            else:
                async with anyio.create_task_group() as race:

                    async def scope_fired() -> None:
                        nonlocal by_scope
                        await job.shutdown.cancelled()
                        by_scope = True
                        try:
                            await turn.control.cancel()
                        except TurnNotCancellable:
                            pass

                    race.start_soon(scope_fired)
                    result = await _settle(turn)
                    race.cancel_scope.cancel()
        except Exception as exc:
            # Reported against this turn's own pane and id, whatever went wrong.
            log.exception("turn %s on %s crashed", active.id, active.pane)
            result = RuntimeError(f"turn task stopped unexpectedly: {exc}")
        finally:
            if isolated is not None:
                with anyio.CancelScope(shield=True):
                    await isolated.shutdown()
        self._finish(active, result, by_scope)

    def _finish(self, active: _ActiveTurn, result: TurnOutcome | Exception, by_scope: bool) -> None:
        self._turns.pop((active.pane, active.id), None)
        expected = self._stopping or active.cancelled or by_scope
        if active.job is not None:
            if isinstance(result, TurnOutcome):
                active.job.completion.set(result.final_message)
            elif isinstance(result, TurnCancelled) and expected:
                active.job.completion.set(AuxiliaryCancelled())
            else:
                active.job.completion.set(AuxiliaryFailed(str(result)))
            return
        if isinstance(result, TurnOutcome):
            event = TurnFinished(
                active.pane,
                active.id,
                None,
                result.snapshot,
                "completed",
                result.final_message,
                result.usage,
            )
        elif isinstance(result, TurnCancelled):
            event = TurnFinished(
                active.pane,
                active.id,
                None if expected else str(result),
                None,
                "cancelled",
                receipt=result.receipt,
            )
        else:
            event = TurnFinished(active.pane, active.id, str(result), None, "failed")
        self._emit(event)

    def _steer(self, command: Steer) -> None:
        pane = command.pane
        agent = self._agents.get(pane)
        if agent is None:
            self._steer_failed(command, PANE_UNAVAILABLE)
            return
        candidates = sorted(
            (
                active
                for active in self._turns.values()
                # A steer never lands in an auxiliary job's turn.
                if active.pane == pane
                and active.job is None
                and command.expected_turn_id in (None, active.id)
            ),
            key=lambda active: active.id,
        )
        for active in candidates:
            try:
                active.control.steer(command.prompt)
            except TurnNotSteerable:
                continue
            except AgentError as exc:
                self._steer_failed(command, str(exc))
                return
            event = SteerAdmitted(pane, command.queue_id, active.id)
            self._emit(event)
            _answer(command.reply, event)
            return
        # No running turn took it: it becomes a turn of its own, so it is never lost.
        try:
            turn = agent.prompt(command.prompt, turn_id=command.fallback_id)
        except AgentError as exc:
            self._steer_failed(command, str(exc))
            return
        self._track(pane, turn)
        self._emit(TurnAccepted(pane, command.fallback_id))
        promoted = SteerPromoted(pane, command.queue_id, command.fallback_id, command.prompt)
        self._emit(promoted)
        _answer(command.reply, promoted)

    def _steer_failed(self, command: Steer, error: str) -> None:
        event = SteerFailed(command.pane, command.queue_id, error)
        self._emit(event)
        _answer(command.reply, event)

    async def _cancel(self, pane: PaneId, keys: list[tuple[PaneId, TurnId]]) -> TurnsCancelled:
        """Cancel the given turns concurrently; count those that really were."""
        receipts: list[Receipt] = []
        errors: list[str] = []

        async def cancel_one(active: _ActiveTurn) -> None:
            active.cancelled = True
            try:
                receipts.append(await active.control.cancel())
            except TurnNotCancellable:
                pass
            except AgentError as exc:
                errors.append(str(exc))

        async with anyio.create_task_group() as group:
            for key in sorted(keys):
                active = self._turns.get(key)
                if active is not None:
                    group.start_soon(cancel_one, active)
        receipts.sort(key=lambda receipt: receipt.turn_id)
        return TurnsCancelled(pane, len(receipts), errors[0] if errors else None, tuple(receipts))

    # --- settings --------------------------------------------------------------------

    def _set_effort(self, command: SetEffort) -> None:
        error = _apply(self._agents.get(command.pane), lambda a: a.set_effort(command.effort))
        event = EffortUpdated(command.pane, command.effort, error)
        self._emit(event)
        _answer(command.reply, event)

    def _set_fast_mode(self, command: SetFastMode) -> None:
        error = _apply(self._agents.get(command.pane), lambda a: a.set_fast_mode(command.enabled))
        event = FastModeUpdated(command.pane, command.enabled, error)
        self._emit(event)
        _answer(command.reply, event)

    def _set_approval(self, command: SetApproval) -> None:
        error = _apply(
            self._agents.get(command.pane),
            lambda a: a.set_approval(command.policy),  # type: ignore[arg-type]
        )
        event = ApprovalUpdated(command.pane, command.policy, error)
        self._emit(event)
        _answer(command.reply, event)

    # --- panes -------------------------------------------------------------------------

    def _open_fork(self, command: OpenFork) -> None:
        failure: ForkFailed | None = None
        source = self._agents.get(command.source)
        if self._fork is not None:
            failure = ForkFailed(command.pane, FORK_ALREADY_OPEN, "fork_already_open")
        elif source is None:
            failure = ForkFailed(command.pane, PRIMARY_UNAVAILABLE, "pane_unavailable")
        elif command.pane in self._agents:
            failure = ForkFailed(command.pane, f"pane {command.pane!r} already exists")
        if failure is None:
            assert source is not None
            try:
                fork = source.fork()
            except AgentError as exc:
                failure = ForkFailed(command.pane, str(exc))
            else:
                self._agents[command.pane] = fork
                self._fork = command.pane
                opened = ForkOpened(command.pane, fork.events, len(fork.history))
                self._emit(opened)
                _answer(command.reply, opened)
                return
        self._emit(failure)
        _answer(command.reply, failure)

    async def _close_pane(self, command: ClosePane) -> None:
        pane = command.pane
        agent = self._agents.pop(pane, None)
        if agent is None:
            self._emit(TurnsCancelled(pane, 0, None))
            _answer(command.reply, Failure("pane_unavailable", PANE_UNAVAILABLE))
            return
        closing = [key for key in self._turns if key[0] == pane]
        # Main always exists, even while it closes: the fork (or, without one, a
        # fresh agent) takes its place at once, and commands sent to main from
        # now on wait in main's lane, then go to the successor.
        promoted: PaneId | None = None
        if pane == MAIN and self._fork is not None:
            promoted = self._promote_fork()
        elif pane == MAIN:
            replacement = agent.spawn()
            self._agents[MAIN] = replacement
            self._emit(AgentReplaced(MAIN, replacement, replacement.events))
        if pane == self._fork:
            self._fork = None
        cancelled = await self._cancel(pane, closing)
        error = cancelled.error
        try:
            await agent.shutdown()
        except AgentError as exc:
            error = error or str(exc)
        self._emit(TurnsCancelled(pane, cancelled.count, error, cancelled.receipts))
        closed = PaneClosed(pane, cancelled.count, promoted)
        self._emit(closed)
        _answer(command.reply, closed)

    def _promote_fork(self) -> PaneId:
        fork = self._fork
        assert fork is not None
        self._agents[MAIN] = self._agents.pop(fork)
        self._fork = None
        for key in [key for key in self._turns if key[0] == fork]:
            active = self._turns.pop(key)
            active.pane = MAIN
            self._turns[(MAIN, active.id)] = active
        self._emit(ForkPromoted(fork, MAIN))
        return fork

    async def _replace_agent(self, command: ReplaceAgent) -> None:
        pane = command.pane
        old = self._agents.get(pane)
        if old is None:
            failure = Failure("pane_unavailable", PANE_UNAVAILABLE)
            self._emit(ForkFailed(pane, PANE_UNAVAILABLE, "pane_unavailable"))
            if command.agent is not None:
                await command.agent.shutdown()
            _answer(command.reply, failure)
            return
        if any(key[0] == pane and active.job is None for key, active in self._turns.items()):
            _answer(command.reply, Failure("pane_busy", PANE_BUSY))
            return
        new = command.agent or old.spawn()
        self._agents[pane] = new
        await old.shutdown()
        replaced = AgentReplaced(pane, new, new.events)
        self._emit(replaced)
        _answer(command.reply, replaced)

    # --- shutdown ------------------------------------------------------------------------

    async def _stop_everything(self) -> str | None:
        await self._cancel("*", list(self._turns))
        errors: list[str] = []

        async def stop(agent: Agent) -> None:
            try:
                await agent.shutdown()
            except AgentError as exc:
                errors.append(str(exc))

        async with anyio.create_task_group() as group:
            for agent in self._agents.values():
                group.start_soon(stop, agent)
        return errors[0] if errors else None


async def _settle(turn: Turn) -> TurnOutcome | Exception:
    try:
        return await turn
    except (AgentError, AgentStopped) as exc:
        return exc


async def _drain_events(agent: Agent) -> None:
    async for _ in agent.events:
        pass


def _apply(agent: Agent | None, change: Callable[[Agent], None]) -> str | None:
    if agent is None:
        return str(AgentStopped())
    try:
        change(agent)
    except (AgentError, ValueError) as exc:
        return str(exc)
    return None


def spawn(
    task_group: anyio.abc.TaskGroup, agent: Agent, shutdown: CancelToken
) -> tuple[MemoryObjectSendStream[Command], MemoryObjectReceiveStream[WorkerEvent]]:
    """Start a worker for ``agent`` in ``task_group``; the twin of the reference's ``spawn``."""
    worker = PaneWorker(agent)
    task_group.start_soon(worker.run, shutdown)
    return worker.commands, worker.events
