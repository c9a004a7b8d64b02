"""Where handlers register for the methods they serve."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from agentls.protocol import methods

Handler = Callable[[Any, Any], Awaitable[Any]]

HANDLERS: dict[str, Handler] = {}


def handles(*names: str) -> Callable[[Handler], Handler]:
    """Register the decorated function as the handler of these client requests."""

    def register(function: Handler) -> Handler:
        for name in names:
            assert name in methods.CLIENT_REQUESTS, f"{name} is not in the method table"
            assert name not in HANDLERS, f"two handlers for {name}"
            HANDLERS[name] = function
        return function

    return register
