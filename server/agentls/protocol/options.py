"""``initializationOptions``: the one wire type answering ``initialize`` needs.

Kept apart from the request params (``types.py``): defining a class with attrs
costs a few milliseconds, and start-up should pay only for this one.
"""

from __future__ import annotations

import attrs

from agentls.domain import Approval, Effort


@attrs.define(frozen=True)
class InitializationOptions:
    """``initializationOptions`` of ``initialize`` (all optional)."""

    model: str | None = None
    base_url: str | None = None
    effort: Effort | None = None
    fast_mode: bool | None = None
    workspace: str | None = None
    approval: Approval = "never"
    # Seconds without a byte from the model before its stream counts as stalled.
    idle_timeout: float | None = None
    # Required when the server listens on a non-loopback address (--token).
    token: str | None = None
    # Sessions kept per workspace (docs/sessions.md); 0 keeps none.
    session_retention: int = 200
