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
from dataclasses import dataclass
from typing import TypeVar

import anyio
import anyio.abc
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from agentls.agent.agent import Agent
from agentls.agent.errors import (
    AgentBusy,
    AgentError,
    AgentStopped,
    InvalidRequest,
    SteerQueueFull,
    TurnCancelled,
    TurnFailed,
    TurnNotCancellable,
    TurnNotSteerable,
)
from agentls.agent.interrupt import CancelToken
from agentls.agent.receipt import Receipt
from agentls.agent.turn import Turn, TurnControl, TurnOutcome
from agentls.config import ConfigError
from agentls.model.types import Usage
from agentls.worker.messages import (
    MAIN,
    STOPPING,
    Auxiliary,
    AuxiliaryCancelled,
    AuxiliaryFailed,
    Cancel,
    CancelAll,
    CancelTool,
    ChangeSetting,
    ClosePane,
    Command,
    Compact,
    Compacted,
    Completion,
    Failure,
    ForkFailed,
    ForkOpened,
    ForkPromoted,
    NewSession,
    OpenFork,
    PaneClosed,
    PaneId,
    SessionStarted,
    SettingChanged,
    Steer,
    SteerAdmitted,
    SteerFailed,
    SteerPromoted,
    Stopped,
    Submit,
    ToolCancelled,
    TurnAccepted,
    TurnFinished,
    TurnId,
    TurnsCancelled,
    WorkerEvent,
    pane_unavailable,
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
        if isinstance(command, Cancel | CancelAll):
            self._cancel_queued_now(command)
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
                    self._refuse(command, Failure("internal", f"internal error: {exc}"))

    async def _handle(self, command: Command) -> None:
        match command:
            case Submit():
                self._submit(command)
            case Auxiliary():
                self._auxiliary(command)
            case Steer():
                self._steer(command)
            case ChangeSetting():
                self._change_setting(command)
            case OpenFork():
                self._open_fork(command)
            case CancelAll() | Cancel():
                event = await self._cancel(command.pane, self._targets(command), command.early)
                self._emit(event)
                _answer(command.reply, event)
            case ClosePane():
                await self._close_pane(command)
            case NewSession():
                await self._new_session(command)
            case CancelTool():
                # Not in the lane: the kill takes a moment, and the pane's
                # other commands need not wait for it.
                assert self._turn_group is not None
                self._turn_group.start_soon(self._cancel_tool, command)
            case Compact():
                self._compact(command)

    def _refuse(self, command: Command, failure: Failure = STOPPING) -> None:
        """Answer a command that will not be carried out: nothing is silently dropped."""
        match command:
            case Submit():
                self._reject(command, failure)
            case Auxiliary():
                if failure.kind == "stopping":
                    command.completion.set(AuxiliaryCancelled())
                else:
                    command.completion.set(AuxiliaryFailed(failure))
            case Steer():
                self._steer_failed(command, failure)
            case ChangeSetting():
                _answer(command.reply, SettingChanged(command.pane, command.change, failure))
            case OpenFork():
                _answer(command.reply, ForkFailed(command.pane, failure))
            case CancelAll() | Cancel():
                _answer(command.reply, TurnsCancelled(command.pane, 0, failure))
            case ClosePane():
                _answer(command.reply, failure)
            case NewSession():
                _answer(command.reply, failure)
            case CancelTool():
                _answer(command.reply, failure)
            case Compact():
                _answer(command.reply, failure)

    def _reject(self, command: Submit, failure: Failure) -> None:
        self._emit(TurnFinished(command.pane, command.id, failure.message, rejected=failure))

    def _emit(self, event: WorkerEvent) -> None:
        try:
            self._events_tx.send_nowait(event)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass

    # --- turns ---------------------------------------------------------------------

    def _submit(self, command: Submit) -> None:
        agent = self._agents.get(command.pane)
        if agent is None:
            self._reject(command, pane_unavailable(command.pane))
            return
        try:
            turn = agent.prompt(command.prompt, turn_id=command.id)
        except AgentError as exc:
            self._reject(command, _failure(exc, command.pane))
            return
        active = self._track(command.pane, turn)
        self._emit(TurnAccepted(command.pane, command.id))
        if command.cancelled:
            # Now, before the agent's owner task can start it.
            active.cancelled = True
            turn.control.cancel_if_queued()

    def _track(
        self, pane: PaneId, turn: Turn, job: Auxiliary | None = None, isolated: Agent | None = None
    ) -> _ActiveTurn:
        active = _ActiveTurn(pane, turn.id, turn.control, job)
        self._turns[(pane, turn.id)] = active
        assert self._turn_group is not None
        self._turn_group.start_soon(self._watch, active, turn, isolated)
        return active

    def _auxiliary(self, job: Auxiliary) -> None:
        if job.shutdown.is_cancelled():
            job.completion.set(AuxiliaryCancelled())
            return
        agent = self._agents.get(job.pane)
        if agent is None:
            job.completion.set(AuxiliaryFailed(pane_unavailable(job.pane)))
            return
        try:
            if job.context == "conversation":
                isolated = agent.fork(background=True)
            else:
                isolated = agent.spawn(background=True)
        except AgentError as exc:
            job.completion.set(AuxiliaryFailed(_failure(exc, job.pane)))
            return
        assert self._turn_group is not None
        self._turn_group.start_soon(_drain_events, isolated)  # nobody may see its events
        try:
            turn = isolated.prompt(job.prompt, turn_id=job.id)
        except AgentError as exc:
            job.completion.set(AuxiliaryFailed(_failure(exc, job.pane)))
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
        self._finish(active, result, by_scope, turn)

    def _finish(
        self,
        active: _ActiveTurn,
        result: TurnOutcome | Exception,
        by_scope: bool,
        turn: Turn | None = None,
    ) -> None:
        self._turns.pop((active.pane, active.id), None)
        expected = self._stopping or active.cancelled or by_scope
        if active.job is not None:
            if isinstance(result, TurnOutcome):
                active.job.completion.set(result.final_message)
            elif isinstance(result, TurnCancelled) and expected:
                active.job.completion.set(AuxiliaryCancelled())
            else:
                active.job.completion.set(AuxiliaryFailed(Failure("internal", str(result))))
            return
        # What the turn used, and how full the window was when it ended.
        usage = turn.usage if turn is not None else Usage()
        context = turn.context if turn is not None else None
        if isinstance(result, TurnOutcome):
            event = TurnFinished(
                active.pane,
                active.id,
                None,
                "completed",
                result.final_message,
                result.usage,
                context=result.context,
            )
        elif isinstance(result, TurnCancelled):
            event = TurnFinished(
                active.pane,
                active.id,
                None if expected else str(result),
                "cancelled",
                usage=usage,
                receipt=result.receipt,
                context=context,
            )
        else:
            event = TurnFinished(
                active.pane,
                active.id,
                str(result),
                "failed",
                usage=usage,
                context=context,
                failure=result.failure if isinstance(result, TurnFailed) else "internal",
            )
        self._emit(event)

    def _steer(self, command: Steer) -> None:
        pane = command.pane
        agent = self._agents.get(pane)
        if agent is None:
            self._steer_failed(command, pane_unavailable(pane))
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
                self._steer_failed(command, _failure(exc, pane))
                return
            event = SteerAdmitted(pane, command.queue_id, active.id)
            self._emit(event)
            _answer(command.reply, event)
            return
        # No running turn took it: it becomes a turn of its own, so it is never lost.
        fallback = command.fallback_id
        turn_id = fallback if isinstance(fallback, int) else fallback()
        try:
            turn = agent.prompt(command.prompt, turn_id=turn_id)
        except AgentError as exc:
            self._steer_failed(command, _failure(exc, pane))
            return
        self._track(pane, turn)
        self._emit(TurnAccepted(pane, turn_id))
        promoted = SteerPromoted(pane, command.queue_id, turn_id, command.prompt)
        self._emit(promoted)
        _answer(command.reply, promoted)

    def _steer_failed(self, command: Steer, failure: Failure) -> None:
        event = SteerFailed(command.pane, command.queue_id, failure)
        self._emit(event)
        _answer(command.reply, event)

    def _targets(self, command: Cancel | CancelAll) -> list[tuple[PaneId, TurnId]]:
        if isinstance(command, CancelAll):
            return [key for key in self._turns if key[0] == command.pane]
        # By id alone: turn ids are unique, and a promoted fork's turns moved pane.
        return [key for key in self._turns if key[1] == command.id]

    def _cancel_queued_now(self, command: Cancel | CancelAll) -> None:
        """Queued turns are cancelled the moment the command arrives, not when
        the pane's lane gets to it: behind a slow command (cancelling the
        running turn), a queued turn would otherwise start — and call the model
        — in between."""
        for key in self._targets(command):
            active = self._turns[key]
            receipt = active.control.cancel_if_queued()
            if receipt is not None:
                active.cancelled = True
                command.early.append(receipt)

    async def _cancel(
        self,
        pane: PaneId,
        keys: list[tuple[PaneId, TurnId]],
        early: list[Receipt] | None = None,
    ) -> TurnsCancelled:
        """Cancel the given turns concurrently; count those that really were
        (``early``: those already cancelled while they were queued)."""
        receipts: list[Receipt] = list(early or ())
        done = {receipt.turn_id for receipt in receipts}
        keys = [key for key in keys if key[1] not in done]
        failures: list[Failure] = []

        async def cancel_one(active: _ActiveTurn) -> None:
            active.cancelled = True
            try:
                receipts.append(await active.control.cancel())
            except TurnNotCancellable:
                pass
            except AgentError as exc:
                failures.append(_failure(exc, active.pane))

        async with anyio.create_task_group() as group:
            for key in sorted(keys):
                active = self._turns.get(key)
                if active is not None:
                    group.start_soon(cancel_one, active)
        receipts.sort(key=lambda receipt: receipt.turn_id)
        failure = failures[0] if failures else None
        return TurnsCancelled(pane, len(receipts), failure, tuple(receipts))

    async def _cancel_tool(self, command: CancelTool) -> None:
        agent = self._agents.get(command.pane)
        if agent is None:
            _answer(command.reply, pane_unavailable(command.pane))
            return
        cancelled, killed = await agent.cancel_tool(command.call_id)
        _answer(command.reply, ToolCancelled(command.pane, command.call_id, cancelled, killed))

    # --- settings --------------------------------------------------------------------

    def _change_setting(self, command: ChangeSetting) -> None:
        agent = self._agents.get(command.pane)
        failure: Failure | None = None
        if agent is None:
            failure = pane_unavailable(command.pane)
        else:
            try:
                agent.change_setting(command.change)
            except (AgentError, ConfigError) as exc:
                failure = _failure(exc, command.pane)
        event = SettingChanged(command.pane, command.change, failure)
        self._emit(event)
        _answer(command.reply, event)

    # --- panes -------------------------------------------------------------------------

    def _open_fork(self, command: OpenFork) -> None:
        failure: Failure | None = None
        source = self._agents.get(command.source)
        if self._fork is not None:
            failure = Failure("fork_already_open", f"a fork is already open: {self._fork}")
        elif source is None:
            failure = pane_unavailable(command.source)
        elif command.pane in self._agents:
            failure = Failure("internal", f"pane {command.pane!r} already exists")
        if failure is None:
            assert source is not None
            try:
                fork = source.fork()
            except AgentError as exc:
                failure = _failure(exc, command.source)
            else:
                self._agents[command.pane] = fork
                self._fork = command.pane
                opened = ForkOpened(command.pane, fork.events, len(fork.history))
                self._emit(opened)
                _answer(command.reply, opened)
                return
        failed = ForkFailed(command.pane, failure)
        self._emit(failed)
        _answer(command.reply, failed)

    async def _close_pane(self, command: ClosePane) -> None:
        pane = command.pane
        agent = self._agents.pop(pane, None)
        if agent is None:
            self._emit(TurnsCancelled(pane, 0, None))
            _answer(command.reply, pane_unavailable(pane))
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
            self._emit(SessionStarted(MAIN, replacement, replacement.events))
        if pane == self._fork:
            self._fork = None
        cancelled = await self._cancel(pane, closing)
        failure = cancelled.failure
        try:
            await agent.shutdown()
        except AgentError as exc:
            failure = failure or _failure(exc, pane)
        self._emit(TurnsCancelled(pane, cancelled.count, failure, cancelled.receipts))
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

    async def _new_session(self, command: NewSession) -> None:
        pane = command.pane
        old = self._agents.get(pane)
        failure: Failure | None = None
        if old is None:
            failure = pane_unavailable(pane)
        elif any(key[0] == pane and active.job is None for key, active in self._turns.items()):
            failure = Failure("pane_busy", f"pane {pane!r} has turns in flight", pane)
        if failure is not None:
            if command.agent is not None:
                await command.agent.shutdown()
            _answer(command.reply, failure)
            return
        assert old is not None
        new = command.agent or old.spawn()
        self._agents[pane] = new
        await old.shutdown()
        started = SessionStarted(pane, new, new.events, command.resumed)
        self._emit(started)
        _answer(command.reply, started)

    def _compact(self, command: Compact) -> None:
        """Compact the pane's conversation, answering when it is done (the
        pane's lane goes on meanwhile: a submit queues behind the compaction)."""
        agent = self._agents.get(command.pane)
        if agent is None:
            _answer(command.reply, pane_unavailable(command.pane))
            return
        try:
            job = agent.compact(command.focus)
        except AgentError as exc:
            _answer(command.reply, _failure(exc, command.pane))
            return

        async def wait() -> None:
            try:
                before, after, mode = await job.result()
            except AgentError as exc:
                _answer(command.reply, _failure(exc, command.pane))
            except Exception as exc:  # the model failed: the message says why
                _answer(command.reply, Failure("internal", str(exc), command.pane))
            else:
                _answer(command.reply, Compacted(command.pane, before, after, mode))

        assert self._turn_group is not None
        self._turn_group.start_soon(wait)

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


def _failure(exc: Exception, pane: PaneId) -> Failure:
    """The kind of an agent's error, for those who act on it."""
    match exc:
        case AgentStopped():
            # The pane's agent stopped under the command: the pane is closing.
            return Failure("pane_unavailable", f"pane {pane!r} is closing", pane)
        case InvalidRequest() | ConfigError():
            return Failure("invalid", str(exc), pane)
        case SteerQueueFull():
            return Failure("refused", str(exc), pane)
        case AgentBusy():
            return Failure("pane_busy", f"pane {pane!r} has a turn in flight: {exc}", pane)
    return Failure("internal", str(exc), pane)


def spawn(
    task_group: anyio.abc.TaskGroup, agent: Agent, shutdown: CancelToken
) -> tuple[MemoryObjectSendStream[Command], MemoryObjectReceiveStream[WorkerEvent]]:
    """Start a worker for ``agent`` in ``task_group``; the twin of the reference's ``spawn``."""
    worker = PaneWorker(agent)
    task_group.start_soon(worker.run, shutdown)
    return worker.commands, worker.events
