"""Every MCP server of one editor connection, and their tools for the tool box.

``run`` (a background task of the connection, started after ``initialize``)
reads the configuration, then — only if a server is configured — imports the
SDK on a worker thread and starts every server at once, each in a task of its
own: a slow or broken one holds up nothing. Project servers start once the
user has allowed them (asked one at a time, meanwhile the others run).

The manager is a ``ToolSource``: ``tools()`` are the tools of the servers
that offer them now, ``version`` changes whenever that list does, and each
model request offers what is there at that moment.
"""

from __future__ import annotations

import importlib
import logging
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from agentls.domain import McpStatus
from agentls.mcp import config as mcp_config
from agentls.mcp.consent import ConsentAsker, ConsentRequest, ConsentStore
from agentls.mcp.names import function_name
from agentls.mcp.tool import McpTool
from agentls.tools.base import Tool

if TYPE_CHECKING:
    from agentls.mcp.runner import ServerRunner

log = logging.getLogger(__name__)

_DENIED = "you did not allow this project server; restart it to be asked again"

STARTUP_TIMEOUT = 30.0
CALL_TIMEOUT = 600.0
MAX_RESTARTS = 3
# How long servers get to stop on their own at shutdown before they are killed.
STOP_GRACE = 3.0


@dataclass(frozen=True, slots=True)
class Limits:
    """Seconds a server gets to start, a call gets to answer; automatic restarts."""

    startup_timeout: float = STARTUP_TIMEOUT
    call_timeout: float = CALL_TIMEOUT
    max_restarts: int = MAX_RESTARTS

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Limits:
        def number(name: str, default: float) -> float:
            try:
                value = float(env.get(name, ""))
            except ValueError:
                return default
            return value if value > 0 else default

        return cls(
            startup_timeout=number("AGENTLS_MCP_STARTUP_TIMEOUT", STARTUP_TIMEOUT),
            call_timeout=number("AGENTLS_MCP_CALL_TIMEOUT", CALL_TIMEOUT),
        )


@dataclass(frozen=True, slots=True)
class ServerInfo:
    """One server as ``agent/mcpServers`` reports it."""

    name: str
    status: McpStatus
    source: mcp_config.Source
    transport: mcp_config.TransportKind
    tool_names: tuple[str, ...] = ()
    error: str | None = None
    command: str | None = None
    url: str | None = None
    restarts: int = 0
    notes: tuple[str, ...] = field(default_factory=tuple)


class UnknownServer(LookupError):
    pass


class McpManager:
    def __init__(
        self,
        workspace: Path,
        options: Any,
        consent: ConsentAsker | None = None,
        *,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self._workspace = workspace
        self._options = options
        self._consent = consent
        self._env = dict(os.environ if env is None else env)
        self._limits = Limits.from_env(self._env)
        self._store = ConsentStore(mcp_config.state_dir(self._env), workspace)
        self.specs: list[mcp_config.ServerSpec] = []
        self.problems: list[str] = []
        self._runners: dict[str, ServerRunner] = {}
        self._version = 0
        self._tools: list[Tool] = []
        self._tools_version = -1
        self._loaded = anyio.Event()
        self._running = anyio.Event()
        self._finished = anyio.Event()
        self._stop = anyio.Event()
        self._asking: list[mcp_config.ServerSpec] = []
        self._asked = anyio.Event()

    # --- ToolSource -------------------------------------------------------------------------

    @property
    def version(self) -> int:
        return self._version

    def tools(self) -> Sequence[Tool]:
        if self._tools_version != self._version:
            self._tools = self._build_tools()
            self._tools_version = self._version
        return self._tools

    def _build_tools(self) -> list[Tool]:
        tools: list[Tool] = []
        taken: set[str] = set()
        for runner in self._runners.values():
            if not runner.offers_tools:
                continue
            for tool in runner.tools:
                name = function_name(runner.name, tool.name, taken)
                taken.add(name)
                hints = tool.annotations
                tools.append(
                    McpTool(
                        name,
                        runner.name,
                        tool.name,
                        description=tool.description,
                        schema=tool.input_schema,
                        read_only=bool(hints is not None and hints.read_only_hint),
                        call=runner.call,
                    )
                )
        return tools

    def _changed(self, runner: object = None) -> None:
        self._version += 1

    # --- what the editor sees ---------------------------------------------------------------

    def servers(self) -> list[ServerInfo]:
        infos = []
        for spec in self.specs:
            runner = self._runners.get(spec.name)
            status: McpStatus = "starting" if spec.error is None else "failed"
            error, restarts = spec.error, 0
            tool_names: tuple[str, ...] = ()
            if runner is not None:
                status, error, restarts = runner.status, runner.error, runner.restarts
                tool_names = tuple(tool.name for tool in runner.tools)
            infos.append(
                ServerInfo(
                    spec.name,
                    status,
                    spec.source,
                    spec.transport,
                    tool_names,
                    error,
                    spec.command_line,
                    spec.url,
                    restarts,
                    spec.notes,
                )
            )
        return infos

    async def loaded(self) -> None:
        """Wait until the configuration has been read (``servers()`` lists everything)."""
        await self._loaded.wait()

    async def running(self) -> None:
        """Wait until every server has its runner (``restart`` and ``revoke`` work)."""
        await self._running.wait()

    async def finished(self) -> None:
        """Wait until ``run`` has returned (every server stopped)."""
        await self._finished.wait()

    # --- life cycle -------------------------------------------------------------------------

    async def run(self, first: Callable[[], Awaitable[object]] | None = None) -> None:
        """Start every server; return once ``stop`` was asked and they have stopped.

        ``first``: what must be done before the SDK is imported and servers
        start (the model client's warm-up: the first turn comes first)."""
        try:
            await self._run(first)
        finally:
            self._loaded.set()
            self._running.set()
            self._finished.set()

    async def _run(self, first: Callable[[], Awaitable[object]] | None) -> None:
        config = await anyio.to_thread.run_sync(self._load)
        self.specs, self.problems = config.servers, config.problems
        self._loaded.set()
        for problem in self.problems:
            log.warning("MCP configuration: %s", problem)
        for spec in self.specs:
            for note in spec.notes:
                log.warning("MCP server %s: %s", spec.name, note)
        self._changed()
        if self.specs and first is not None:
            await first()
        if not self.specs or self._stop.is_set():
            self._running.set()
            await self._stop.wait()
            return
        # The SDK's import takes about half a second: off the event loop.
        runner_module = await anyio.to_thread.run_sync(
            importlib.import_module, "agentls.mcp.runner"
        )
        async with anyio.create_task_group() as group:
            for spec in self.specs:
                runner = runner_module.ServerRunner(
                    spec,
                    self._workspace,
                    self._changed,
                    startup_timeout=self._limits.startup_timeout,
                    call_timeout=self._limits.call_timeout,
                    max_restarts=self._limits.max_restarts,
                )
                self._runners[spec.name] = runner
                group.start_soon(runner.run, name=f"MCP server {spec.name}")
            self._running.set()
            for spec in self.specs:
                if spec.error is None:
                    self._admit(spec)
            async with anyio.create_task_group() as asking:
                asking.start_soon(self._ask_in_turn)
                await self._stop.wait()
                asking.cancel_scope.cancel()
            for runner in self._runners.values():
                runner.stop()

    def _load(self) -> mcp_config.Configuration:
        return mcp_config.load(self._options, self._workspace, env=self._env)

    def stop(self) -> None:
        """Stop every server (each gets ``STOP_GRACE``; the caller bounds the wait)."""
        self._stop.set()

    # --- permissions --------------------------------------------------------------------------

    def _admit(self, spec: mcp_config.ServerSpec) -> None:
        """Start a server if it needs no permission or has it; ask if not yet decided."""
        runner = self._runners[spec.name]
        decision = self._store.decision(spec) if spec.source == "project" else "allow"
        if decision == "allow":
            runner.allow()
        elif decision == "deny":
            runner.disable(_DENIED)
        else:
            self._ask(spec)

    def _ask(self, spec: mcp_config.ServerSpec) -> None:
        runner = self._runners[spec.name]
        if self._consent is None:
            runner.disable("project servers need your permission, and the editor cannot ask")
            return
        runner.waiting()
        self._asking.append(spec)
        self._asked.set()

    async def _ask_in_turn(self) -> None:
        """Ask about the project's servers one at a time, in their order."""
        while True:
            while not self._asking:
                self._asked = anyio.Event()
                await self._asked.wait()
            spec = self._asking.pop(0)
            runner = self._runners[spec.name]
            request = ConsentRequest.of(spec, self._workspace / mcp_config.PROJECT_FILE)
            assert self._consent is not None
            try:
                answer = await self._consent(request)
            except Exception as exc:
                log.warning("could not ask about MCP server %s: %s", spec.name, exc)
                answer = None
            if answer is True:
                self._store.remember(spec, "allow")
                runner.allow()
            elif answer is False:
                self._store.remember(spec, "deny")
                runner.disable(_DENIED)
            else:
                runner.disable(
                    "not allowed: the question was not answered; restart it to be asked again"
                )

    def restart(self, name: str) -> ServerInfo:
        """Restart a server now; a project server that is not allowed is asked about again."""
        spec, runner = self._find(name)
        if spec.source == "project" and runner.status == "disabled":
            if self._store.decision(spec) == "allow":
                runner.allow()
            else:
                self._store.forget([name])
                self._ask(spec)
        else:
            runner.restart()
        return self._info(name)

    def revoke(self, name: str | None) -> list[str]:
        """Forget the user's permission for project servers (one, or all); stop them."""
        if name is not None:
            spec, _ = self._find(name)
            if spec.source != "project":
                raise ValueError(f"{name!r} is not a project server: it needs no permission")
            names = [name]
        else:
            names = [spec.name for spec in self.specs if spec.source == "project"]
        revoked = self._store.forget(names)
        for server in names:
            runner = self._runners.get(server)
            if runner is not None and (server in revoked or runner.status != "disabled"):
                runner.disable("you revoked the permission; restart it to be asked again")
        return revoked

    def _find(self, name: str) -> tuple[mcp_config.ServerSpec, ServerRunner]:
        spec = next((s for s in self.specs if s.name == name), None)
        runner = self._runners.get(name)
        if spec is None or runner is None:
            known = ", ".join(s.name for s in self.specs) or "none configured"
            raise UnknownServer(f"no MCP server named {name!r} (servers: {known})")
        return spec, runner

    def _info(self, name: str) -> ServerInfo:
        return next(info for info in self.servers() if info.name == name)
