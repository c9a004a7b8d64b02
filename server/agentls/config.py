"""Configuration shared by every layer: what the model is, where the workspace is.

Values come from the caller (the editor's initializationOptions, the CLI) with
the environment as fallback. The API key only ever comes from the environment
and is kept out of every ``repr``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from agentls.domain import (
    DEFAULT_EFFORT,
    DEFAULT_MODEL,
    DEFAULT_SANDBOX,
    EFFORTS,
    SANDBOXES,
    Effort,
    Sandbox,
)

__all__ = ["DEFAULT_EFFORT", "DEFAULT_MODEL", "EFFORTS", "Effort"]

API_KEY_VARIABLE = "OPENAI_API_KEY"
# The key, once the server has taken it out of its own environment.
_claimed_key: str | None = None

# Environment variables whose name contains one of these words are never
# passed to tool processes, so `env` in a tool cannot show the API key.
DEFAULT_ENV_DENY = ("KEY", "SECRET", "TOKEN", "PASSWORD")


class ConfigError(ValueError):
    """A configuration value is missing or malformed; the message says which."""


def parse_effort(value: object) -> Effort:
    if isinstance(value, str) and value in EFFORTS:
        return value
    raise ConfigError(f"unknown effort {value!r}; expected one of {', '.join(EFFORTS)}")


def parse_bool(value: str) -> bool:
    lowered = value.strip().lower()
    if lowered in {"1", "true", "yes", "on"}:
        return True
    if lowered in {"0", "false", "no", "off", ""}:
        return False
    raise ConfigError(f"not a boolean: {value!r}")


@dataclass(frozen=True)
class ModelConfig:
    """How to reach a Responses-API model."""

    model: str = DEFAULT_MODEL
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    # Seconds without a byte from the model before a stream counts as stalled.
    idle_timeout: float = 300.0
    connect_timeout: float = 15.0
    max_attempts: int = 5
    # First backoff delay; doubles per attempt unless the server says retry-after.
    retry_base_delay: float = 0.5
    retry_max_delay: float = 30.0

    @classmethod
    def from_env(
        cls,
        env: Mapping[str, str] | None = None,
        *,
        model: str | None = None,
        base_url: str | None = None,
    ) -> ModelConfig:
        env = os.environ if env is None else env
        idle = env.get("AGENTLS_IDLE_TIMEOUT")
        # Mostly for tests and impatient local setups: the first retry's delay.
        delay = env.get("AGENTLS_RETRY_BASE_DELAY")
        return cls(
            model=model or env.get("AGENTLS_MODEL") or DEFAULT_MODEL,
            base_url=base_url or env.get("OPENAI_BASE_URL") or None,
            api_key=env.get(API_KEY_VARIABLE) or (_claimed_key if env is os.environ else None),
            idle_timeout=float(idle) if idle else cls.idle_timeout,
            retry_base_delay=float(delay) if delay else cls.retry_base_delay,
        )

    def missing_credentials(self) -> str | None:
        """A sentence telling the user what to set, or None when we can talk to a model."""
        if self.api_key or self.base_url:
            return None
        return (
            "no model is configured: set OPENAI_API_KEY to use OpenAI, or set "
            "OPENAI_BASE_URL (or the baseUrl option) to a Responses-compatible server"
        )


def api_key() -> str | None:
    """The API key: claimed by the server, or still in the environment."""
    return _claimed_key or os.environ.get(API_KEY_VARIABLE) or None


def claim_api_key() -> str | None:
    """Take the API key out of this process's environment and keep it in
    memory only, so that no process can read it from ``/proc/<pid>/environ``
    of the server (commands run without a sandbox could). Called once, first
    thing, by ``agentls serve``."""
    global _claimed_key
    key = os.environ.get(API_KEY_VARIABLE)
    if key:
        _claimed_key = key
        scrub_environment(API_KEY_VARIABLE)
    return _claimed_key


def scrub_environment(name: str) -> None:
    """Remove ``name`` from the environment *and* blank its original bytes,
    which ``/proc/self/environ`` keeps showing after ``unsetenv`` (Linux)."""
    import ctypes

    prefix = f"{name}=".encode()
    addresses: list[tuple[int, int]] = []
    try:
        with open("/proc/self/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        # env_start and env_end: fields 50 and 51 of stat (1-based, counting pid and comm).
        env_start, env_end = int(fields[47]), int(fields[48])
        libc = ctypes.CDLL(None)
        environ = ctypes.POINTER(ctypes.c_void_p).in_dll(libc, "environ")
        index = 0
        while environ[index]:
            address = environ[index]
            assert address is not None
            entry = ctypes.string_at(address)
            if entry.startswith(prefix) and env_start <= address < env_end:
                addresses.append((address, len(entry)))
            index += 1
    except (OSError, ValueError, IndexError, AttributeError):
        addresses = []  # no /proc (macOS): unsetenv is all there is
    os.environ.pop(name, None)
    for address, length in addresses:
        # The original environment block lives on our stack's edge and is
        # never freed: overwriting it in place is safe.
        ctypes.memset(address + len(prefix), 0, length - len(prefix))


@dataclass(frozen=True)
class ToolConfig:
    """Limits and environment for the tools."""

    exec_timeout_ms: int = 120_000
    exec_max_timeout_ms: int = 3_600_000
    # Bytes of command output kept for the model: this much from the head and the tail.
    output_head_bytes: int = 16 * 1024
    output_tail_bytes: int = 16 * 1024
    # read_file gives at most this many lines and bytes per call (and says how to read on).
    read_file_max_lines: int = 256
    read_file_max_bytes: int = 32 * 1024
    read_file_max_line_chars: int = 2000
    env_deny: tuple[str, ...] = DEFAULT_ENV_DENY

    def tool_environment(self, base: Mapping[str, str] | None = None) -> dict[str, str]:
        """The environment a tool process gets: ours minus anything secret-looking."""
        base = os.environ if base is None else base
        pattern = re.compile("|".join(re.escape(word) for word in self.env_deny), re.IGNORECASE)
        env = {k: v for k, v in base.items() if not (self.env_deny and pattern.search(k))}
        # Commands run unattended: never wait for a pager or emit colour codes.
        env.update({"PAGER": "cat", "GIT_PAGER": "cat", "NO_COLOR": "1", "TERM": "dumb"})
        return env


def parse_sandbox(value: object) -> Sandbox:
    if isinstance(value, str) and value in SANDBOXES:
        return value
    raise ConfigError(f"unknown sandbox {value!r}; expected one of {', '.join(SANDBOXES)}")


@dataclass(frozen=True, slots=True)
class SandboxPolicy:
    """Where commands run (docs/security.md): the sandbox mode the user chose
    and whether commands in it may use the network."""

    mode: Sandbox = DEFAULT_SANDBOX
    network: bool = False


@dataclass(frozen=True)
class AgentConfig:
    """Everything an agent needs that does not change during its life."""

    workspace: Path
    model: ModelConfig = field(default_factory=ModelConfig)
    tools: ToolConfig = field(default_factory=ToolConfig)
    max_pending_steers: int = 8
    sandbox: SandboxPolicy = field(default_factory=SandboxPolicy)
    # The model's context window in tokens; None: from the table of known models.
    context_window: int | None = None
    # Compact the conversation above this share of the window (0: never on its own).
    auto_compact: float = 0.85
    # A turn stops after this many model requests.
    max_requests_per_turn: int = 200
    # A turn stops when the model makes the same tool call this many times in a row.
    max_repeated_calls: int = 5
