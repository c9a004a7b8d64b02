"""agentls as the driver sees it: ``python -m agentls serve`` over stdio,
driven like an editor drives it (LSP framing, ``workDoneProgress`` declared,
a client-created ``workDoneToken`` on every submit)."""

from __future__ import annotations

import asyncio
import itertools
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.clients import LspClient

SERVE = [sys.executable, "-m", "agentls", "serve"]
BARE_PYGLS = [sys.executable, str(Path(__file__).with_name("bare_pygls.py"))]


def environment(home: Path | None = None, source: Path | None = None) -> dict[str, str]:
    """The server's environment: ours without model settings; with ``home``, a
    throwaway HOME, so that commands' login shells (``bash -lc``) read no
    user profile (as Codex gets a throwaway HOME too); with ``source``, the
    ``agentls`` package is imported from there (a baseline revision's
    ``server/`` folder) instead of this checkout."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AGENTLS_"))}
    env["PYTHONUNBUFFERED"] = "1"
    if source is not None:
        env["PYTHONPATH"] = str(source)
    if home is not None:
        home.mkdir(parents=True, exist_ok=True)
        env["HOME"] = str(home)
    return env


@dataclass
class Turn:
    """What the driver saw of one agentls turn."""

    msg_id: int = 0
    t_send_ns: int = 0
    t_first_delta_ns: int = 0
    t_result_ns: int = 0
    deltas: list[str] = field(default_factory=list)
    notifications: int = 0
    delta_notifications: int = 0
    result: dict[str, Any] | None = None
    future: asyncio.Future[Any] | None = None

    @property
    def text(self) -> str:
        return "".join(self.deltas)


class AgentlsServer:
    """One agentls server, initialized on a workspace and the fake model."""

    def __init__(self, client: LspClient) -> None:
        self.client = client
        self.t_initialized_ns = 0
        self._tokens = itertools.count(1)
        self._turns: dict[int, Turn] = {}
        self._current: Turn | None = None
        client.listen(self._on_message)

    @classmethod
    async def start(
        cls,
        base_url: str,
        workspace: Path,
        stderr: Any,
        command: list[str] | None = None,
        *,
        home: Path | None = None,
        initialize: bool = True,
        options: dict[str, Any] | None = None,
        capabilities: dict[str, Any] | None = None,
        source: Path | None = None,
    ) -> AgentlsServer:
        client = await LspClient.spawn(
            command or SERVE, env=environment(home, source), cwd=str(workspace), stderr=stderr
        )
        session = cls(client)
        if initialize:
            await session.initialize(base_url, workspace, options, capabilities)
        return session

    async def initialize(
        self,
        base_url: str,
        workspace: Path,
        options: dict[str, Any] | None = None,
        capabilities: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """``capabilities``: the client's, besides ``window.workDoneProgress``."""
        msg_id, future = self.client.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": workspace.as_uri(),
                "capabilities": {"window": {"workDoneProgress": True}, **(capabilities or {})},
                "clientInfo": {"name": "agentls bench"},
                "initializationOptions": {
                    "workspace": str(workspace),
                    "baseUrl": base_url,
                    "model": "gpt-fake",
                    # Room for the long conversations (10,000 items is ~300k tokens):
                    # submit → request is measured without a compaction in the way;
                    # the compaction figure compacts on purpose.
                    "contextWindow": 2_000_000,
                    **(options or {}),
                },
            },
        )
        async with asyncio.timeout(60):
            result: dict[str, Any] = await future
        self.t_initialized_ns = self.client.answered_ns.get(msg_id, time.perf_counter_ns())
        self.client.notify("initialized", {})
        return result

    @property
    def pid(self) -> int:
        return self.client.pid

    def _on_message(self, message: dict[str, Any], t: int) -> None:
        turn = self._current
        if turn is None:
            return
        method = message.get("method")
        if method is None:
            if message.get("id") == turn.msg_id:
                turn.t_result_ns = t
            return
        turn.notifications += 1
        if method == "agent/event":
            params = message.get("params") or {}
            if params.get("kind") == "message.delta" and params.get("pane") == "main":
                turn.delta_notifications += 1
                if not turn.t_first_delta_ns:
                    turn.t_first_delta_ns = t
                turn.deltas.append(str(params.get("text", "")))

    def submit(self, prompt: str) -> Turn:
        """Send ``agent/submit`` on main; the turn is tracked until ``finish``."""
        turn = Turn()
        self._current = turn
        token = f"bench-{next(self._tokens)}"
        turn.t_send_ns = time.perf_counter_ns()
        turn.msg_id, turn.future = self.client.request(
            "agent/submit", {"prompt": prompt, "workDoneToken": token}
        )
        return turn

    async def finish(self, turn: Turn, timeout: float = 60.0) -> Turn:
        assert turn.future is not None
        async with asyncio.timeout(timeout):
            turn.result = await turn.future
        if not turn.t_result_ns:
            turn.t_result_ns = self.client.answered_ns.get(turn.msg_id, time.perf_counter_ns())
        self._current = None
        return turn

    async def run_turn(self, prompt: str, timeout: float = 60.0) -> Turn:
        return await self.finish(self.submit(prompt), timeout)

    async def call(self, method: str, params: Any, timeout: float = 30.0) -> Any:
        _, future = self.client.request(method, params)
        async with asyncio.timeout(timeout):
            return await future

    async def close(self) -> int:
        return await self.client.shutdown(timeout=10)
