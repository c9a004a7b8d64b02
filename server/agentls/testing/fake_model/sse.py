"""Server-Sent Events in OpenAI's wire format: the events of a scripted reply,
and the response objects they carry."""

from __future__ import annotations

import functools
import itertools
import json
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from .script import MessageSpec, ReasoningSpec, Reply

JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
# One event: anything up to and including the blank line that ends it (any of
# the three line endings SSE allows), or whatever is left at the end.
_RAW_EVENT = re.compile(rb".*?(?:\r\n\r\n|\n\n|\r\r)|.+", re.DOTALL)


@dataclass(slots=True)
class Event:
    """One SSE event. ``data`` is encoded at write time; deltas instead carry
    ``tail``, their pre-encoded JSON after the sequence number."""

    type: str
    data: dict[str, Any] | None = None
    tail: bytes = b""
    pause: float = 0.0
    text_delta: bool = False
    done_item: dict[str, Any] | None = None  # set on response.output_item.done

    def encode(self, sequence_number: int) -> bytes:
        if self.data is None:
            return b"%b%d%b" % (_event_head(self.type), sequence_number, self.tail)
        payload = JSON.encode({"type": self.type, "sequence_number": sequence_number, **self.data})
        return f"event: {self.type}\ndata: {payload}\n\n".encode()


@functools.cache
def _event_head(type_: str) -> bytes:
    return f'event: {type_}\ndata: {{"type":"{type_}","sequence_number":'.encode()


class Deltas:
    """Builds the delta events of one item: ``{...where, "delta": d, ...extra}``."""

    def __init__(self, type_: str, where: dict[str, Any], extra: str = "") -> None:
        self.type = type_
        self._middle = ("," + JSON.encode(where)[1:-1] + ',"delta":').encode()
        self._end = (extra + "}\n\n").encode()
        self._cache: dict[str, bytes] = {}

    def event(self, chunk: str, pause: float) -> Event:
        tail = self._cache.get(chunk)
        if tail is None:
            tail = self._middle + JSON.encode(chunk).encode() + self._end
            if len(self._cache) < 1024:
                self._cache[chunk] = tail
        return Event(
            self.type, tail=tail, pause=pause, text_delta=self.type == "response.output_text.delta"
        )


@dataclass(slots=True)
class ResponseContext:
    response_id: str
    created_at: int
    request: dict[str, Any]

    def response(
        self,
        status: str,
        output: list[dict[str, Any]],
        *,
        usage: dict[str, Any] | None = None,
        error: dict[str, Any] | None = None,
        incomplete_details: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        req = self.request

        def pick(key: str, kind: type | tuple[type, ...], default: Any) -> Any:
            value = req.get(key)
            return value if isinstance(value, kind) else default

        return {
            "id": self.response_id,
            "object": "response",
            "created_at": self.created_at,
            "status": status,
            "background": False,
            "completed_at": int(time.time()) if status == "completed" else None,
            "error": error,
            "incomplete_details": incomplete_details,
            "instructions": pick("instructions", str, None),
            "max_output_tokens": pick("max_output_tokens", int, None),
            "model": pick("model", str, "gpt-fake"),
            "output": output,
            "parallel_tool_calls": pick("parallel_tool_calls", bool, True),
            "previous_response_id": pick("previous_response_id", str, None),
            "reasoning": pick("reasoning", dict, None),
            "store": pick("store", bool, True),
            "temperature": 1.0,
            "text": pick("text", dict, {"format": {"type": "text"}}),
            "tool_choice": pick("tool_choice", (str, dict), "auto"),
            "tools": pick("tools", list, []),
            "top_p": 1.0,
            "truncation": "disabled",
            "usage": usage,
            "user": None,
            "metadata": pick("metadata", dict, {}),
        }


class Ids:
    def __init__(self) -> None:
        self._counters: dict[str, Iterator[int]] = {}

    def next(self, prefix: str) -> str:
        counter = self._counters.setdefault(prefix, itertools.count(1))
        return f"{prefix}_{next(counter)}"


def item_events(reply: Reply, ids: Ids) -> Iterator[Event]:
    """The events of the reply's output items, generated as they are written."""
    pauses = itertools.chain([reply.delay_first], itertools.repeat(-1.0))

    def pause(delay: float) -> float:
        first = next(pauses)
        return first if first >= 0 else delay

    for index, spec in enumerate(reply.output):
        item: dict[str, Any]
        if isinstance(spec, MessageSpec):
            item_id = ids.next("msg")
            where = {"item_id": item_id, "output_index": index, "content_index": 0}
            added: dict[str, Any] = {
                "id": item_id,
                "type": "message",
                "status": "in_progress",
                "content": [],
                "role": "assistant",
            }
            if spec.phase is not None:
                added["phase"] = spec.phase
            part = {"type": "output_text", "annotations": [], "logprobs": [], "text": spec.text}
            item = {**added, "status": "completed", "content": [part]}
            yield Event("response.output_item.added", {"output_index": index, "item": added})
            yield Event("response.content_part.added", {**where, "part": {**part, "text": ""}})
            deltas = Deltas("response.output_text.delta", where, ',"logprobs":[]')
            for chunk in spec.chunks:
                yield deltas.event(chunk, pause(spec.delay))
            yield Event("response.output_text.done", {**where, "text": spec.text, "logprobs": []})
            yield Event("response.content_part.done", {**where, "part": part})
        elif isinstance(spec, ReasoningSpec):
            item_id = ids.next("rs")
            added = {"id": item_id, "type": "reasoning", "summary": []}
            if spec.encrypted_content is not None:
                added["encrypted_content"] = spec.encrypted_content
            yield Event("response.output_item.added", {"output_index": index, "item": added})
            summary: list[dict[str, Any]] = []
            for summary_index, chunks in enumerate(spec.parts):
                text = "".join(chunks)
                where = {"item_id": item_id, "output_index": index, "summary_index": summary_index}
                yield Event(
                    "response.reasoning_summary_part.added",
                    {**where, "part": {"type": "summary_text", "text": ""}},
                )
                deltas = Deltas("response.reasoning_summary_text.delta", where)
                for chunk in chunks:
                    yield deltas.event(chunk, pause(spec.delay))
                yield Event("response.reasoning_summary_text.done", {**where, "text": text})
                summary_part = {"type": "summary_text", "text": text}
                yield Event("response.reasoning_summary_part.done", {**where, "part": summary_part})
                summary.append(summary_part)
            item = {**added, "summary": summary}
        else:
            item_id = ids.next("fc")
            added = {
                "id": item_id,
                "type": "function_call",
                "status": "in_progress",
                "arguments": "",
                "call_id": spec.call_id or ids.next("call"),
                "name": spec.name,
            }
            where = {"item_id": item_id, "output_index": index}
            yield Event("response.output_item.added", {"output_index": index, "item": added})
            deltas = Deltas("response.function_call_arguments.delta", where)
            for chunk in spec.chunks:
                yield deltas.event(chunk, pause(spec.delay))
            yield Event(
                "response.function_call_arguments.done", {**where, "arguments": spec.arguments}
            )
            item = {**added, "status": "completed", "arguments": spec.arguments}
        yield Event(
            "response.output_item.done", {"output_index": index, "item": item}, done_item=item
        )


def response_events(
    reply: Reply, ctx: ResponseContext, ids: Ids, *, terminal: bool
) -> Iterator[Event]:
    """A whole stream: created, in_progress, the items and (if ``terminal``) the end."""
    started = ctx.response("in_progress", [])
    yield Event("response.created", {"response": started})
    yield Event("response.in_progress", {"response": started})
    output: list[dict[str, Any]] = []
    for event in item_events(reply, ids):
        if event.done_item is not None:
            output.append(event.done_item)
        yield event
    if terminal:
        usage = reply.usage_for(ctx.request).to_api()
        if reply.ending == "incomplete":
            details = {"reason": reply.incomplete_reason}
            response = ctx.response("incomplete", output, usage=usage, incomplete_details=details)
            yield Event("response.incomplete", {"response": response})
        else:
            response = ctx.response("completed", output, usage=usage)
            yield Event("response.completed", {"response": response})


def failure_events(ctx: ResponseContext, error: dict[str, Any]) -> Iterator[Event]:
    """A stream that fails before any output, as the real API reports a request it
    refuses only once streaming (e.g. ``context_length_exceeded``): created,
    in_progress, an ``error`` event whose ``error`` object is nested, then
    ``response.failed`` (with ``usage`` null)."""
    started = ctx.response("in_progress", [])
    yield Event("response.created", {"response": started})
    yield Event("response.in_progress", {"response": started})
    yield Event("error", {"error": error})
    failed = {"code": error.get("code"), "message": error.get("message")}
    yield Event("response.failed", {"response": ctx.response("failed", [], error=failed)})


def split_events(data: bytes) -> Iterator[bytes]:
    """``data`` cut after each blank line that ends an SSE event; the pieces
    add up to ``data`` exactly."""
    for match in _RAW_EVENT.finditer(data):
        yield match.group()
