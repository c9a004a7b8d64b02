"""The context window: how full the next request will be, and cutting a
conversation down mechanically when a summary cannot be had.

Token counts come from the server where it gives them: the estimate of the
next request is the ``input_tokens`` the last response reported, plus an
estimate of what was added since (``ceil(UTF-8 bytes / 4)`` of each item's
compact JSON, the same rule for instructions and tool definitions). Before any
response has reported, the whole request is estimated that way. Item
estimates are counted once, as items are added, so a long conversation costs
nothing extra per request.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from agentls.model.types import CLIENT_CALL_TYPES, Item

_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_OUTPUT_TYPES = frozenset(CLIENT_CALL_TYPES.values())


def estimate_tokens(unit: Any) -> int:
    """Estimated tokens of one unit: a string, or an item / tool definition."""
    text = unit if isinstance(unit, str) else _COMPACT.encode(unit)
    return -(-len(text.encode("utf-8")) // 4)


def fixed_tokens(instructions: str, tools: Iterable[Any]) -> int:
    """The part of every request that is not the conversation."""
    return estimate_tokens(instructions) + sum(estimate_tokens(tool) for tool in tools)


class ContextMeter:
    """Estimates the size of the next request of one conversation.

    ``estimate(items, fixed)`` is called with the conversation as it is now;
    ``reported`` after each response with the count the server gave. After the
    conversation was replaced (a compaction), ``reset``.
    """

    __slots__ = ("_counted", "_offset", "_tokens")

    def __init__(self) -> None:
        self._counted = 0  # leading items of the conversation already estimated
        self._tokens = 0  # their estimate
        # The server's count minus ours, for the last request it reported on.
        self._offset = 0

    def reset(self) -> None:
        self._counted = self._tokens = self._offset = 0

    def _count(self, items: Sequence[Item]) -> int:
        if len(items) < self._counted:
            self._counted = self._tokens = 0
        if len(items) > self._counted:
            self._tokens += sum(estimate_tokens(item) for item in items[self._counted :])
            self._counted = len(items)
        return self._tokens

    def estimate(self, items: Sequence[Item], fixed: int, extra: Iterable[Item] = ()) -> int:
        """The next request's input tokens, with ``extra`` items still to be added."""
        added = sum(estimate_tokens(item) for item in extra)
        return max(0, fixed + self._count(items) + added + self._offset)

    def reported(self, input_tokens: int, items: Sequence[Item], fixed: int) -> None:
        """The server counted ``input_tokens`` for the request that carried ``items``."""
        if input_tokens > 0:
            self._offset = input_tokens - fixed - self._count(items)

    @property
    def offset(self) -> int:
        return self._offset


# --- mechanical trimming -------------------------------------------------------------


_CUT = "[… {n} bytes cut to fit the context window …]"
_DROPPED: Item = {"type": "_dropped"}


def _cut_text(text: str, keep: int) -> str:
    """``text`` cut to its first ``keep`` characters and its last ``keep // 2``."""
    if len(text) <= keep + keep // 2 + 80:
        return text
    head, tail = text[:keep], text[len(text) - keep // 2 :] if keep else ""
    omitted = len(text.encode("utf-8")) - len(head.encode("utf-8")) - len(tail.encode("utf-8"))
    return f"{head}\n{_CUT.format(n=omitted)}\n{tail}"


def _cut_output(item: Item, keep: int) -> Item | None:
    output = item.get("output")
    if isinstance(output, str):
        if item.get("type") == "local_shell_call_output":
            return None  # a short JSON document already
        cut = _cut_text(output, keep)
        return {**item, "output": cut} if cut != output else None
    if isinstance(output, list):  # shell_call_output: stdout/stderr chunks
        size = len(_COMPACT.encode(output))
        if size <= keep * 2:
            return None
        first = output[0] if output and isinstance(output[0], dict) else {}
        note = _CUT.format(n=size)
        return {**item, "output": [{**first, "stdout": note, "stderr": ""}]}
    return None


def _cut_call(item: Item, keep: int) -> Item | None:
    if item.get("type") == "function_call":
        arguments = item.get("arguments")
        if isinstance(arguments, str) and len(arguments) > keep * 2:
            note = json.dumps({"omitted": _CUT.format(n=len(arguments.encode("utf-8")))})
            return {**item, "arguments": note}
    elif item.get("type") == "custom_tool_call":
        text = item.get("input")
        if isinstance(text, str) and len(text) > keep * 2:
            return {**item, "input": _cut_text(text, keep)}
    return None


def _cut_message(item: Item, keep: int) -> Item | None:
    content = item.get("content")
    if isinstance(content, str):
        cut = _cut_text(content, keep)
        return {**item, "content": cut} if cut != content else None
    if not isinstance(content, list):
        return None
    parts = []
    changed = False
    for part in content:
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            cut = _cut_text(part["text"], keep)
            changed |= cut != part["text"]
            parts.append({**part, "text": cut})
        else:
            parts.append(part)
    return {**item, "content": parts} if changed else None


def trim(
    items: Sequence[Item],
    budget: int,
    *,
    is_user: Callable[[Item], bool],
) -> list[Item]:
    """The conversation cut down until its estimate is at most ``budget``.

    Oldest first, in rounds that each lose less than the next: tool outputs
    keep their head and tail; then reasoning items go; then long call
    arguments are replaced by a note; then assistant messages keep their
    head and tail; last, the user's own messages other than the first and the
    last. Calls and their outputs always stay in pairs; the first and the
    last user message are never cut.
    """
    result = list(items)
    sizes = [estimate_tokens(item) for item in result]
    total = sum(sizes)
    users = [i for i, item in enumerate(result) if is_user(item)]
    protected = {users[0], users[-1]} if users else set()

    def replace(index: int, item: Item | None) -> None:
        nonlocal total
        if item is None:
            return
        result[index] = item
        size = estimate_tokens(item)
        total += size - sizes[index]
        sizes[index] = size

    rounds: list[Callable[[int, Item], None]] = [
        lambda i, item: (
            replace(i, _cut_output(item, 300)) if item.get("type") in _OUTPUT_TYPES else None
        ),
        lambda i, item: replace(i, _DROPPED) if item.get("type") == "reasoning" else None,
        lambda i, item: replace(i, _cut_call(item, 500)),
        lambda i, item: (
            replace(i, _cut_message(item, 500))
            if item.get("type") == "message" and not is_user(item)
            else None
        ),
        lambda i, item: (
            replace(i, _cut_message(item, 1000)) if is_user(item) and i not in protected else None
        ),
        lambda i, item: replace(i, _cut_message(item, 4000)) if i in protected else None,
    ]
    for cut in rounds:
        for index, item in enumerate(result):
            if total <= budget:
                break
            cut(index, item)
        if total <= budget:
            break
    return [item for item in result if item is not _DROPPED]
