"""Snapshots: an agent's conversation and settings as plain JSON, and back.

The base of the session store: what a stored session holds. A snapshot is
checked thoroughly on the way in — a resumed conversation that
the model would reject (an unanswered tool call, a malformed item) is refused
with a message that says which item is wrong, not discovered a turn later.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentls.agent.errors import InvalidSnapshot
from agentls.agent.settings import Settings
from agentls.domain import APPROVALS, DEFAULT_APPROVAL, EFFORTS
from agentls.model.types import Item

FORMAT = "agentls.snapshot"
VERSION = 1


def dump(model: str, settings: Settings, items: Sequence[Item]) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "version": VERSION,
        "model": model,
        "effort": settings.effort,
        "fastMode": settings.fast_mode,
        "approval": settings.approval,
        "items": list(items),
    }


def load(snapshot: object) -> tuple[Settings, list[Item]]:
    if not isinstance(snapshot, dict):
        raise InvalidSnapshot(f"a snapshot must be a JSON object, not {type(snapshot).__name__}")
    if snapshot.get("format") != FORMAT:
        raise InvalidSnapshot(f"not an agentls snapshot (format is {snapshot.get('format')!r})")
    if snapshot.get("version") != VERSION:
        raise InvalidSnapshot(
            f"unsupported snapshot version {snapshot.get('version')!r} (this is version {VERSION})"
        )
    effort = snapshot.get("effort")
    if effort not in EFFORTS:
        raise InvalidSnapshot(f"snapshot effort {effort!r} is not one of {', '.join(EFFORTS)}")
    fast_mode = snapshot.get("fastMode")
    if not isinstance(fast_mode, bool):
        raise InvalidSnapshot("snapshot fastMode must be true or false")
    approval = snapshot.get("approval", DEFAULT_APPROVAL)
    if approval not in APPROVALS:
        raise InvalidSnapshot(f"snapshot approval {approval!r} is not a known policy")
    items = snapshot.get("items")
    if not isinstance(items, list):
        raise InvalidSnapshot("snapshot items must be a list")
    _check_items(items)
    return Settings(effort, fast_mode, approval), items


def _check_items(items: list[Any]) -> None:
    open_calls: dict[str, int] = {}
    for index, item in enumerate(items):
        where = f"snapshot item {index}"
        if not isinstance(item, dict):
            raise InvalidSnapshot(f"{where} is not an object")
        kind = item.get("type")
        if not isinstance(kind, str) or not kind:
            raise InvalidSnapshot(f"{where} has no type")
        if kind == "message":
            if item.get("role") not in ("user", "assistant", "system", "developer"):
                raise InvalidSnapshot(f"{where} is a message with an unknown role")
            if not isinstance(item.get("content"), list | str):
                raise InvalidSnapshot(f"{where} is a message without content")
        elif kind == "function_call":
            call_id = item.get("call_id")
            if not isinstance(call_id, str) or not call_id:
                raise InvalidSnapshot(f"{where} is a function_call without call_id")
            if call_id in open_calls:
                raise InvalidSnapshot(f"{where} repeats call_id {call_id!r}")
            open_calls[call_id] = index
        elif kind == "function_call_output":
            call_id = item.get("call_id")
            if call_id not in open_calls:
                raise InvalidSnapshot(f"{where} answers call {call_id!r}, which was never made")
            del open_calls[call_id]
    if open_calls:
        call_id, index = next(iter(open_calls.items()))
        raise InvalidSnapshot(f"snapshot item {index}: function_call {call_id!r} has no output")
