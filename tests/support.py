"""Shared test helpers: agents wired to the fake model, a model transport that
never answers, and process checks. Every wait here has a timeout."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from agentls.agent.agent import Agent
from agentls.agent.events import AgentEvent
from agentls.agent.recorder import Recorder
from agentls.agent.settings import Settings
from agentls.config import AgentConfig, ModelConfig, SandboxPolicy, ToolConfig
from agentls.model.client import ResponsesClient
from agentls.testing.fake_model import FakeModelThread

WAIT = 10.0  # seconds: the most any single wait in a test may take


async def until_set(
    changed: asyncio.Event, predicate: Callable[[], Any], timeout: float = WAIT
) -> Any:
    """Wait until ``predicate()`` is truthy, re-checked each time ``changed``
    is set (by whoever records what arrives); returns its value."""
    async with asyncio.timeout(timeout):
        while not (value := predicate()):
            changed.clear()
            await changed.wait()
        return value


def model_config(base_url: str, **overrides: Any) -> ModelConfig:
    values: dict[str, Any] = {
        "model": "test-model",
        "base_url": base_url,
        "api_key": "sk-test-key-do-not-leak-0123456789",
        "retry_base_delay": 0.01,
        "retry_max_delay": 0.05,
        "idle_timeout": 10.0,
    }
    values.update(overrides)
    return ModelConfig(**values)


class PendingTransport(httpx2.AsyncBaseTransport):
    """A model transport whose requests never answer: turns stay in flight.

    Counts its calls and lets a test wait for the n-th one (the twin of the
    reference worker's ``PendingService``).
    """

    def __init__(self) -> None:
        self.calls = 0
        self._called = anyio.Event()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        self.calls += 1
        self._called.set()
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    async def wait_called(self, times: int = 1, timeout: float = WAIT) -> None:
        with anyio.fail_after(timeout):
            while self.calls < times:
                self._called = anyio.Event()
                await self._called.wait()


def pending_client(transport: PendingTransport) -> ResponsesClient:
    http = httpx2.AsyncClient(transport=transport)
    return ResponsesClient(model_config("http://pending.invalid/v1"), http_client=http)


@dataclass
class EventLog:
    """Collects an agent's events in the background."""

    events: list[AgentEvent] = field(default_factory=list)
    closed: anyio.Event = field(default_factory=anyio.Event)
    _changed: anyio.Event = field(default_factory=anyio.Event)

    async def pump(self, agent: Agent) -> None:
        async for event in agent.events:
            self.events.append(event)
            self._changed.set()
        self.closed.set()
        self._changed.set()

    def kinds(self, turn_id: int | None = None) -> list[str]:
        return [e.kind for e in self.events if turn_id is None or e.turn_id == turn_id]

    def tool_text(self) -> str:
        """Everything the tools have printed so far."""
        return "".join(e.text for e in self.of("tool.output"))

    def of(self, kind: str) -> list[Any]:
        return [e for e in self.events if e.kind == kind]

    async def wait_for(
        self, predicate: Callable[[AgentEvent], bool], timeout: float = WAIT
    ) -> AgentEvent:
        with anyio.fail_after(timeout):
            seen = 0
            while True:
                for event in self.events[seen:]:
                    if predicate(event):
                        return event
                seen = len(self.events)
                if self.closed.is_set():
                    raise AssertionError("event stream closed before the awaited event")
                self._changed = anyio.Event()
                await self._changed.wait()

    async def wait_kind(self, kind: str, timeout: float = WAIT) -> Any:
        return await self.wait_for(lambda e: e.kind == kind, timeout)

    async def wait_finished(self, turn_id: int, timeout: float = WAIT) -> Any:
        """The turn.finished event of a turn (it follows the handle's result)."""
        return await self.wait_for(
            lambda e: e.kind == "turn.finished" and e.turn_id == turn_id, timeout
        )


@asynccontextmanager
async def running_agent(
    base_url: str | None,
    workspace: Path,
    *,
    client: ResponsesClient | None = None,
    tools: ToolConfig | None = None,
    unsandboxed: bool = False,
    settings: Settings | None = None,
    agent_options: dict[str, Any] | None = None,
    recorder: Recorder | None = None,
    **model_overrides: Any,
) -> AsyncIterator[tuple[Agent, EventLog]]:
    """An agent on the fake model (or a given client), with its events collected.

    ``unsandboxed``: commands run as children of the test (sandbox off, nothing
    asks), so the pids they print are real ones. ``agent_options``: AgentConfig
    fields (``context_window``, ``auto_compact`` …)."""
    async with anyio.create_task_group() as group:
        if client is None:
            assert base_url is not None
            client = ResponsesClient(model_config(base_url, **model_overrides))
        config = AgentConfig(
            workspace=workspace,
            model=client.config,
            tools=tools or ToolConfig(),
            sandbox=SandboxPolicy(mode="off") if unsandboxed else SandboxPolicy(),
            **(agent_options or {}),
        )
        if unsandboxed and settings is None:
            settings = Settings(approval="never")
        agent = Agent(group, client, config, settings=settings, recorder=recorder)
        log = EventLog()
        group.start_soon(log.pump, agent)
        try:
            yield agent, log
        finally:
            with anyio.fail_after(WAIT), anyio.CancelScope(shield=True):
                await agent.shutdown()
                await client.aclose()
            group.cancel_scope.cancel()


def pid_alive(pid: int) -> bool:
    """True if the process exists and is not a zombie. (Deliberately not the
    server's own check: the tests' oracle must not be the code under test.)"""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            state = f.read().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in (b"Z", b"X")


def pids_in(text: str) -> list[int]:
    """The numbers after "pid=" in a tool's output."""
    return [int(chunk.split()[0]) for chunk in text.split("pid=")[1:]]


def kill_quietly(pids: list[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, 9)
        except OSError:
            pass


def _sandbox_works() -> bool:
    import subprocess

    from agentls.tools.sandbox import bwrap_binary

    binary = bwrap_binary()
    if binary is None:
        return False
    probe = [binary, "--ro-bind", "/", "/", "--unshare-pid", "--unshare-net", "true"]
    return subprocess.run(probe, capture_output=True, check=False).returncode == 0


SANDBOX = _sandbox_works()
if not SANDBOX and os.environ.get("AGENTLS_REQUIRE_SANDBOX") == "1":
    # `make test` installs bubblewrap: there, a sandbox test is never skipped.
    raise RuntimeError("AGENTLS_REQUIRE_SANDBOX=1 but bubblewrap cannot run here")
requires_sandbox = pytest.mark.skipif(not SANDBOX, reason="bubblewrap cannot run here")


def processes_with(needle: str) -> list[int]:
    """Live processes whose command line contains ``needle``, by their real
    pids: the oracle that sees into a sandbox's pid namespace too (a command
    in it only knows its own numbers)."""
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/cmdline", "rb") as f:
                    if needle.encode() in f.read() and pid_alive(int(name)):
                        found.append(int(name))
            except OSError:
                pass
    return found


async def wait_processes(needle: str, count: int, timeout: float = WAIT) -> list[int]:
    """Wait until ``count`` processes with ``needle`` run (a command forks
    and execs them at its own pace: there is no event to wait on)."""
    with anyio.fail_after(timeout):
        while len(found := processes_with(needle)) < count:  # noqa: ASYNC110
            await anyio.sleep(0.01)
    return found


def needle() -> str:
    """A ``sleep`` duration no other test uses: 300.<unique digits>."""
    import uuid

    return f"300.{uuid.uuid4().int % 10**12:012d}"


def tool_outputs(fake: FakeModelThread) -> list[str]:
    """The tool outputs the model was sent in its last request."""
    return [
        i["output"] for i in fake.requests[-1].body["input"] if i["type"] == "function_call_output"
    ]


async def wait_gone(pid: int, timeout: float = WAIT) -> None:
    """Wait until a process (not necessarily our child) has exited: its pidfd
    becomes readable then."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    gone = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_reader(fd, gone.set)
    try:
        async with asyncio.timeout(timeout):
            await gone.wait()
    finally:
        loop.remove_reader(fd)
        os.close(fd)
