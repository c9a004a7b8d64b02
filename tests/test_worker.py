"""The pane worker. The first group are twins of the tests in the reference
``worker.rs``, driven (like them) by a model transport that never answers;
then the fixes over the reference and the new commands."""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import anyio
import anyio.abc
import pytest
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from agentls.agent.agent import Agent
from agentls.agent.events import AgentEvent
from agentls.agent.interrupt import CancelToken
from agentls.agent.settings import SettingChange
from agentls.config import AgentConfig
from agentls.worker import worker as worker_module
from agentls.worker.messages import (
    MAIN,
    Auxiliary,
    AuxiliaryCancelled,
    Cancel,
    CancelAll,
    ChangeSetting,
    ClosePane,
    Command,
    Completion,
    Failure,
    ForkFailed,
    ForkOpened,
    ForkPromoted,
    NewSession,
    OpenFork,
    PaneClosed,
    SessionStarted,
    SettingChanged,
    Steer,
    SteerAdmitted,
    SteerPromoted,
    Stopped,
    Submit,
    TurnAccepted,
    TurnFinished,
    TurnsCancelled,
    WorkerEvent,
)
from agentls.worker.worker import PaneWorker, spawn

from .support import WAIT, PendingTransport, pending_client

E = TypeVar("E")


@dataclass
class Rig:
    worker: PaneWorker
    commands: MemoryObjectSendStream[Command]
    updates: MemoryObjectReceiveStream[WorkerEvent]
    shutdown: CancelToken
    transport: PendingTransport
    agent: Agent
    group: anyio.abc.TaskGroup

    def send(self, command: Command) -> None:
        self.commands.send_nowait(command)

    async def recv(self, timeout: float = WAIT) -> WorkerEvent:
        with anyio.fail_after(timeout):
            return await self.updates.receive()

    async def expect(self, kind: type[E], where: Callable[[E], bool] = lambda _: True) -> E:
        """Skip events until one of ``kind`` matching ``where`` arrives."""
        with anyio.fail_after(WAIT):
            while True:
                event = await self.updates.receive()
                if isinstance(event, kind) and where(event):
                    return event

    async def stop(self) -> list[WorkerEvent]:
        """Cancel the worker's scope; return what it said until Stopped (last)."""
        self.shutdown.cancel()
        seen: list[WorkerEvent] = []
        with anyio.fail_after(WAIT):
            async for event in self.updates:
                seen.append(event)
                if isinstance(event, Stopped):
                    break
        return seen


def new_agent(group: anyio.abc.TaskGroup, transport: PendingTransport, root: Path) -> Agent:
    client = pending_client(transport)
    return Agent(group, client, AgentConfig(workspace=root, model=client.config))


async def drain(events: AsyncIterable[AgentEvent], closed: anyio.Event) -> None:
    async for _ in events:
        pass
    closed.set()


@asynccontextmanager
async def rig(tmp_path: Path, *, drain_main: bool = True) -> AsyncIterator[Rig]:
    transport = PendingTransport()
    async with anyio.create_task_group() as group:
        agent = new_agent(group, transport, tmp_path)
        shutdown = CancelToken()
        worker = PaneWorker(agent)
        group.start_soon(worker.run, shutdown)
        the_rig = Rig(worker, worker.commands, worker.events, shutdown, transport, agent, group)
        if drain_main:
            group.start_soon(drain, agent.events, anyio.Event())
        try:
            yield the_rig
        finally:
            shutdown.cancel()
            with anyio.fail_after(WAIT), anyio.CancelScope(shield=True):
                await agent.shutdown()
            group.cancel_scope.cancel()


# --- twins of the reference's tests ------------------------------------------------


async def test_effort_can_change_while_a_turn_is_active(tmp_path: Path) -> None:
    async with rig(tmp_path) as r:
        r.send(Submit(MAIN, 1, "keep running"))
        await r.transport.wait_called()
        assert await r.recv() == TurnAccepted(MAIN, 1)
        r.send(ChangeSetting(MAIN, SettingChange("effort", "high")))
        assert await r.recv() == SettingChanged(MAIN, SettingChange("effort", "high"), None)
        assert isinstance((await r.stop())[-1], Stopped)


async def test_fast_mode_can_change_while_a_turn_is_active(tmp_path: Path) -> None:
    async with rig(tmp_path) as r:
        r.send(Submit(MAIN, 1, "keep running"))
        await r.transport.wait_called()
        assert await r.recv() == TurnAccepted(MAIN, 1)
        r.send(ChangeSetting(MAIN, SettingChange("fast_mode", True)))
        assert await r.recv() == SettingChanged(MAIN, SettingChange("fast_mode", True), None)
        assert isinstance((await r.stop())[-1], Stopped)


async def test_steer_is_admitted_without_blocking_the_pending_turn(tmp_path: Path) -> None:
    async with rig(tmp_path) as r:
        r.send(Submit(MAIN, 1, "initial"))
        await r.transport.wait_called()
        assert await r.recv() == TurnAccepted(MAIN, 1)
        r.send(Steer(MAIN, 7, 2, "change direction"))
        assert await r.recv() == SteerAdmitted(MAIN, 7, 1)
        assert isinstance((await r.stop())[-1], Stopped)


async def test_steer_without_an_active_turn_is_promoted_without_losing_the_message(
    tmp_path: Path,
) -> None:
    async with rig(tmp_path) as r:
        r.send(Steer(MAIN, 9, 3, "race-safe prompt"))
        await r.transport.wait_called()
        assert await r.recv() == TurnAccepted(MAIN, 3)
        assert await r.recv() == SteerPromoted(MAIN, 9, 3, "race-safe prompt")
        assert isinstance((await r.stop())[-1], Stopped)


async def test_pending_prompt_is_accepted_and_cancelled_during_shutdown(tmp_path: Path) -> None:
    async with rig(tmp_path) as r:
        r.send(Submit(MAIN, 1, "keep running"))
        await r.transport.wait_called()
        assert await r.recv() == TurnAccepted(MAIN, 1)
        seen = await r.stop()
        finished = [e for e in seen if isinstance(e, TurnFinished) and e.id == 1]
        assert len(finished) == 1 and finished[0].error is None
        assert finished[0].status == "cancelled" and finished[0].final_message == ""
        assert seen[-1] == Stopped(error=None)


async def test_explicit_cancellation_interrupts_the_turn_and_keeps_worker_alive(
    tmp_path: Path,
) -> None:
    async with rig(tmp_path) as r:
        r.send(Submit(MAIN, 1, "interrupt me"))
        await r.transport.wait_called()
        assert await r.recv() == TurnAccepted(MAIN, 1)
        r.send(CancelAll(MAIN))
        acknowledged = finished = False
        with anyio.fail_after(WAIT):
            while not (acknowledged and finished):
                event = await r.recv()
                if isinstance(event, TurnsCancelled):
                    assert (event.count, event.failure) == (1, None)
                    acknowledged = True
                elif isinstance(event, TurnFinished):
                    assert (event.id, event.error) == (1, None)
                    finished = True
                else:
                    pytest.fail(f"unexpected worker event {event!r}")
        assert not r.shutdown.is_cancelled()
        r.send(CancelAll(MAIN))
        event = await r.recv()
        assert isinstance(event, TurnsCancelled) and (event.count, event.failure) == (0, None)
        assert isinstance((await r.stop())[-1], Stopped)


async def test_auxiliary_job_is_isolated_and_has_targeted_cancellation(tmp_path: Path) -> None:
    async with rig(tmp_path, drain_main=False) as r:
        job_scope = CancelToken()
        completion: Completion[Any] = Completion()
        r.send(Auxiliary(MAIN, 7, "generate a visible overview", job_scope, completion))
        await r.transport.wait_called()
        # Nothing reaches the main pane's event stream or the worker's updates.
        with pytest.raises(anyio.WouldBlock):
            r.agent.events.receive_nowait()
        with pytest.raises(anyio.WouldBlock):
            r.updates.receive_nowait()
        job_scope.cancel()
        with anyio.fail_after(WAIT):
            assert await completion.wait() == AuxiliaryCancelled()
        with pytest.raises(anyio.WouldBlock):
            r.updates.receive_nowait()
        assert isinstance((await r.stop())[-1], Stopped)
        with anyio.fail_after(WAIT), pytest.raises(anyio.EndOfStream):
            await r.agent.events.receive()


async def test_cancelled_auxiliary_job_never_calls_the_model_or_emits_turn_events(
    tmp_path: Path,
) -> None:
    async with rig(tmp_path) as r:
        job_scope = CancelToken()
        job_scope.cancel()
        completion: Completion[Any] = Completion()
        r.send(Auxiliary(MAIN, 7, "do not run", job_scope, completion))
        with anyio.fail_after(WAIT):
            assert await completion.wait() == AuxiliaryCancelled()
        assert r.transport.calls == 0
        with pytest.raises(anyio.WouldBlock):
            r.updates.receive_nowait()
        assert isinstance((await r.stop())[-1], Stopped)


async def test_closing_a_pane_waits_for_agent_cleanup(tmp_path: Path) -> None:
    async with rig(tmp_path, drain_main=False) as r:
        closed = anyio.Event()
        r.group.start_soon(drain, r.agent.events, closed)
        r.send(Submit(MAIN, 1, "close this pane"))
        await r.transport.wait_called()
        assert await r.recv() == TurnAccepted(MAIN, 1)
        reply: Completion[Any] = Completion()
        r.send(ClosePane(MAIN, reply))
        acknowledged = finished = False
        with anyio.fail_after(WAIT):
            while not (acknowledged and finished):
                event = await r.recv()
                if isinstance(event, TurnsCancelled):
                    assert (event.count, event.failure) == (1, None)
                    acknowledged = True
                elif isinstance(event, TurnFinished):
                    assert (event.id, event.error) == (1, None)
                    finished = True
            await reply.wait()
            # The answer came only after the agent's event stream closed.
            await closed.wait()
        seen = await r.stop()
        assert seen[-1] == Stopped(error=None)


async def test_replacement_agent_receives_the_first_prompt(tmp_path: Path) -> None:
    async with rig(tmp_path) as r:
        second_transport = PendingTransport()
        second = new_agent(r.group, second_transport, tmp_path)
        r.group.start_soon(drain, second.events, anyio.Event())
        r.send(NewSession(MAIN, second))
        r.send(Submit(MAIN, 1, "use replacement"))
        await second_transport.wait_called()
        assert r.transport.calls == 0
        assert second_transport.calls == 1
        await r.expect(TurnAccepted, lambda e: e.id == 1)
        assert isinstance((await r.stop())[-1], Stopped)


# --- fixes over the reference ----------------------------------------------------


async def test_a_steer_never_lands_in_an_auxiliary_job(tmp_path: Path) -> None:
    async with rig(tmp_path) as r:
        completion: Completion[Any] = Completion()
        r.send(Auxiliary(MAIN, 5, "background job", CancelToken(), completion))
        await r.transport.wait_called()
        r.send(Steer(MAIN, 1, 6, "meant for the conversation"))
        # Not admitted into the job: promoted to a turn of its own.
        assert await r.recv() == TurnAccepted(MAIN, 6)
        assert await r.recv() == SteerPromoted(MAIN, 1, 6, "meant for the conversation")
        await r.stop()
        assert completion.peek() == AuxiliaryCancelled()


async def test_a_crashed_turn_task_is_reported_against_its_own_pane(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_settle = worker_module._settle

    async def settle(turn: Any) -> Any:
        if turn.id == 42:
            raise RuntimeError("boom")
        return await real_settle(turn)

    monkeypatch.setattr(worker_module, "_settle", settle)
    async with rig(tmp_path) as r:
        reply: Completion[Any] = Completion()
        r.send(OpenFork("fork-1", reply=reply))
        opened = await r.expect(ForkOpened)
        r.group.start_soon(drain, opened.events, anyio.Event())
        r.send(Submit("fork-1", 42, "crash"))
        finished = await r.expect(TurnFinished)
        assert (finished.pane, finished.id) == ("fork-1", 42)
        assert "turn task stopped unexpectedly: boom" in (finished.error or "")
        await r.stop()


async def test_a_slow_close_does_not_block_other_panes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with rig(tmp_path) as r:
        r.send(Submit(MAIN, 1, "main turn"))
        await r.expect(TurnAccepted)
        r.send(OpenFork("fork-1"))
        opened = await r.expect(ForkOpened)
        r.group.start_soon(drain, opened.events, anyio.Event())
        fork = r.worker.agent("fork-1")
        assert fork is not None
        release = anyio.Event()
        real_shutdown = fork.shutdown

        async def slow_shutdown() -> None:
            await release.wait()
            await real_shutdown()

        monkeypatch.setattr(fork, "shutdown", slow_shutdown)
        closed: Completion[Any] = Completion()
        r.send(ClosePane("fork-1", reply=closed))
        r.send(Steer(MAIN, 3, 4, "while the fork closes"))
        assert await r.expect(SteerAdmitted) == SteerAdmitted(MAIN, 3, 1)
        assert not closed.done(), "the fork is still closing"
        release.set()
        with anyio.fail_after(WAIT):
            assert await closed.wait() == PaneClosed("fork-1", 0, None)
        await r.stop()


# --- the rest of the contract ------------------------------------------------------


async def test_spawn_starts_a_worker_that_stops_when_its_scope_is_cancelled(
    tmp_path: Path,
) -> None:
    transport = PendingTransport()
    async with anyio.create_task_group() as group:
        agent = new_agent(group, transport, tmp_path)
        shutdown = CancelToken()
        commands, updates = spawn(group, agent, shutdown)
        commands.send_nowait(ChangeSetting(MAIN, SettingChange("effort", "low")))
        with anyio.fail_after(WAIT):
            assert await updates.receive() == SettingChanged(
                MAIN, SettingChange("effort", "low"), None
            )
        shutdown.cancel()
        with anyio.fail_after(WAIT):
            assert await updates.receive() == Stopped(error=None)
        assert agent.stopped


async def test_closing_the_command_channel_stops_the_worker(tmp_path: Path) -> None:
    async with rig(tmp_path) as r:
        r.send(Submit(MAIN, 1, "running"))
        await r.expect(TurnAccepted)
        r.commands.close()
        finished = await r.expect(TurnFinished)
        assert (finished.id, finished.status, finished.error) == (1, "cancelled", None)
        assert await r.recv() == Stopped(error=None)


async def test_cancel_one_turn_leaves_the_others_alone(tmp_path: Path) -> None:
    async with rig(tmp_path) as r:
        r.send(Submit(MAIN, 1, "running"))
        r.send(Submit(MAIN, 2, "queued"))
        r.send(Submit(MAIN, 3, "queued too"))
        await r.transport.wait_called()
        reply: Completion[TurnsCancelled] = Completion()
        r.send(Cancel(MAIN, 2, reply))
        with anyio.fail_after(WAIT):
            cancelled = await reply.wait()
        assert cancelled.count == 1 and [x.turn_id for x in cancelled.receipts] == [2]
        finished = await r.expect(TurnFinished)
        assert (finished.id, finished.status) == (2, "cancelled")
        # Turn 1 still runs and 3 still waits: only 2 was touched.
        assert r.worker.agent(MAIN) is r.agent and r.agent.busy
        seen = await r.stop()
        ends = [(e.id, e.status) for e in seen if isinstance(e, TurnFinished)]
        assert sorted(ends) == [(1, "cancelled"), (3, "cancelled")]


async def test_a_queued_turn_cancelled_behind_a_slow_cancel_never_starts(
    tmp_path: Path,
) -> None:
    # Cancelling the running turn takes a while; a cancel for the queued turn
    # sent right behind it must not let that turn start (and call the model)
    # in between.
    async with rig(tmp_path) as r:
        r.send(Submit(MAIN, 1, "running"))
        r.send(Submit(MAIN, 2, "queued"))
        await r.transport.wait_called(1)
        first: Completion[TurnsCancelled] = Completion()
        second: Completion[TurnsCancelled] = Completion()
        r.send(Cancel(MAIN, 1, first))
        r.send(Cancel(MAIN, 2, second))
        with anyio.fail_after(WAIT):
            assert (await first.wait()).count == 1
            cancelled = await second.wait()
        assert cancelled.count == 1 and [x.turn_id for x in cancelled.receipts] == [2]
        ends = [await r.expect(TurnFinished) for _ in range(2)]
        assert sorted((e.id, e.status, e.error) for e in ends) == [
            (1, "cancelled", None),
            (2, "cancelled", None),
        ]
        assert r.transport.calls == 1, "the queued turn reached the model"
        await r.stop()


async def test_commands_for_one_pane_keep_their_order(tmp_path: Path) -> None:
    async with rig(tmp_path) as r:
        r.send(Submit(MAIN, 1, "first"))
        await r.transport.wait_called(1)  # turn 1 is running, at the model
        r.send(CancelAll(MAIN))
        r.send(Submit(MAIN, 2, "after the cancel"))
        order: list[str] = []
        with anyio.fail_after(WAIT):
            while len(order) < 4:
                event = await r.recv()
                if isinstance(event, TurnAccepted):
                    order.append(f"accepted {event.id}")
                elif isinstance(event, TurnsCancelled):
                    order.append(f"cancelled {event.count}")
                elif isinstance(event, TurnFinished):
                    order.append(f"finished {event.id}")
        assert order.index("accepted 1") < order.index("cancelled 1") < order.index("accepted 2")
        assert "finished 2" not in order, "the submit after the cancel was not cancelled"
        await r.transport.wait_called(2)
        await r.stop()


async def test_submit_to_a_missing_pane_finishes_at_once(tmp_path: Path) -> None:
    async with rig(tmp_path) as r:
        r.send(Submit("fork-9", 1, "nowhere"))
        finished = await r.recv()
        assert isinstance(finished, TurnFinished)
        assert finished.pane == "fork-9" and finished.id == 1
        assert finished.rejected is not None and finished.rejected.kind == "pane_unavailable"
        await r.stop()


async def test_only_one_fork_at_a_time(tmp_path: Path) -> None:
    async with rig(tmp_path) as r:
        r.send(OpenFork("fork-1"))
        opened = await r.expect(ForkOpened)
        r.group.start_soon(drain, opened.events, anyio.Event())
        reply: Completion[Any] = Completion()
        r.send(OpenFork("fork-2", reply=reply))
        failed = await r.expect(ForkFailed)
        assert failed.failure.message == "a fork is already open: fork-1"
        assert failed.failure.kind == "fork_already_open"
        assert reply.peek() == failed
        await r.stop()


async def test_closing_main_promotes_the_fork(tmp_path: Path) -> None:
    async with rig(tmp_path) as r:
        r.send(OpenFork("fork-1"))
        opened = await r.expect(ForkOpened)
        r.group.start_soon(drain, opened.events, anyio.Event())
        fork = r.worker.agent("fork-1")
        r.send(Submit("fork-1", 5, "fork turn"))
        await r.expect(TurnAccepted)
        reply: Completion[Any] = Completion()
        r.send(ClosePane(MAIN, reply))
        assert await r.expect(ForkPromoted) == ForkPromoted("fork-1", MAIN)
        with anyio.fail_after(WAIT):
            assert await reply.wait() == PaneClosed(MAIN, 0, "fork-1")
        assert r.worker.agent(MAIN) is fork and r.worker.agent("fork-1") is None
        assert r.worker.fork_pane is None
        # The fork's running turn now belongs to main: it is main's to steer.
        r.send(Steer(MAIN, 1, 6, "to the promoted pane"))
        assert await r.expect(SteerAdmitted) == SteerAdmitted(MAIN, 1, 5)
        seen = await r.stop()
        assert any(isinstance(e, TurnFinished) and (e.pane, e.id) == (MAIN, 5) for e in seen)


async def test_closing_main_without_a_fork_leaves_a_fresh_main(tmp_path: Path) -> None:
    async with rig(tmp_path) as r:
        reply: Completion[Any] = Completion()
        r.send(ClosePane(MAIN, reply))
        replaced = await r.expect(SessionStarted)
        r.group.start_soon(drain, replaced.events, anyio.Event())
        with anyio.fail_after(WAIT):
            assert await reply.wait() == PaneClosed(MAIN, 0, None)
        assert r.worker.agent(MAIN) is replaced.agent is not r.agent
        r.send(Submit(MAIN, 1, "still works"))
        await r.expect(TurnAccepted)
        await r.stop()


async def test_replace_agent_requires_an_idle_pane(tmp_path: Path) -> None:
    async with rig(tmp_path) as r:
        r.send(Submit(MAIN, 1, "busy"))
        await r.expect(TurnAccepted)
        reply: Completion[Any] = Completion()
        r.send(NewSession(MAIN, reply=reply))
        with anyio.fail_after(WAIT):
            assert await reply.wait() == Failure(
                "pane_busy", "pane 'main' has turns in flight", MAIN
            )
        r.send(CancelAll(MAIN))
        await r.expect(TurnsCancelled)
        reply = Completion()
        r.send(NewSession(MAIN, reply=reply))
        with anyio.fail_after(WAIT):
            replaced = await reply.wait()
        assert isinstance(replaced, SessionStarted)
        assert replaced.agent is not r.agent and r.agent.stopped
        assert len(replaced.agent.history) == 0
        r.group.start_soon(drain, replaced.events, anyio.Event())
        await r.stop()


async def test_commands_after_shutdown_are_answered(tmp_path: Path) -> None:
    async with rig(tmp_path) as r:
        await r.stop()
        completion: Completion[Any] = Completion()
        r.worker.send(Auxiliary(MAIN, 1, "late", CancelToken(), completion))
        assert completion.peek() == AuxiliaryCancelled()
