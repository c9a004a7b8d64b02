"""``exec_command``: run a shell command in the workspace.

The command runs with ``bash -lc`` as the leader of a new session (so of a new
process group), with stdin closed and stdout+stderr merged. Output streams to
the editor as it comes; the model gets the exit code and the output, with the
head and the tail kept when it is long. When the command ends, times out or
its turn is cancelled, everything it left behind is killed.
"""

from __future__ import annotations

import codecs
import subprocess
import time
from typing import Any

import anyio
import anyio.abc

from agentls.tools.base import (
    FunctionTool,
    ToolArgumentError,
    ToolContext,
    ToolResult,
    get_int,
    get_str,
    shorten,
)
from agentls.tools.cgroups import CommandCgroup
from agentls.tools.output import OutputCapture
from agentls.tools.workspace import Workspace

_JOIN_CGROUP = 'echo $$ > "$1" 2>/dev/null; exec bash -lc "$2"'

# After the shell exits, how long background children may keep its output
# pipe open before we stop reading and kill them.
_DRAIN_AFTER_EXIT = 0.25
# How long to wait for a killed shell's exit status before killing it directly.
_REAP_PATIENCE = 5.0


class ExecCommand(FunctionTool):
    name = "exec_command"
    description = (
        "Run a shell command with `bash -lc` in the workspace and return its exit code "
        "and output (stdout and stderr merged; head and tail kept when long). Commands "
        "run unattended: stdin is closed, so never run anything interactive."
    )
    properties = {
        "cmd": {"type": "string", "description": "The shell command to run."},
        "workdir": {
            "type": "string",
            "description": "Directory to run in, relative to the workspace root "
            "(default: the root). Must lie inside the workspace.",
        },
        "timeout_ms": {
            "type": "integer",
            "description": "Kill the command after this many milliseconds (default 120000).",
        },
    }
    required = ("cmd",)

    def title(self, args: dict[str, Any], workspace: Workspace) -> str:
        return f"Running `{shorten(str(args.get('cmd', '')), 60)}`"

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        cmd = get_str(args, "cmd") or ""
        if not cmd.strip():
            raise ToolArgumentError("argument 'cmd' is empty")
        workdir = ctx.workspace.resolve(get_str(args, "workdir", required=False) or ".")
        if not workdir.is_dir():
            raise ToolArgumentError(
                f"workdir {ctx.workspace.relative(workdir)!r} is not a directory"
            )
        timeout_ms = get_int(args, "timeout_ms", minimum=1) or ctx.config.exec_timeout_ms
        timeout = min(timeout_ms, ctx.config.exec_max_timeout_ms) / 1000

        capture = OutputCapture(ctx.config.output_head_bytes, ctx.config.output_tail_bytes)
        started = time.monotonic()
        cgroup = CommandCgroup.create()
        argv = ["bash", "-lc", cmd]
        if cgroup is not None:
            # The shell moves itself into the command's cgroup before bash starts,
            # so every process the command ever makes is born inside it.
            argv = ["/bin/sh", "-c", _JOIN_CGROUP, "agentls", cgroup.procs_file, cmd]
        process = await anyio.open_process(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            cwd=workdir,
            env=ctx.processes.environment(ctx.config.tool_environment()),
            start_new_session=True,
        )
        ctx.processes.adopt(process.pid, cgroup)
        cancelled = False
        try:
            with anyio.move_on_after(timeout) as deadline:
                await _run_to_exit(process, capture, ctx)
        except BaseException as exc:
            cancelled = isinstance(exc, anyio.get_cancelled_exc_class())
            raise
        finally:
            with anyio.CancelScope(shield=True):
                # Whatever the command left running dies with it.
                report = await ctx.processes.kill([process.pid])
                if cancelled:
                    ctx.processes.cancel_report += report
                await _reap(process)
                ctx.processes.forget(process.pid)
        elapsed = time.monotonic() - started
        output = capture.text()
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


async def _reap(process: anyio.abc.Process) -> None:
    """Wait for the shell's exit status — never forever: if it is somehow still
    alive after the kill, it gets SIGKILL directly."""
    with anyio.move_on_after(_REAP_PATIENCE):
        await process.aclose()
        return
    try:
        process.kill()
    except ProcessLookupError:
        pass
    await process.aclose()


async def _run_to_exit(
    process: anyio.abc.Process, capture: OutputCapture, ctx: ToolContext
) -> None:
    """Pump output until the shell exits and its pipe drains (or stays open too long)."""
    assert process.stdout is not None
    stdout = process.stdout
    drained = anyio.Event()

    async def pump() -> None:
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        try:
            async for chunk in stdout:
                capture.feed(chunk)
                text = decoder.decode(chunk)
                if text:
                    ctx.emit_output(text)
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass
        tail = decoder.decode(b"", final=True)
        if tail:
            ctx.emit_output(tail)
        drained.set()

    async with anyio.create_task_group() as group:
        group.start_soon(pump)
        await process.wait()
        # A background child may hold the pipe open forever; don't wait for it.
        with anyio.move_on_after(_DRAIN_AFTER_EXIT):
            await drained.wait()
        group.cancel_scope.cancel()
