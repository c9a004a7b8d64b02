"""A conversation as displayable entries — what a client needs to rebuild a
transcript (``session.resumed``, a fork's ``pane.opened``):
``{role: "user" | "assistant" | "tool" | "steer" | "summary", text, tool?, status?}``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from agentls.agent import snapshot as snapshots
from agentls.agent.items import ABORTED_OUTPUT
from agentls.model.types import Item
from agentls.sessions.replay import INTERRUPTED_OUTPUT, Marks

Entry = dict[str, Any]


def message_text(item: Item) -> str:
    content = item.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "".join(
        part.get("text", "")
        for part in content
        if isinstance(part, dict) and isinstance(part.get("text"), str)
    )


def build(items: Sequence[Item], marks: Marks, title: Callable[[Item], str]) -> list[Entry]:
    """The entries of a conversation. ``marks`` says which user messages were
    steers and which messages are a compaction's summary; ``title`` names a
    tool call the way the editor saw it ("Running `pytest`")."""
    entries: list[Entry] = []
    calls: dict[tuple[str, Any], Entry] = {}
    for index, item in enumerate(items):
        kind = item.get("type")
        if kind == "message":
            mark = marks.get(index)
            role = item.get("role")
            if mark is None and role not in ("user", "assistant"):
                continue  # system and developer messages are not the conversation
            text = message_text(item)
            entries.append({"role": mark or role, "text": text})
        elif kind in snapshots.CALL_OUTPUTS:
            entry: Entry = {
                "role": "tool",
                "text": title(item),
                "tool": str(item.get("name") or kind),
                "status": "interrupted",
            }
            calls[(str(kind), snapshots.call_id_of(item))] = entry
            entries.append(entry)
        elif isinstance(kind, str) and kind.endswith("_output"):
            call = calls.get((kind.removesuffix("_output"), snapshots.call_id_of(item)))
            if call is not None:
                call["status"] = _status(item.get("output"))
    return entries


def _status(output: Any) -> str:
    if output == ABORTED_OUTPUT:
        return "cancelled"
    if output == INTERRUPTED_OUTPUT:
        return "interrupted"
    return "completed"
