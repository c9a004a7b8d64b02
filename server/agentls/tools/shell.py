"""A pane's shell: where its commands run and what they may touch.

It holds the pane's sandbox policy, its sandbox (started on the first command
that needs it, restarted if it died), and its background processes. Closing
it — when the pane closes, starts a new session or the server stops — kills
every process of the pane and removes the sandbox.
"""

from __future__ import annotations

import logging
from pathlib import Path

import anyio
import anyio.abc

from agentls.config import SandboxPolicy, ToolConfig
from agentls.tools import cgroups, sandbox
from agentls.tools.background import BackgroundProcesses
from agentls.tools.base import SandboxState
from agentls.tools.launch import DirectLauncher, Launcher
from agentls.tools.processes import kill_leftovers
from agentls.tools.proctable import ProcessTable
from agentls.tools.sandbox import SandboxError, SandboxHost, SandboxLauncher

log = logging.getLogger(__name__)


class Shell:
    def __init__(
        self,
        task_group: anyio.abc.TaskGroup,
        workspace: Path,
        policy: SandboxPolicy,
        config: ToolConfig,
        *,
        table: ProcessTable | None = None,
    ) -> None:
        self._group = task_group
        self.workspace = workspace
        self.policy = policy
        self._config = config
        self._direct = DirectLauncher()
        self._host: SandboxHost | None = None
        self._lock = anyio.Lock()
        self._closed = False
        self.background = BackgroundProcesses(task_group, config, table)

    async def state(self) -> SandboxState:
        """Whether commands run in the sandbox now (probing bubblewrap once)."""
        if self.policy.mode == "off":
            return SandboxState(active=False, writable=False)
        available = await sandbox.availability()
        return SandboxState(
            active=available.ok, writable=available.ok and self.policy.mode == "workspace-write"
        )

    async def launcher(self, escalate: bool) -> Launcher:
        """Where a command starts: the sandbox, unless it is off, unavailable or
        the user allowed this command outside it."""
        if escalate or not (await self.state()).active:
            return self._direct
        return SandboxLauncher(await self._sandbox())

    async def _sandbox(self) -> SandboxHost:
        async with self._lock:
            if self._closed:
                raise SandboxError("the pane is closing")
            if self._host is None or self._host.dead:
                if self._host is not None:
                    log.warning("the pane's sandbox stopped; starting a new one")
                    await self._host.close()
                available = await sandbox.availability()
                assert available.bwrap is not None
                host = SandboxHost(available.bwrap, self.policy, self.workspace)
                await host.start(self._group, self._config.tool_environment())
                self._host = host
            return self._host

    async def close(self) -> int:
        """Kill every process of the pane and stop its sandbox; how many were killed."""
        async with self._lock:
            self._closed = True
        report = await self.background.close()
        if self._host is not None:
            await self._host.close()
            self._host = None
        return report.killed


def sweep_leftovers() -> None:
    """What servers that died without cleaning up (``kill -9``) left behind:
    their commands' cgroups, processes carrying their markers, their
    sandboxes' temp folders. Runs once per server, on a thread of its own."""
    try:
        cgroups.sweep_stale()
        kill_leftovers()
        sandbox.sweep_stale_temps()
    except Exception:  # housekeeping: never let it take the server down
        log.exception("sweeping what dead servers left behind failed")
