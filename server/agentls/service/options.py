"""How the service starts: the model, the sandbox, the limits, the pane's
first settings, MCP servers, session retention. A face fills it from its own
configuration (the LSP face from ``initializationOptions``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agentls.domain import DEFAULT_APPROVAL, DEFAULT_SANDBOX, Approval, Effort, Sandbox


@dataclass(frozen=True, slots=True)
class ServiceOptions:
    model: str | None = None
    base_url: str | None = None
    effort: Effort | None = None
    fast_mode: bool | None = None
    approval: Approval = DEFAULT_APPROVAL
    sandbox: Sandbox = DEFAULT_SANDBOX
    network: bool = False
    idle_timeout: float | None = None
    mcp_servers: dict[str, Any] | None = None
    context_window: int | None = None
    auto_compact: float | None = None
    web_search: bool | None = None
    max_requests_per_turn: int | None = None
    session_retention: int = 200
    review: bool | None = None
