"""``initializationOptions``: the one wire type answering ``initialize`` needs.

Kept apart from the request params (``types.py``): defining a class with attrs
costs a few milliseconds, and start-up should pay only for this one.
"""

from __future__ import annotations

from typing import Any

import attrs

from agentls.domain import DEFAULT_APPROVAL, DEFAULT_SANDBOX, Approval, Effort, Sandbox


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
