"""Request handlers, one module per group. Each parses, delegates to the
session/worker, and translates the answer to wire form — nothing more.

Imported on the first ``agent/*`` request (not at start-up): ``HANDLERS``
maps each method to its params type and handler.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from agentls.server.handlers import auxiliary, panes, settings, turns

Handler = Callable[[Any, Any], Awaitable[Any]]

HANDLERS: dict[str, tuple[type, Handler]] = {
    **turns.HANDLERS,
    **panes.HANDLERS,
    **settings.HANDLERS,
    **auxiliary.HANDLERS,
}
