"""``exec_command``: run a shell command in the workspace.

The command runs with ``bash -lc`` as the leader of a new session (so of a new
process group), with stdin closed and stdout+stderr merged — in the pane's
sandbox unless it is off, unavailable, or the user allowed this one command
to run outside it (``escalate``). Output streams to the editor as it comes;
the model gets the exit code and the output, with the head and the tail kept
when it is long. When the command ends, times out, is stopped by the user
(``agent/cancelTool``) or its turn is cancelled, everything it left behind is
killed.
"""

from __future__ import annotations

import codecs
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from agentls.tools.base import (
    FunctionTool,
    SandboxState,
    ToolArgumentError,
    ToolContext,
    ToolResult,
    get_bool,
    get_int,
    get_str,
    shorten,
)
from agentls.tools.launch import DirectLauncher, Launched, Launcher, reap
from agentls.tools.output import OutputCapture

# After the shell exits, how long background children may keep its output
# pipe open before we stop reading and kill them.
_DRAIN_AFTER_EXIT = 0.25

COMMAND_PROPERTIES: dict[str, Any] = {
    "cmd": {"type": "string", "description": "The shell command to run."},
    "workdir": {
        "type": "string",
        "description": "Directory to run in, relative to the workspace root "
        "(default: the root). Must lie inside the workspace.",
    },
    "escalate": {
        "type": "boolean",
        "description": "Run this one command outside the sandbox (the user is asked "
        "first). Only when it cannot work inside: it needs the network, or to write "
        "outside the workspace.",
    },
    "justification": {
        "type": "string",
        "description": "With escalate: one sentence for the user on why it must run "
        "outside the sandbox.",
    },
}


@dataclass(frozen=True, slots=True)
class CommandArguments:
    cmd: str
    workdir: Path
    escalate: bool


def command_arguments(args: dict[str, Any], ctx: ToolContext) -> CommandArguments:
    cmd = get_str(args, "cmd") or ""
    if not cmd.strip():
        raise ToolArgumentError("argument 'cmd' is empty")
    workdir = ctx.workspace.resolve(get_str(args, "workdir", required=False) or ".")
    if not workdir.is_dir():
        raise ToolArgumentError(f"workdir {ctx.workspace.relative(workdir)!r} is not a directory")
    get_str(args, "justification", required=False)  # checked, shown to the user only
    return CommandArguments(cmd, workdir, get_bool(args, "escalate"))


async def launcher_for(ctx: ToolContext, escalate: bool) -> Launcher:
    if ctx.shell is None:
        return DirectLauncher()
    return await ctx.shell.launcher(escalate)


def command_sandboxed(args: dict[str, Any], sandbox: SandboxState) -> bool:
    return sandbox.active and args.get("escalate") is not True


class ExecCommand(FunctionTool):
    name = "exec_command"
    description = (
        "Run a shell command with `bash -lc` in the workspace and return its exit code "
        "and output (stdout and stderr merged; head and tail kept when long). Commands "
        "run unattended: stdin is closed, so never run anything interactive. For a "
        "server or a watcher that keeps running, use start_process instead."
    )
    properties = {
        **COMMAND_PROPERTIES,
        "timeout_ms": {
            "type": "integer",
            "description": "Kill the command after this many milliseconds (default 120000).",
        },
    }
    required = ("cmd",)
    stoppable = True

    def title(self, args: dict[str, Any], workspace: Any) -> str:
        return f"Running `{shorten(str(args.get('cmd', '')), 60)}`"

    def sandboxed(self, args: dict[str, Any], sandbox: SandboxState) -> bool:
        return command_sandboxed(args, sandbox)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        command = command_arguments(args, ctx)
        timeout_ms = get_int(args, "timeout_ms", minimum=1) or ctx.config.exec_timeout_ms
        timeout = min(timeout_ms, ctx.config.exec_max_timeout_ms) / 1000

        capture = OutputCapture(ctx.config.output_head_bytes, ctx.config.output_tail_bytes)
        started = time.monotonic()
        launcher = await launcher_for(ctx, command.escalate)
        env = ctx.processes.environment(ctx.config.tool_environment())
        process = await launcher.launch(command.cmd, command.workdir, env, ctx.processes)
        cancelled = False
        stopped = False
        try:
            with anyio.move_on_after(timeout) as deadline:
                stopped = await _run_to_exit(process, capture, ctx)
        except BaseException as exc:
            cancelled = isinstance(exc, anyio.get_cancelled_exc_class())
            raise
        finally:
            with anyio.CancelScope(shield=True):
                # Whatever the command left running dies with it.
                report = await ctx.processes.kill([process.pid])
                if cancelled:
                    ctx.processes.cancel_report += report
                elif stopped and ctx.stop is not None:
                    ctx.stop.killed += report.killed
                await reap(process)
                ctx.processes.forget(process.pid)
        elapsed = time.monotonic() - started
        output = capture.text()
        if stopped:
            return ToolResult(
                output=f"Cancelled by the user after {elapsed:.1f} s; the command and "
                f"everything it started were killed.\nOutput so far:\n{output}",
                status="cancelled",
            )
        if deadline.cancelled_caught:
            return ToolResult(
                output=f"Command timed out after {timeout:g} s and was killed.\n"
                f"Wall time: {elapsed:.1f} s\nOutput:\n{output}",
                status="failed",
            )
        code = process.returncode
        # bash reports death by signal N as 128+N; keep the shell's view.
        exit_code = code if code is None or code >= 0 else 128 - code
        return ToolResult(
            output=f"Exit code: {exit_code}\nWall time: {elapsed:.1f} s\nOutput:\n{output}",
            status="completed" if exit_code == 0 else "failed",
            exit_code=exit_code,
        )


async def _run_to_exit(process: Launched, capture: OutputCapture, ctx: ToolContext) -> bool:
    """Pump output until the shell exits and its pipe drains (or stays open too
    long); True if the user stopped the command first."""
    drained = anyio.Event()
    stopped = False

    async def pump() -> None:
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        async for chunk in process.chunks():
            capture.feed(chunk)
            text = decoder.decode(chunk)
            if text:
                ctx.emit_output(text)
        tail = decoder.decode(b"", final=True)
        if tail:
            ctx.emit_output(tail)
        drained.set()

    async with anyio.create_task_group() as group:
        group.start_soon(pump)
        if ctx.stop is not None:
            stop = ctx.stop

            async def watch_stop() -> None:
                nonlocal stopped
                await stop.requested.wait()
                stopped = True
                group.cancel_scope.cancel()

            group.start_soon(watch_stop)
        await process.wait()
        # A background child may hold the pipe open forever; don't wait for it.
        with anyio.move_on_after(_DRAIN_AFTER_EXIT):
            await drained.wait()
        group.cancel_scope.cancel()
    return stopped
