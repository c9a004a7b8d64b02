"""Request handlers, one module per group. Each parses, delegates to the
connection/worker, and translates the answer to wire form — nothing more.

Imported on the first ``agent/*`` request (not at start-up). Each handler
declares the methods it serves with ``@handles``; the method table itself
(names, params types) is ``protocol.methods``.
"""

from __future__ import annotations

from agentls.lsp.handlers import (
    auxiliary,
    context,
    mcp,
    panes,
    sessions,
    settings,
    tools,
    turns,
)
from agentls.lsp.handlers.registry import HANDLERS, Handler
from agentls.protocol import methods

__all__ = ["HANDLERS", "Handler"]

_modules = (auxiliary, context, mcp, panes, sessions, settings, tools, turns)
_missing = set(methods.CLIENT_REQUESTS) - set(HANDLERS)
assert not _missing, f"no handler for {sorted(_missing)}"
