"""Function names for MCP tools: ``mcp__SERVER__TOOL``.

The Responses API takes function names of 1 to 64 characters from
``[A-Za-z0-9_-]``; MCP server and tool names may be longer or use other
characters (``files.read``, ``github/search``). Other characters become
``_``; a name that would be too long, or that another tool already took once
cleaned, keeps a short hash of the original at its end. The names are stable:
the same server and tool always get the same name.
"""

from __future__ import annotations

import hashlib
import re

PREFIX = "mcp__"
SEPARATOR = "__"
MAX_LENGTH = 64
_NOT_ALLOWED = re.compile(r"[^A-Za-z0-9_-]")
_HASH = 6


def clean(part: str) -> str:
    return _NOT_ALLOWED.sub("_", part) or "_"


def _digest(server: str, tool: str) -> str:
    return hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:_HASH]


def function_name(server: str, tool: str, taken: set[str] | frozenset[str] = frozenset()) -> str:
    """The model's name for ``tool`` of ``server``, not one of ``taken``."""
    name = f"{PREFIX}{clean(server)}{SEPARATOR}{clean(tool)}"
    if len(name) <= MAX_LENGTH and name not in taken:
        return name
    suffix = "_" + _digest(server, tool)
    return name[: MAX_LENGTH - len(suffix)] + suffix


def valid(name: str) -> bool:
    return 0 < len(name) <= MAX_LENGTH and not _NOT_ALLOWED.search(name)
