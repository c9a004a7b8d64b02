"""Where there is no /proc (macOS): the process layer degrades cleanly.
Simulated here by giving the process scope a table that only has signals
(``SignalTable``), as ``default_table`` chooses on such systems: commands run,
time out and are stopped, and every process that stayed in the command's
process group dies with it."""

from __future__ import annotations

from pathlib import Path

import anyio

from agentls.config import ToolConfig
from agentls.tools.base import StopRequest, ToolContext
from agentls.tools.exec_command import ExecCommand
from agentls.tools.processes import ProcessScope
from agentls.tools.proctable import SignalTable
from agentls.tools.workspace import Workspace

from .support import WAIT, needle, processes_with, wait_processes


def context(root: Path, scope: ProcessScope, stop: StopRequest | None = None) -> ToolContext:
    return ToolContext(
        workspace=Workspace(root),
        config=ToolConfig(),
        processes=scope,
        emit_output=lambda text: None,
        emit_plan=lambda *args: None,
        stop=stop,
    )


async def test_a_command_runs_and_reports(tmp_path: Path) -> None:
    scope = ProcessScope(SignalTable())
    result = await ExecCommand().run({"cmd": "echo hello; exit 3"}, context(tmp_path, scope))
    assert result.exit_code == 3 and "hello" in result.output


async def test_stopping_a_command_kills_its_process_group(tmp_path: Path) -> None:
    duration = needle()
    scope = ProcessScope(SignalTable())
    stop = StopRequest()
    command = f"sleep {duration} & sh -c 'sleep {duration}; true' & wait"
    async with anyio.create_task_group() as group:

        async def stop_when_running() -> None:
            await wait_processes(f"sleep\0{duration}", 2)
            stop.requested.set()

        group.start_soon(stop_when_running)
        with anyio.fail_after(WAIT):
            result = await ExecCommand().run({"cmd": command}, context(tmp_path, scope, stop))
    assert result.status == "cancelled"
    # Counted by process group (the processes cannot be listed): at least the one.
    assert stop.killed >= 1
    assert not processes_with(duration)


async def test_a_timeout_and_leftovers_in_the_group_are_killed(tmp_path: Path) -> None:
    duration = needle()
    scope = ProcessScope(SignalTable())
    timed_out = await ExecCommand().run(
        {"cmd": f"sleep {duration} & wait", "timeout_ms": 300}, context(tmp_path, scope)
    )
    assert "timed out" in timed_out.output and not processes_with(duration)
    other = needle()
    left = await ExecCommand().run(
        {"cmd": f"sleep {other} & echo started"}, context(tmp_path, scope)
    )
    assert left.exit_code == 0 and not processes_with(other)


async def test_a_cancelled_turn_kills_its_commands(tmp_path: Path) -> None:
    duration = needle()
    scope = ProcessScope(SignalTable())
    with anyio.move_on_after(WAIT) as deadline:
        async with anyio.create_task_group() as group:

            async def cancel_when_running() -> None:
                await wait_processes(f"sleep\0{duration}", 1)
                group.cancel_scope.cancel()

            group.start_soon(cancel_when_running)
            await ExecCommand().run({"cmd": f"sleep {duration} & wait"}, context(tmp_path, scope))
    assert not deadline.cancelled_caught
    assert scope.cancel_report.killed >= 1 and scope.cancel_report.surviving == 0
    assert not processes_with(duration)
