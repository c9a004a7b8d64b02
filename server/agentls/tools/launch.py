"""Starting a command: directly as a child of the server, or in the pane's
sandbox (``sandbox.py``). Either way the caller gets a ``Launched``: the real
pid of the command's leader, its output as it comes, and its exit status.

A directly started command is the leader of a new session; where cgroups
work it moves itself into its own before bash starts; and it gets a
parent-death signal (``setpriv --pdeathsig``, Linux), so that a server killed
with ``kill -9`` does not leave it running. What it started itself is found
by the next server's start-up sweep (``processes.sweep_leftovers``).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Protocol

import anyio
import anyio.abc

from agentls.tools.cgroups import CommandCgroup
from agentls.tools.processes import ProcessScope

_JOIN_CGROUP = 'echo $$ > "$1" 2>/dev/null; exec bash -lc "$2"'
# How long to wait for a killed leader's exit status before killing it directly.
REAP_PATIENCE = 5.0

_setpriv: str | bool | None = False  # False: not looked up yet


class Launched(Protocol):
    """A started command."""

    @property
    def pid(self) -> int:
        """The leader's pid, as this server sees it (never a sandbox's own number)."""
        ...

    @property
    def returncode(self) -> int | None: ...

    def chunks(self) -> AsyncIterator[bytes]:
        """stdout and stderr, merged, until the pipe closes."""
        ...

    async def wait(self) -> int: ...

    def kill(self) -> None:
        """SIGKILL the leader (the last resort; trees are killed by the scope)."""
        ...

    async def aclose(self) -> None:
        """Close the output pipe and collect the exit status."""
        ...


class Launcher(Protocol):
    async def launch(
        self, command: str, cwd: Path, env: dict[str, str], scope: ProcessScope
    ) -> Launched:
        """Start ``bash -lc command`` in ``cwd``; the leader is adopted by ``scope``."""
        ...


def _pdeathsig_prefix() -> list[str]:
    """``setpriv --pdeathsig KILL --`` where util-linux's setpriv is there (Linux)."""
    global _setpriv
    if _setpriv is False:
        _setpriv = shutil.which("setpriv") if sys.platform.startswith("linux") else None
    return [_setpriv, "--pdeathsig", "KILL", "--"] if isinstance(_setpriv, str) else []


class _Direct:
    def __init__(self, process: anyio.abc.Process) -> None:
        self._process = process

    @property
    def pid(self) -> int:
        return self._process.pid

    @property
    def returncode(self) -> int | None:
        return self._process.returncode

    async def chunks(self) -> AsyncIterator[bytes]:
        stdout = self._process.stdout
        assert stdout is not None
        try:
            async for chunk in stdout:
                yield chunk
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            return

    async def wait(self) -> int:
        return await self._process.wait()

    def kill(self) -> None:
        try:
            self._process.kill()
        except ProcessLookupError:
            pass

    async def aclose(self) -> None:
        await self._process.aclose()


class DirectLauncher:
    """Commands as children of the server: no sandbox."""

    async def launch(
        self, command: str, cwd: Path, env: dict[str, str], scope: ProcessScope
    ) -> Launched:
        # (A system without /proc has no cgroups either.)
        cgroup = CommandCgroup.create() if scope.table.enumerable else None
        argv = ["bash", "-lc", command]
        if cgroup is not None:
            # The shell moves itself into the command's cgroup before bash starts,
            # so every process the command ever makes is born inside it.
            argv = ["/bin/sh", "-c", _JOIN_CGROUP, "agentls", cgroup.procs_file, command]
        try:
            process = await anyio.open_process(
                [*_pdeathsig_prefix(), *argv],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                cwd=cwd,
                env=env,
                start_new_session=True,
            )
        except BaseException:
            if cgroup is not None:
                cgroup.remove()
            raise
        scope.adopt(process.pid, cgroup)
        return _Direct(process)


async def reap(process: Launched) -> None:
    """Wait for the leader's exit status — never forever: if it is somehow still
    alive after the kill, it gets SIGKILL directly."""
    with anyio.move_on_after(REAP_PATIENCE):
        await process.aclose()
        return
    process.kill()
    await process.aclose()
