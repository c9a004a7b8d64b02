"""The conversation items the agent writes itself: the user's messages and
the outputs that answer tool calls it did not (or not fully) run."""

from __future__ import annotations

from agentls.model.items import call_output
from agentls.model.types import Item
from agentls.tools.registry import ToolCall

# What the model reads for a call the user's cancel cut off.
ABORTED_OUTPUT = "aborted by user"
# What it reads for a call cancelled before it finished (``agent/cancelTool``).
STOPPED_OUTPUT = "Cancelled by the user before it finished."


def user_message(text: str) -> Item:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def answer(call: ToolCall, output: str, *, failed: bool = False) -> Item:
    """The output item that answers ``call`` (of whatever kind it is)."""
    return call_output(call.kind, call.call_id, output, failed=failed)
