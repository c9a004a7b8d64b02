"""Twins of the tests in the reference ``interrupt.rs``."""

from __future__ import annotations

import asyncio
import subprocess
import threading

import anyio
import pytest

from agentls.agent.interrupt import InterruptHandle


def test_starts_un_triggered() -> None:
    assert not InterruptHandle().is_interrupted()


def test_interrupt_triggers_then_rearm_clears() -> None:
    handle = InterruptHandle()
    before = handle.token()
    handle.interrupt()
    assert handle.is_interrupted()
    assert before.is_cancelled(), "the live token reflects the interrupt"
    handle.rearm()
    assert not handle.is_interrupted(), "rearm arms a fresh token"
    # The previously handed-out token stays cancelled (it is the old turn's).
    assert before.is_cancelled()


def test_clones_share_state() -> None:
    handle = InterruptHandle()
    same = handle  # Python shares the object itself; both names interrupt one run
    same.interrupt()
    assert handle.is_interrupted(), "a clone interrupts the same run"


def test_cross_thread_interrupt_aborts_subprocess_tool_race() -> None:
    """The agent runs on its own event loop in another thread, racing the
    turn's token against a real subprocess; the interrupt comes from this
    thread. The cancel arm must win."""
    handle = InterruptHandle()
    approved = threading.Event()
    token_taken = threading.Event()
    outcome: list[str] = []

    async def agent_side() -> str:
        await anyio.to_thread.run_sync(approved.wait)  # mimic a blocking approval gate
        token = handle.token()
        token_taken.set()
        result = "completed"
        async with anyio.create_task_group() as group:

            async def subprocess_tool() -> None:
                nonlocal result
                await anyio.run_process(["sh", "-c", "sleep 5"], stdout=subprocess.PIPE)
                group.cancel_scope.cancel()

            async def cancel_arm() -> None:
                nonlocal result
                await token.cancelled()
                result = "cancelled"
                group.cancel_scope.cancel()

            group.start_soon(subprocess_tool)
            group.start_soon(cancel_arm)
        return result

    def thread_main() -> None:
        outcome.append(asyncio.run(agent_side()))

    thread = threading.Thread(target=thread_main)
    thread.start()
    approved.set()
    assert token_taken.wait(5), "the agent thread should take the token"
    handle.interrupt()
    thread.join(8)
    assert not thread.is_alive(), "the agent thread should finish"
    assert outcome == ["cancelled"], "cross-thread interrupt must abort the subprocess race"


@pytest.mark.parametrize("already", [True, False])
async def test_cancelled_wakes_waiters(already: bool) -> None:
    handle = InterruptHandle()
    token = handle.token()
    if already:
        handle.interrupt()
    with anyio.fail_after(5):
        async with anyio.create_task_group() as group:
            group.start_soon(token.cancelled)
            handle.interrupt()
    assert token.is_cancelled()
