"""``initializationOptions``: the one wire type answering ``initialize`` needs.

Kept apart from the request params (``types.py``): defining a class with attrs
costs a few milliseconds, and start-up should pay only for this one.
"""

from __future__ import annotations

from typing import Any

import attrs

from agentls.domain import DEFAULT_APPROVAL, DEFAULT_SANDBOX, Approval, Effort, Sandbox


def _at_least(minimum: float, name: str) -> Any:
    def check(_: Any, __: Any, value: float | None) -> None:
        if value is not None and value < minimum:
            raise ValueError(f"{name}: must be at least {minimum:g}, got {value:g}")

    return check


def _share(_: Any, __: Any, value: float | None) -> None:
    if value is not None and not 0 <= value < 1:
        raise ValueError(f"autoCompact: must be 0 (off) or a share below 1, got {value:g}")


@attrs.define(frozen=True)
class InitializationOptions:
    """``initializationOptions`` of ``initialize`` (all optional)."""

    model: str | None = None
    base_url: str | None = None
    effort: Effort | None = None
    fast_mode: bool | None = None
    workspace: str | None = None
    approval: Approval = DEFAULT_APPROVAL
    # Where commands run (docs/security.md); falls back to "off" where the
    # sandbox cannot start, and says so.
    sandbox: Sandbox = DEFAULT_SANDBOX
    # Whether sandboxed commands may use the network.
    network: bool = False
    # Seconds without a byte from the model before its stream counts as stalled.
    idle_timeout: float | None = None
    # Required when the server listens on a non-loopback address (--token).
    token: str | None = None
    # MCP servers, ``{NAME: {command, args?, env?} | {type: "http", url, headers?}}``;
    # checked when they start (agentls.mcp.config), not here.
    mcp_servers: dict[str, Any] | None = None
    # The model's context window in tokens (default: from the table of known models).
    context_window: int | None = attrs.field(
        default=None, validator=_at_least(1024, "contextWindow")
    )
    # Compact above this share of the window (default 0.85; 0 turns it off).
    auto_compact: float | None = attrs.field(default=None, validator=_share)
    # Offer the model the hosted web search tool (default false).
    web_search: bool | None = None
    # A turn stops after this many model requests (default 200).
    max_requests_per_turn: int | None = attrs.field(
        default=None, validator=_at_least(1, "maxRequestsPerTurn")
    )
    # Sessions kept per workspace (docs/sessions.md); 0 keeps none.
    session_retention: int = 200
    # Review mode: every patch waits for the user's review (docs/edits.md).
    review: bool | None = None
