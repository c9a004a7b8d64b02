"""Reading a Responses-API event stream from its raw bytes.

We split the body into SSE lines and parse the ``data:`` payloads ourselves
instead of iterating the SDK's typed events: validating a pydantic model per
event costs ~85 µs, which caps a fast model's stream far below what the editor
can take. ``json.loads`` per event and a dispatch on ``type`` is all we need.

The SSE rules that real servers rely on: lines end with LF, CRLF or CR (and
nothing else: a JSON string may hold U+2028, which ``str.splitlines`` would
split on); an event is every ``data:`` line up to a blank line, joined with
LF; lines starting with ``:`` are comments (OpenRouter's keep-alives); a
``data: [DONE]`` sentinel ends some compatible servers' streams.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from json.decoder import scanstring  # type: ignore[attr-defined]
from typing import Any

import anyio

from agentls.model import failures
from agentls.model.errors import ModelError
from agentls.model.types import (
    CLIENT_CALL_TYPES,
    Item,
    ModelResponse,
    StreamSink,
    Usage,
    message_text,
)

_TEXT_DELTA = "response.output_text.delta"
_TEXT_DELTA_TYPE = '"type":"response.output_text.delta"'
_DELTA_KEY = '"delta":"'
_REASONING_DELTAS = frozenset(
    {"response.reasoning_summary_text.delta", "response.reasoning_text.delta"}
)
# The model writing a call's arguments or input, piece by piece.
_CALL_DELTAS = frozenset(
    {
        "response.function_call_arguments.delta",
        "response.custom_tool_call_input.delta",
        "response.apply_patch_call_operation_diff.delta",
        "response.shell_call_command.delta",
    }
)
# Calls the server runs itself; shown, never answered by us.
HOSTED_CALLS = frozenset({"web_search_call"})
# How often (in characters of arguments) a call being written is reported again.
_PROGRESS_EVERY = 2048
# A line that took longer than this to come had to wait for the network.
_CAUGHT_UP = 0.0002


async def sse_lines(chunks: AsyncIterator[bytes]) -> AsyncIterator[str]:
    """The lines of an SSE body, split where SSE splits them (LF, CRLF, CR)."""
    rest = b""
    async for chunk in chunks:
        if not chunk:
            continue
        data = rest + chunk if rest else chunk
        lines = data.split(b"\n")
        rest = lines.pop()
        for raw in lines:
            if raw.endswith(b"\r"):
                raw = raw[:-1]
            if b"\r" in raw:
                for part in raw.split(b"\r"):
                    yield part.decode("utf-8", errors="replace")
            else:
                yield raw.decode("utf-8", errors="replace")
    if rest:
        for part in rest.split(b"\r"):
            yield part.decode("utf-8", errors="replace")


async def batched(lines: AsyncIterator[str], pause: float) -> AsyncIterator[str]:
    """The same lines, read in batches: each time the reader has caught up with
    the network, it waits ``pause`` before reading on.

    For streams nobody watches (auxiliary jobs): what arrives meanwhile is then
    handled in one go, instead of waking the event loop for every event — a
    fast stream's events come a few milliseconds apart, and 16 of them would
    otherwise delay the stream the user is reading.
    """
    clock = time.perf_counter
    while True:
        asked = clock()
        try:
            line = await anext(lines)
        except StopAsyncIteration:
            return
        caught_up = clock() - asked > _CAUGHT_UP
        yield line
        if caught_up:
            await anyio.sleep(pause)


async def read_response(lines: AsyncIterator[str], sink: StreamSink) -> ModelResponse:
    """Consume one streamed response; return it only if it completed.

    Raises ModelError for anything short of ``response.completed``: an error
    event, a failed or incomplete response, malformed data, or a stream that
    simply ends. The caller decides whether to retry.
    """
    reader = _Reader(sink)
    text_delta = sink.text_delta
    data: list[str] = []
    async for line in lines:
        if line:
            if line.startswith("data:"):
                data.append(line[6:] if line.startswith("data: ") else line[5:])
            continue  # ``event:``, ``id:``, ``retry:``, comments: nothing we need
        # A blank line ends the event.
        if not data:
            continue
        payload = data[0] if len(data) == 1 else "\n".join(data)
        data.clear()
        # Fastest path, for nearly every event of a long answer: decode just the
        # delta string. A quote inside a JSON string is escaped, so an
        # unescaped `"delta":"` can only be that key.
        if _TEXT_DELTA_TYPE in payload[:48]:
            start = payload.find(_DELTA_KEY)
            if start >= 0:
                try:
                    text = scanstring(payload, start + len(_DELTA_KEY))[0]
                except ValueError:
                    pass  # malformed: let json.loads say so below
                else:
                    reader.text_seen = reader.shown = True
                    text_delta(text)
                    continue
        result = reader.event(payload)
        if result is not None:
            return result
    if data:  # a last event without its blank line
        result = reader.event("\n".join(data))
        if result is not None:
            return result
    raise ModelError("stream", "the model's stream ended before the response was complete")


class _Reader:
    """The state of one response being read (everything but the text fast path)."""

    __slots__ = ("calls", "items", "shown", "sink", "text_seen")

    def __init__(self, sink: StreamSink) -> None:
        self.sink = sink
        self.items: list[Item] = []
        # A message's text was streamed since the last message item began.
        self.text_seen = False
        # Some answer text reached the sink in this response.
        self.shown = False
        # Calls being written: output index -> [tool, characters so far, reported at].
        self.calls: dict[object, list[Any]] = {}

    def event(self, payload: str) -> ModelResponse | None:
        if payload.strip() == "[DONE]":
            return None
        try:
            event: dict[str, Any] = json.loads(payload)
            kind = event["type"]
        except (ValueError, KeyError, TypeError) as exc:
            raise ModelError(
                "stream", f"the model sent malformed data in its stream: {payload[:120]!r}"
            ) from exc
        sink = self.sink
        if kind == _TEXT_DELTA or kind == "response.refusal.delta":
            self.text_seen = self.shown = True
            sink.text_delta(str(event.get("delta") or ""))
        elif kind in _REASONING_DELTAS:
            sink.reasoning_delta(str(event.get("delta") or ""))
        elif kind == "response.reasoning_summary_part.added" and event.get("summary_index", 0):
            sink.reasoning_delta("\n\n")
        elif kind in _CALL_DELTAS:
            self._call_delta(event)
        elif kind == "response.output_item.added":
            self._item_added(event.get("item"), event.get("output_index"))
        elif kind == "response.output_item.done":
            self._item_done(event.get("item"))
        elif kind == "response.completed":
            return self._completed(event.get("response") or {})
        elif kind == "response.failed":
            error = (event.get("response") or {}).get("error") or {}
            raise _error(error, "the response failed")
        elif kind == "response.incomplete":
            details = (event.get("response") or {}).get("incomplete_details") or {}
            raise failures.incomplete(details.get("reason"))
        elif kind == "error":
            # OpenAI nests the details (``{"error": {"code", "message"}}``);
            # some servers put them on the event itself.
            nested = event.get("error")
            details = nested if isinstance(nested, dict) else event
            raise _error(details, "the model reported an error")
        return None

    def _item_added(self, item: object, index: object) -> None:
        if not isinstance(item, dict):
            return
        kind = item.get("type")
        if kind == "message":
            self.text_seen = False
        elif kind in CLIENT_CALL_TYPES or kind in HOSTED_CALLS:
            tool = str(item.get("name") or kind)
            self.calls[index] = [tool, 0, 0]
            self.sink.call_progress(tool, 0)

    def _call_delta(self, event: dict[str, Any]) -> None:
        call = self.calls.get(event.get("output_index"))
        if call is None:
            return
        call[1] += len(str(event.get("delta") or ""))
        if call[1] - call[2] >= _PROGRESS_EVERY:
            call[2] = call[1]
            self.sink.call_progress(call[0], call[1])

    def _item_done(self, item: object) -> None:
        if not isinstance(item, dict):
            return
        self.items.append(item)
        kind = item.get("type")
        if kind == "message":
            if not self.text_seen:
                # An answer that came whole, with no deltas (some servers send
                # only ``output_item.done``): the user still reads it.
                self._show(item)
            self.text_seen = False
        elif kind in HOSTED_CALLS:
            self.sink.hosted_call(item)

    def _show(self, item: Item) -> None:
        text = message_text(item)
        if text:
            self.shown = True
            self.sink.text_delta(text)

    def _completed(self, response: dict[str, Any]) -> ModelResponse:
        items = self.items
        if not items:
            items = [item for item in response.get("output") or () if isinstance(item, dict)]
            if not self.shown:
                for item in items:
                    self._show(item)
        return ModelResponse(
            items=items,
            usage=Usage.from_api(response.get("usage")),
            response_id=response.get("id"),
        )


def _error(error: dict[str, Any], fallback: str) -> ModelError:
    code = error.get("code") or error.get("type")
    message = error.get("message") or fallback
    known = failures.classify(code, message, error.get("param"))
    if known is None and error.get("type") not in (None, code):
        # A code we do not know, of a type we may (``rate_limit_error``…).
        known = failures.classify(error.get("type"), message, error.get("param"))
    if known is not None:
        return known
    described = f"{message} ({code})" if code else str(message)
    # Unknown in-stream errors are most often transient server trouble.
    return ModelError("server", described)
