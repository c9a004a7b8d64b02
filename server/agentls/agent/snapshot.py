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
from agentls.model.items import call_id, call_output
from agentls.model.types import CLIENT_CALL_TYPES, Item

FORMAT = "agentls.snapshot"
VERSION = 1

# Every client-side call item and the output item that answers it (the
# Responses API refuses a request with one half of a pair). Hosted calls
# (web_search_call, ...) run on OpenAI's side and need no output.
# Every kind of call the client answers, and the kind of its output.
CALL_OUTPUTS = CLIENT_CALL_TYPES
_CALL_OF = {output: call for call, output in CALL_OUTPUTS.items()}
call_id_of = call_id


def dump(model: str, settings: Settings, items: Sequence[Item]) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "version": VERSION,
        "model": model,
        "effort": settings.effort,
        "fastMode": settings.fast_mode,
        "approval": settings.approval,
        "webSearch": settings.web_search,
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
    settings = load_settings(snapshot)
    items = snapshot.get("items")
    if not isinstance(items, list):
        raise InvalidSnapshot("snapshot items must be a list")
    check_items(items)
    return settings, items


def load_settings(values: dict[str, Any]) -> Settings:
    """``effort``, ``fastMode``, ``approval`` and ``webSearch`` of a snapshot
    (or a session record); the ones a record predates take their defaults."""
    effort = values.get("effort")
    if effort not in EFFORTS:
        raise InvalidSnapshot(f"snapshot effort {effort!r} is not one of {', '.join(EFFORTS)}")
    fast_mode = values.get("fastMode")
    if not isinstance(fast_mode, bool):
        raise InvalidSnapshot("snapshot fastMode must be true or false")
    approval = values.get("approval", DEFAULT_APPROVAL)
    if approval not in APPROVALS:
        raise InvalidSnapshot(f"snapshot approval {approval!r} is not a known policy")
    web_search = values.get("webSearch", False)
    if not isinstance(web_search, bool):
        raise InvalidSnapshot("snapshot webSearch must be true or false")
    return Settings(effort, fast_mode, approval, web_search)


def check_items(items: Sequence[Any]) -> None:
    """Raise InvalidSnapshot naming the first item the model would refuse."""
    for index, item in enumerate(items):
        _check_item(index, item)
    problem = _pairing_problem(items)
    if problem is not None:
        raise InvalidSnapshot(problem)


def _check_item(index: int, item: Any) -> None:
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
    elif kind in CALL_OUTPUTS or kind in _CALL_OF:
        call_id = call_id_of(item)
        if not isinstance(call_id, str) or not call_id:
            raise InvalidSnapshot(f"{where} is a {kind} without call_id")


def _pairing_problem(items: Sequence[Item]) -> str | None:
    open_calls: dict[tuple[str, str], int] = {}
    for index, item in enumerate(items):
        kind = item["type"]
        if kind in CALL_OUTPUTS:
            key = (kind, call_id_of(item))
            if key in open_calls:
                return f"snapshot item {index} repeats call_id {key[1]!r}"
            open_calls[key] = index
        elif kind in _CALL_OF:
            key = (_CALL_OF[kind], call_id_of(item))
            if key not in open_calls:
                return f"snapshot item {index} answers call {key[1]!r}, which was never made"
            del open_calls[key]
    if open_calls:
        (kind, call_id), index = next(iter(open_calls.items()))
        return f"snapshot item {index}: {kind} {call_id!r} has no output"
    return None


def unanswered_calls(items: Sequence[Item]) -> list[Item]:
    """The call items of ``items`` (one model response and the outputs so far)
    that have no output yet, in order."""
    answered = {(_CALL_OF[i["type"]], call_id_of(i)) for i in items if i.get("type") in _CALL_OF}
    return [
        item
        for item in items
        if item.get("type") in CALL_OUTPUTS and (item["type"], call_id_of(item)) not in answered
    ]


def synthesized_output(call: Item, text: str) -> Item:
    """An output answering ``call`` (of any kind the client answers) with ``text``,
    marked as failed where the kind has a status."""
    return call_output(str(call.get("type")), call_id(call), text, failed=True)
