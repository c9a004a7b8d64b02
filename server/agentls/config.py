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

from agentls.domain import DEFAULT_EFFORT, DEFAULT_MODEL, EFFORTS, Effort

__all__ = ["DEFAULT_EFFORT", "DEFAULT_MODEL", "EFFORTS", "Effort"]

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
            api_key=env.get("OPENAI_API_KEY") or None,
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


@dataclass(frozen=True)
class AgentConfig:
    """Everything an agent needs that does not change during its life."""

    workspace: Path
    model: ModelConfig = field(default_factory=ModelConfig)
    tools: ToolConfig = field(default_factory=ToolConfig)
    max_pending_steers: int = 8
    # The model's context window in tokens; None: from the table of known models.
    context_window: int | None = None
    # Compact the conversation above this share of the window (0: never on its own).
    auto_compact: float = 0.85
    # A turn stops after this many model requests.
    max_requests_per_turn: int = 200
    # A turn stops when the model makes the same tool call this many times in a row.
    max_repeated_calls: int = 5
