"""Background processes: a dev server, a watcher — started in one call,
used by the next, read and stopped later.

They belong to the pane (``Shell``): they run in its sandbox, so a later
command reaches a server on the sandbox's loopback; they die with the turn
that started them if it is cancelled, and with the pane (close, new session,
shutdown). What they print is kept bounded: each read returns what arrived
since the previous one, its head and tail when it is long.

Tools: ``start_process {cmd, workdir?, escalate?, justification?}``,
``read_process_output {process_id, wait_ms?}``, ``stop_process {process_id}``.
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime
from typing import Any

import anyio
import anyio.abc

from agentls.config import ToolConfig
from agentls.tools.base import (
    FunctionTool,
    SandboxState,
    ToolArgumentError,
    ToolContext,
    ToolResult,
    get_int,
    get_str,
    shorten,
)
from agentls.tools.exec_command import (
    COMMAND_PROPERTIES,
    command_arguments,
    command_sandboxed,
    launcher_for,
)
from agentls.tools.launch import Launched, Launcher, reap
from agentls.tools.output import OutputCapture
from agentls.tools.processes import KillReport, ProcessScope
from agentls.tools.proctable import ProcessTable

# More than this many running at once is refused (the model forgot to stop some).
MAX_RUNNING = 16
# Finished ones are listed until there are more than this many.
MAX_KEPT = 32
_DRAIN_AFTER_EXIT = 0.25
_MAX_WAIT_MS = 30_000


class BackgroundProcess:
    def __init__(
        self,
        process_id: str,
        command: str,
        turn_id: int,
        launched: Launched,
        config: ToolConfig,
    ) -> None:
        self.process_id = process_id
        self.command = command
        self.turn_id = turn_id
        self.launched = launched
        self.started_at = datetime.now(UTC).isoformat(timespec="milliseconds")
        self.exit_code: int | None = None
        self._config = config
        self._unread = self._window()
        self.changed = anyio.Event()
        self.finished = anyio.Event()

    def _window(self) -> OutputCapture:
        return OutputCapture(self._config.output_head_bytes, self._config.output_tail_bytes)

    @property
    def running(self) -> bool:
        return not self.finished.is_set()

    def feed(self, data: bytes) -> None:
        self._unread.feed(data)
        self._notify()

    def _notify(self) -> None:
        self.changed.set()
        self.changed = anyio.Event()

    def take_output(self) -> str:
        """What it printed since the last read (head and tail if long)."""
        text = self._unread.text()
        self._unread = self._window()
        return text

    @property
    def has_unread(self) -> bool:
        return self._unread.total > 0

    def describe(self) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "processId": self.process_id,
            "command": self.command,
            "startedAt": self.started_at,
            "running": self.running,
        }
        if self.exit_code is not None:
            entry["exitCode"] = self.exit_code
        return entry


class BackgroundProcesses:
    """A pane's background processes."""

    def __init__(
        self,
        task_group: anyio.abc.TaskGroup,
        config: ToolConfig,
        table: ProcessTable | None = None,
    ) -> None:
        self._group = task_group
        self._config = config
        self.scope = ProcessScope(table)
        self._entries: dict[str, BackgroundProcess] = {}
        self._ids = itertools.count(1)
        self._closed = False

    def entries(self) -> list[BackgroundProcess]:
        return list(self._entries.values())

    def get(self, process_id: str) -> BackgroundProcess:
        entry = self._entries.get(process_id)
        if entry is None:
            known = ", ".join(self._entries) or "none"
            raise ToolArgumentError(
                f"no background process {process_id!r} in this pane (known: {known})"
            )
        return entry

    async def start(
        self, command: str, cwd: Any, launcher: Launcher, turn_id: int
    ) -> BackgroundProcess:
        if self._closed:
            raise ToolArgumentError("the pane is closing: no new processes")
        running = sum(entry.running for entry in self._entries.values())
        if running >= MAX_RUNNING:
            raise ToolArgumentError(
                f"{running} background processes are running already; stop some first"
            )
        env = self.scope.environment(self._config.tool_environment())
        launched = await launcher.launch(command, cwd, env, self.scope)
        entry = BackgroundProcess(f"p{next(self._ids)}", command, turn_id, launched, self._config)
        self._entries[entry.process_id] = entry
        self._forget_old()
        self._group.start_soon(self._pump, entry, name=f"background {entry.process_id}")
        return entry

    def _forget_old(self) -> None:
        finished = [e for e in self._entries.values() if not e.running]
        for entry in finished[: max(0, len(self._entries) - MAX_KEPT)]:
            del self._entries[entry.process_id]

    async def _pump(self, entry: BackgroundProcess) -> None:
        launched = entry.launched
        drained = anyio.Event()
        try:
            async with anyio.create_task_group() as group:

                async def read() -> None:
                    async for chunk in launched.chunks():
                        entry.feed(chunk)
                    drained.set()

                group.start_soon(read)
                code = await launched.wait()
                # bash reports death by signal N as 128+N; keep the shell's view.
                entry.exit_code = code if code >= 0 else 128 - code
                with anyio.move_on_after(_DRAIN_AFTER_EXIT):
                    await drained.wait()
                group.cancel_scope.cancel()
        finally:
            with anyio.CancelScope(shield=True):
                await self.scope.kill([launched.pid])  # what it left behind
                await reap(launched)
                self.scope.forget(launched.pid)
                entry.finished.set()
                entry._notify()

    async def stop(self, entry: BackgroundProcess) -> KillReport:
        """Kill the process and all it started; returns once they are dead."""
        if not entry.running:
            return KillReport()
        report = await self.scope.kill([entry.launched.pid])
        with anyio.move_on_after(5.0):
            await entry.finished.wait()
        return report

    async def stop_turn(self, turn_id: int) -> KillReport:
        """Stop what a (cancelled) turn started."""
        return await self._stop([e for e in self._entries.values() if e.turn_id == turn_id])

    async def close(self) -> KillReport:
        """The pane is going away: stop everything, start nothing more."""
        self._closed = True
        report = await self._stop(list(self._entries.values()))
        # Anything of theirs that escaped their trees (by the pane's marker).
        return report + await self.scope.kill()

    async def _stop(self, entries: list[BackgroundProcess]) -> KillReport:
        total = KillReport()
        for entry in entries:
            total += await self.stop(entry)
        return total


def _registry(ctx: ToolContext) -> BackgroundProcesses:
    if ctx.shell is None:
        raise ToolArgumentError("background processes are not available here")
    return ctx.shell.background


class StartProcess(FunctionTool):
    name = "start_process"
    description = (
        "Start a long-running command in the background (a dev server, a watcher) with "
        "`bash -lc` in the workspace and return its process id at once. It keeps running "
        "across calls and turns: read what it prints with read_process_output, stop it "
        "with stop_process when done. Later commands reach a server it starts on "
        "127.0.0.1 (they share the sandbox's network). For a command that finishes, use "
        "exec_command."
    )
    properties = COMMAND_PROPERTIES
    required = ("cmd",)

    def title(self, args: dict[str, Any], workspace: Any) -> str:
        return f"Starting `{shorten(str(args.get('cmd', '')), 60)}`"

    def sandboxed(self, args: dict[str, Any], sandbox: SandboxState) -> bool:
        return command_sandboxed(args, sandbox)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        registry = _registry(ctx)
        command = command_arguments(args, ctx)
        launcher = await launcher_for(ctx, command.escalate)
        entry = await registry.start(command.cmd, command.workdir, launcher, ctx.turn_id)
        return ToolResult(
            output=f"Started background process {entry.process_id}: {entry.command}\n"
            f"Read its output with read_process_output "
            f'{{"process_id": "{entry.process_id}"}}.'
        )


class ReadProcessOutput(FunctionTool):
    name = "read_process_output"
    description = (
        "What a background process printed since the last read, and whether it still "
        "runs. `wait_ms`: wait up to this long for new output or its exit (max 30000)."
    )
    properties = {
        "process_id": {"type": "string", "description": "The id start_process returned."},
        "wait_ms": {"type": "integer", "description": "How long to wait for output."},
    }
    required = ("process_id",)
    read_only = True

    def title(self, args: dict[str, Any], workspace: Any) -> str:
        return f"Reading the output of {args.get('process_id', '?')}"

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        entry = _registry(ctx).get(get_str(args, "process_id") or "")
        wait_ms = min(get_int(args, "wait_ms") or 0, _MAX_WAIT_MS)
        if wait_ms and entry.running and not entry.has_unread:
            with anyio.move_on_after(wait_ms / 1000):
                await entry.changed.wait()
        return ToolResult(output=_report(entry, entry.take_output()))


class StopProcess(FunctionTool):
    name = "stop_process"
    description = "Stop a background process and everything it started."
    properties = {"process_id": {"type": "string", "description": "The id start_process returned."}}
    required = ("process_id",)

    def title(self, args: dict[str, Any], workspace: Any) -> str:
        return f"Stopping {args.get('process_id', '?')}"

    def sandboxed(self, args: dict[str, Any], sandbox: SandboxState) -> bool:
        # It can only stop what this pane itself started.
        return True

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        registry = _registry(ctx)
        entry = registry.get(get_str(args, "process_id") or "")
        was_running = entry.running
        report = await registry.stop(entry)
        what = (
            f"Stopped {entry.process_id} ({report.killed} process(es) killed)."
            if was_running
            else f"{entry.process_id} had already exited."
        )
        return ToolResult(output=f"{what}\n{_report(entry, entry.take_output())}")


def _report(entry: BackgroundProcess, output: str) -> str:
    state = "running" if entry.running else f"exited with code {entry.exit_code}"
    return f"Process {entry.process_id} ({entry.command}): {state}\nOutput:\n{output}"
