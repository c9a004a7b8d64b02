"""Codex's app-server as a peer: install (npm, into a cache outside the repo),
configuration against the fake, and one session over its JSONL protocol.

The npm package ``@openai/codex`` ships the native binary in
``@openai/codex-linux-x64``; its ``bin/codex.js`` only spawns it (Node 20 has no
``execve``), so the bench runs the binary directly: otherwise every figure
would include a Node start-up and an extra process. HOME and CODEX_HOME are a
throwaway directory; ``features.plugins=false`` keeps it from reaching the
internet at start-up, and the driver checks that only ``POST /v1/responses``
reached the fake.
"""

from __future__ import annotations

import asyncio
import os
import platform
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.clients import JsonlClient

VERSION = "0.169.0"
CACHE = Path(os.environ.get("AGENTLS_BENCH_CACHE", Path.home() / ".cache" / "agentls-bench"))
PREFIX = CACHE / "codex"
MODEL = "gpt-5.5"  # a model Codex 0.169 knows (no "fallback metadata" warning)

_TRIPLES = {"x86_64": "x86_64-unknown-linux-musl", "aarch64": "aarch64-unknown-linux-musl"}
_PACKAGES = {"x86_64": "codex-linux-x64", "aarch64": "codex-linux-arm64"}


def binary() -> Path | None:
    """The native binary, if this version is installed in the cache."""
    machine = platform.machine()
    if machine not in _TRIPLES:
        return None
    path = (
        PREFIX
        / "node_modules"
        / "@openai"
        / _PACKAGES[machine]
        / "vendor"
        / _TRIPLES[machine]
        / "bin"
        / "codex"
    )
    return path if path.is_file() and os.access(path, os.X_OK) else None


def installed_version(path: Path) -> str | None:
    try:
        out = subprocess.run(
            [str(path), "--version"], capture_output=True, text=True, timeout=30, check=False
        )
    except OSError:
        return None
    words = out.stdout.split()
    return words[-1] if out.returncode == 0 and words else None


def ensure(*, install: bool) -> tuple[Path | None, str]:
    """The binary and its version, or None and the reason it is not available."""
    if platform.system() != "Linux" or platform.machine() not in _TRIPLES:
        return None, f"no Codex binary for {platform.system()} {platform.machine()}"
    path = binary()
    if path is not None and installed_version(path) == VERSION:
        return path, VERSION
    if not install:
        return None, f"not installed in {PREFIX} (smoke runs do not download it)"
    npm = shutil.which("npm")
    if npm is None:
        return None, "npm is not installed"
    PREFIX.mkdir(parents=True, exist_ok=True)
    try:
        done = subprocess.run(
            [
                npm,
                "install",
                "--no-audit",
                "--no-fund",
                "--loglevel=error",
                "--prefix",
                str(PREFIX),
                f"@openai/codex@{VERSION}",
            ],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"npm install @openai/codex@{VERSION} failed: {exc}"
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        return None, f"npm install @openai/codex@{VERSION} failed: {' '.join(tail)}"
    path = binary()
    if path is None:
        return None, "npm installed @openai/codex but not its native binary for this platform"
    version = installed_version(path)
    if version != VERSION:
        return None, f"the installed binary does not run (--version said {version!r})"
    return path, VERSION


@dataclass
class Home:
    """A throwaway HOME with CODEX_HOME inside (not under /tmp: Codex refuses to
    create its helper aliases there and says so on every start)."""

    root: Path = field(default_factory=lambda: Path())

    @classmethod
    def create(cls) -> Home:
        base = CACHE / "homes"
        base.mkdir(parents=True, exist_ok=True)
        root = Path(tempfile.mkdtemp(prefix="home-", dir=base))
        (root / ".codex").mkdir()
        return cls(root)

    @property
    def codex_home(self) -> Path:
        return self.root / ".codex"

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def command(path: Path, base_url: str) -> list[str]:
    overrides = {
        "model_provider": '"fake"',
        "model": f'"{MODEL}"',
        "model_providers.fake.name": '"fake"',
        "model_providers.fake.base_url": f'"{base_url}"',
        "model_providers.fake.wire_api": '"responses"',
        "model_providers.fake.env_key": '"BENCH_FAKE_KEY"',
        "approval_policy": '"never"',
        "sandbox_mode": '"danger-full-access"',
        "features.plugins": "false",
    }
    args = [str(path), "app-server", "--strict-config"]
    for key, value in overrides.items():
        args += ["-c", f"{key}={value}"]
    return args


def environment(home: Home) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("OPENAI_", "CODEX_", "RUST_LOG"))
    }
    env.update(
        {
            "HOME": str(home.root),
            "CODEX_HOME": str(home.codex_home),
            "BENCH_FAKE_KEY": "bench-not-a-key",
            "RUST_LOG": "error",
            # What bin/codex.js would have set.
            "CODEX_MANAGED_PACKAGE_ROOT": str(PREFIX / "node_modules" / "@openai" / "codex"),
            "CODEX_MANAGED_BY_NPM": "1",
        }
    )
    return env


@dataclass
class Turn:
    """What the driver saw of one Codex turn."""

    t_send_ns: int = 0
    turn_id: str | None = None
    t_started_response_ns: int = 0
    t_first_delta_ns: int = 0
    t_completed_ns: int = 0
    status: str | None = None
    deltas: list[str] = field(default_factory=list)
    notifications: int = 0
    message_text: str | None = None
    completed: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def text(self) -> str:
        return "".join(self.deltas)


class CodexSession:
    """One app-server process with one (ephemeral) thread."""

    def __init__(self, client: JsonlClient, workspace: Path) -> None:
        self.client = client
        self.workspace = workspace
        self.thread_id: str | None = None
        self.t_initialized_ns = 0
        self._turn: Turn | None = None
        client.listen(self._on_message)

    @classmethod
    async def start(
        cls, path: Path, base_url: str, home: Home, workspace: Path, stderr: Any
    ) -> CodexSession:
        client = await JsonlClient.spawn(
            command(path, base_url),
            env=environment(home),
            cwd=str(workspace),
            stderr=stderr,
        )
        session = cls(client, workspace)
        try:
            msg_id, future = client.request(
                "initialize", {"clientInfo": {"name": "agentls_bench", "version": "0"}}
            )
            async with asyncio.timeout(60):
                await future
        except BaseException:
            await client.close(timeout=1)
            raise
        session.t_initialized_ns = client.answered_ns[msg_id]
        client.notify("initialized")
        return session

    @property
    def pid(self) -> int:
        return self.client.pid

    async def new_thread(self) -> str:
        result = await self.client.call(
            "thread/start", {"cwd": str(self.workspace), "ephemeral": True}, timeout=30
        )
        self.thread_id = str(result["thread"]["id"])
        return self.thread_id

    def _on_message(self, message: dict[str, Any], t: int) -> None:
        turn = self._turn
        method = message.get("method")
        if turn is None or method is None:
            return
        params = message.get("params") or {}
        if params.get("threadId") not in (None, self.thread_id):
            return
        turn.notifications += 1
        if method == "item/agentMessage/delta":
            if not turn.t_first_delta_ns:
                turn.t_first_delta_ns = t
            turn.deltas.append(str(params.get("delta", "")))
        elif method == "item/completed":
            item = params.get("item") or {}
            if item.get("type") == "agentMessage":
                turn.message_text = item.get("text")
        elif method == "turn/completed":
            done = params.get("turn") or {}
            if turn.turn_id is None or done.get("id") == turn.turn_id:
                turn.t_completed_ns = t
                turn.status = done.get("status")
                turn.completed.set()

    async def start_turn(self, text: str) -> Turn:
        """Send ``turn/start``; returns once it is answered (the turn runs on)."""
        assert self.thread_id is not None
        turn = Turn()
        self._turn = turn
        turn.t_send_ns = time.perf_counter_ns()
        msg_id, future = self.client.request(
            "turn/start",
            {"threadId": self.thread_id, "input": [{"type": "text", "text": text}]},
        )
        async with asyncio.timeout(30):
            result = await future
        turn.turn_id = str(result["turn"]["id"])
        turn.t_started_response_ns = self.client.answered_ns[msg_id]
        return turn

    async def finish(self, turn: Turn, timeout: float = 60.0) -> Turn:
        async with asyncio.timeout(timeout):
            await turn.completed.wait()
        self._turn = None
        return turn

    async def run_turn(self, text: str, timeout: float = 60.0) -> Turn:
        return await self.finish(await self.start_turn(text), timeout)

    async def close(self) -> None:
        await self.client.close()
