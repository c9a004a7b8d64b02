"""Conversation items on their way back to the model.

With ``store: false`` nothing is kept on OpenAI's side, so an item that
carries an ``id`` is looked up there and refused ("Item with id … not found");
items go back without it, as Codex sends them. Output items (whatever their
kind) are kept; of the calls the server ran itself only web searches go back —
other hosted items (code interpreter, hosted MCP, …) are tools we never offer,
and their ids could not be resolved.
"""

from __future__ import annotations

import json

from agentls.model.types import CLIENT_CALL_TYPES, Item

# Items that go back to the model as they came (minus their id).
_KEPT = frozenset({"message", "reasoning", "web_search_call", *CLIENT_CALL_TYPES})
# A local shell call's output names its call by ``id``: that one id stays.
_ID_IS_CALL = "local_shell_call_output"


def for_history(item: Item) -> Item | None:
    """A response item as the conversation keeps it, or None to leave it out."""
    if item.get("type") not in _KEPT:
        return None
    return without_id(item)


def without_id(item: Item) -> Item:
    if "id" not in item or item.get("type") == _ID_IS_CALL:
        return item
    return {key: value for key, value in item.items() if key != "id"}


def call_id(item: Item) -> str:
    """The id a call or call output item pairs by."""
    value = item.get("call_id")
    if value is None and item.get("type") == _ID_IS_CALL:
        value = item.get("id")
    return str(value or "")


def call_output(call_type: str, call_id: str, output: str, *, failed: bool = False) -> Item:
    """The item that answers a call of ``call_type`` with ``output``."""
    kind = CLIENT_CALL_TYPES.get(call_type, "function_call_output")
    if kind == "shell_call_output":
        outcome = {"type": "exit", "exit_code": 1 if failed else 0}
        stream = "stderr" if failed else "stdout"
        other = "stdout" if failed else "stderr"
        return {
            "type": kind,
            "call_id": call_id,
            "output": [{stream: output, other: "", "outcome": outcome}],
        }
    if kind == _ID_IS_CALL:
        return {"type": kind, "id": call_id, "output": json.dumps({"output": output})}
    if kind == "apply_patch_call_output":
        return {
            "type": kind,
            "call_id": call_id,
            "status": "failed" if failed else "completed",
            "output": output,
        }
    return {"type": kind, "call_id": call_id, "output": output}
