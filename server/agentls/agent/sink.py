"""What a turn's model stream shows the user: deltas of the answer and the
reasoning, progress while the model writes a tool call, the web searches the
model server ran, retries, citations. Shown, never kept: the conversation
keeps only whole responses."""

from __future__ import annotations

import logging
import time
from typing import Any

from agentls.agent.events import (
    Citation,
    Citations,
    ModelRetry,
    ReasoningDelta,
    TextDelta,
    ToolFinished,
    ToolOutput,
    ToolPreparing,
    ToolStarted,
)
from agentls.agent.stream import EventStream
from agentls.domain import ToolStatus
from agentls.model.types import Item, ModelResponse, Retry

log = logging.getLogger(__name__)


class TurnSink:
    """The ``StreamSink`` of one turn's model requests."""

    __slots__ = ("_events", "_send_text", "turn_id")

    def __init__(self, events: EventStream, turn_id: int) -> None:
        self._events = events
        self._send_text = events.send_text
        self.turn_id = turn_id

    def text_delta(self, text: str) -> None:
        self._send_text(TextDelta, self.turn_id, text)

    def reasoning_delta(self, text: str) -> None:
        self._send_text(ReasoningDelta, self.turn_id, text)

    def call_progress(self, tool: str, chars: int) -> None:
        self._events.send(
            ToolPreparing(turn_id=self.turn_id, tool=tool, title=_preparing(tool), chars=chars)
        )

    def hosted_call(self, item: Item) -> None:
        """A web search the model server ran: shown like a tool call, with its sources."""
        events, turn_id = self._events, self.turn_id
        raw = item.get("action")
        action: dict[str, Any] = raw if isinstance(raw, dict) else {}
        query = str(action.get("query") or action.get("url") or action.get("pattern") or "")
        call_id = str(item.get("id") or item.get("call_id") or "web_search")
        sources = _sources(action)
        title = f"Searched the web: {query}" if query else "Searched the web"
        events.send(
            ToolStarted(
                turn_id=turn_id,
                call_id=call_id,
                tool="web_search",
                title=title,
                arguments={"query": query} if query else {},
            )
        )
        if sources:
            lines = [s["url"] + (f" — {s['title']}" if s.get("title") else "") for s in sources]
            events.send_text(ToolOutput, turn_id, "\n".join(lines) + "\n", call_id)
        status: ToolStatus = (
            "failed" if item.get("status") in ("failed", "incomplete") else "completed"
        )
        events.send(ToolFinished(turn_id=turn_id, call_id=call_id, status=status, sources=sources))

    def retrying(self, retry: Retry) -> None:
        log.info(
            "turn %s: %s; retrying in %.1f s (attempt %d of %d)",
            self.turn_id,
            retry.reason,
            retry.delay,
            retry.attempt + 1,
            retry.max_attempts,
        )
        self._events.send(
            ModelRetry(
                turn_id=self.turn_id,
                attempt=retry.attempt,
                max_attempts=retry.max_attempts,
                delay=retry.delay,
                reason=retry.reason,
                failure=retry.kind,
                retry_at=time.time() + retry.delay,
            )
        )

    def citations(self, response: ModelResponse) -> None:
        """The pages a response's text cites (``url_citation`` annotations)."""
        citations = [
            Citation(
                url=str(note["url"]),
                title=note.get("title"),
                start_index=note.get("start_index"),
                end_index=note.get("end_index"),
            )
            for item in response.items
            if item.get("type") == "message"
            for part in item.get("content") or ()
            if isinstance(part, dict)
            for note in part.get("annotations") or ()
            if isinstance(note, dict) and note.get("type") == "url_citation" and note.get("url")
        ]
        if citations:
            self._events.send(Citations(turn_id=self.turn_id, citations=citations))


def _preparing(tool: str) -> str:
    """What the user reads while the model writes a call of ``tool``."""
    if tool in ("apply_patch", "apply_patch_call"):
        return "Writing a patch…"
    if tool in ("exec_command", "shell_call", "local_shell_call"):
        return "Writing a command…"
    if tool == "web_search_call":
        return "Searching the web…"
    if tool == "update_plan":
        return "Updating the plan…"
    return f"Preparing {tool}…"


def _sources(action: dict[str, Any]) -> list[dict[str, str]]:
    """The pages a web search used (``action.sources`` of ``type: "url"``)."""
    found: list[dict[str, str]] = []
    for source in action.get("sources") or ():
        if isinstance(source, dict) and isinstance(source.get("url"), str):
            entry = {"url": source["url"]}
            if isinstance(source.get("title"), str):
                entry["title"] = source["title"]
            found.append(entry)
    if not found and isinstance(action.get("url"), str):
        found.append({"url": action["url"]})
    return found
