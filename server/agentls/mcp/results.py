"""An MCP tool's result as the call's output: text the model can read.

Text blocks are kept as they are; images and audio become a line saying what
they were (the model is sent text only); resource links and embedded
resources say their URI (and an embedded text resource its text); a result
with no content but structured content is sent as that JSON. ``isError``
makes the call failed. The whole output is bounded like every tool's
(``tools.output``: head and tail kept, the cut said).

Blocks are told apart by their ``type`` field, so that any revision of the
SDK's content models reads the same.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from agentls.tools.base import ToolResult
from agentls.tools.output import bounded


def _size(data: Any) -> str:
    if not isinstance(data, str):
        return "unknown size"
    size = len(data) * 3 // 4 - data[-2:].count("=")
    return f"{size} bytes" if size < 1024 else f"{size / 1024:.1f} KiB"


def _block(block: Any) -> str:
    kind = getattr(block, "type", None)
    if kind == "text":
        return str(getattr(block, "text", ""))
    if kind in ("image", "audio"):
        mime = getattr(block, "mime_type", None) or kind
        return (
            f"[{kind}: {mime}, {_size(getattr(block, 'data', None))}; the {kind} itself "
            "is shown to the user, not sent to you]"
        )
    if kind == "resource_link":
        parts = [f"[resource link: {getattr(block, 'name', '')} <{getattr(block, 'uri', '')}>"]
        if mime := getattr(block, "mime_type", None):
            parts.append(f" ({mime})")
        if description := getattr(block, "description", None):
            parts.append(f": {description}")
        return "".join(parts) + "]"
    if kind == "resource":
        resource = getattr(block, "resource", None)
        uri = getattr(resource, "uri", "")
        mime = getattr(resource, "mime_type", None)
        head = f"[resource <{uri}>" + (f" ({mime})" if mime else "")
        text = getattr(resource, "text", None)
        if isinstance(text, str):
            return f"{head}]\n{text}"
        return f"{head}: {_size(getattr(resource, 'blob', None))} of binary data]"
    return f"[content of type {kind!r}, not shown]"


def output_text(content: Iterable[Any], structured: Any = None) -> str:
    parts = [_block(block) for block in content]
    if not parts and structured is not None:
        return json.dumps(structured, ensure_ascii=False)
    return "\n".join(parts)


def to_tool_result(result: Any, head: int, tail: int) -> ToolResult:
    """A ``CallToolResult`` as the call's output, bounded to ``head`` + ``tail`` bytes."""
    text = output_text(getattr(result, "content", None) or (), result.structured_content)
    if result.is_error:
        text = f"error: {text or 'the tool reported an error without saying what it was'}"
        return ToolResult(output=bounded(text, head, tail), status="failed")
    return ToolResult(output=bounded(text, head, tail) if text else "(no output)")
