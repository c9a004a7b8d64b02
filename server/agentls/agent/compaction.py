"""Compaction: a conversation that no longer fits becomes one that does.

The model summarises the conversation; the new conversation is the user's own
messages (prompts and steers, word for word, in order) followed by that
summary. The project instructions live in the request's ``instructions``, so
they survive untouched (and are read again afterwards). When no summary can
be had — the summary request fails, or the user's messages and the summary
together still do not fit — the old conversation is cut mechanically instead
(``agent.context.trim``). Either way the result is what the next request
sends, so a long session never dead-ends at the context window.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from agentls.agent.context import estimate_tokens, fixed_tokens, trim
from agentls.model.errors import ModelError
from agentls.model.types import Item, ModelRequest, StreamSink, Usage

if TYPE_CHECKING:
    from agentls.model.client import ResponsesClient

CompactionMode = Literal["summary", "trim"]

# The summary goes back as a user message that starts with this line: how the
# conversation, a client rebuilding a transcript, and the next compaction tell
# a summary from what the user wrote.
SUMMARY_PREFIX = "[Summary of the conversation so far; earlier messages were compacted]\n\n"

SUMMARY_INSTRUCTIONS = """\
You are compacting the conversation of a coding agent so that it can go on \
working with less context. Write a summary that lets the agent continue \
exactly where it is, without the messages it replaces. The user's own \
messages are kept word for word elsewhere: do not repeat them.

Include, briefly and concretely:
- what the user asked for, and what is done so far (files changed and how, \
commands run and what they showed);
- the current state: what works, what fails, with file paths and names;
- decisions made and constraints learned (and why);
- what remains to be done next.

Write plain text, at most about 600 words. Do not call tools."""

SUMMARY_REQUEST = "Summarise the conversation above as the instructions say."

# What the model may write in its summary, kept free in the window.
SUMMARY_RESERVE = 0.15


def user_text(item: Item) -> str | None:
    """The text of a user message, or None for any other item."""
    if item.get("type") != "message" or item.get("role") != "user":
        return None
    content = item.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def is_summary(item: Item) -> bool:
    """Whether ``item`` is a compaction summary (displayed with role "summary")."""
    text = user_text(item)
    return text is not None and text.startswith(SUMMARY_PREFIX)


def is_user_message(item: Item) -> bool:
    """A message the user wrote (a prompt or a steer), not a summary."""
    text = user_text(item)
    return text is not None and not text.startswith(SUMMARY_PREFIX)


def summary_message(summary: str) -> Item:
    return {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": SUMMARY_PREFIX + summary.strip()}],
    }


@dataclass(frozen=True, slots=True)
class Compacted:
    items: list[Item]
    mode: CompactionMode
    summary: str | None
    usage: Usage


@dataclass(frozen=True, slots=True)
class Budget:
    """The sizes a compaction works with, in estimated tokens."""

    window: int
    # Above this the conversation is compacted (``autoCompact`` times the window).
    threshold: int
    # The server's count minus ours for the last request (see ContextMeter).
    offset: int = 0

    @property
    def target(self) -> int:
        """What a mechanical trim cuts down to: well below the threshold, so
        the conversation can grow again before the next compaction."""
        return max(1, self.threshold // 2)


class Summariser:
    """Asks the model for a summary, with the settings of ``template`` (the
    request the conversation would send next)."""

    def __init__(self, client: ResponsesClient, template: ModelRequest, sink: StreamSink) -> None:
        self._client = client
        self.template = template
        self._sink = sink

    async def __call__(self, items: Sequence[Item], focus: str | None) -> tuple[str, Usage]:
        request_text = SUMMARY_REQUEST
        if focus:
            request_text += f"\n\nFocus the summary on: {focus}"
        template = self.template
        request = ModelRequest(
            input=[*items, _user(request_text)],
            tools=template.tools,
            instructions=SUMMARY_INSTRUCTIONS,
            effort=template.effort,
            fast_mode=template.fast_mode,
            background=template.background,
            cache_key=template.cache_key,
            tool_choice="none",
        )
        response = await self._client.stream(request, self._sink)
        return response.text.strip(), response.usage


def _user(text: str) -> Item:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


async def compact(
    items: Sequence[Item],
    *,
    fixed: int,
    budget: Budget,
    summarise: Summariser,
    focus: str | None = None,
) -> Compacted:
    """The conversation ``items`` compacted to fit ``budget`` (``fixed``: the
    estimate of the instructions and tools every request carries)."""
    usage = Usage()
    kept = [item for item in items if is_user_message(item)]
    # The summary request must fit the window itself: it sees the
    # conversation cut down as far as needed, plus room for the summary.
    summary_fixed = fixed_tokens(SUMMARY_INSTRUCTIONS, summarise.template.tools)
    room = int(budget.window * (1 - SUMMARY_RESERVE)) - summary_fixed - max(budget.offset, 0) - 64
    summary: str | None = None
    if room > 0:
        source = trim(items, room, is_user=is_user_message)
        try:
            summary, usage = await summarise(source, focus)
        except ModelError as exc:
            if exc.kind in ("auth", "quota"):
                raise  # nothing will work; say so rather than cut the conversation
            summary = None
    if summary:
        candidate = [*kept, summary_message(summary)]
        size = fixed + sum(estimate_tokens(item) for item in candidate) + budget.offset
        if size <= budget.threshold:
            return Compacted(candidate, "summary", summary, usage)
    trimmed = trim(items, budget.target - fixed - max(budget.offset, 0), is_user=is_user_message)
    return Compacted(trimmed, "trim", None, usage)
