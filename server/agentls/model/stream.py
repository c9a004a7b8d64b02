"""Reading a Responses-API event stream from its raw SSE lines.

We parse the ``data:`` lines ourselves instead of iterating the SDK's typed
events: validating a pydantic model per event costs ~85 µs, which caps a fast
model's stream far below what the editor can take. ``json.loads`` per line and
a dispatch on ``type`` is all we need, and nothing else of the SDK changes.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from json.decoder import scanstring  # type: ignore[attr-defined]
from typing import Any

import anyio

from agentls.model.errors import ModelError
from agentls.model.types import Item, ModelResponse, StreamSink, Usage

_TEXT_DELTA = "response.output_text.delta"
_TEXT_DELTA_TYPE = '"type":"response.output_text.delta"'
_DELTA_KEY = '"delta":"'
_REASONING_DELTAS = frozenset(
    {"response.reasoning_summary_text.delta", "response.reasoning_text.delta"}
)
# A line that took longer than this to come had to wait for the network.
_CAUGHT_UP = 0.0002


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
    items: list[Item] = []
    loads = json.loads
    text_delta = sink.text_delta
    async for line in lines:
        # Fast path first: text deltas are nearly every line of a long answer.
        if not line.startswith("data:"):
            continue
        payload = line[5:]
        # Fastest path, for nearly every line of a long answer: decode just the
        # delta string. A quote inside a JSON string is escaped, so an
        # unescaped `"delta":"` can only be that key.
        if _TEXT_DELTA_TYPE in payload[:48]:
            start = payload.find(_DELTA_KEY)
            if start >= 0:
                try:
                    text_delta(scanstring(payload, start + len(_DELTA_KEY))[0])
                    continue
                except ValueError:
                    pass  # malformed: let json.loads say so below
        try:
            event: dict[str, Any] = loads(payload)
            kind = event["type"]
        except (ValueError, KeyError, TypeError) as exc:
            raise ModelError(
                "stream", f"the model sent malformed data in its stream: {payload[:120]!r}"
            ) from exc
        if kind == _TEXT_DELTA:
            text_delta(event.get("delta", ""))
        elif kind in _REASONING_DELTAS:
            sink.reasoning_delta(event.get("delta", ""))
        elif kind == "response.reasoning_summary_part.added" and event.get("summary_index", 0):
            sink.reasoning_delta("\n\n")
        elif kind == "response.output_item.done":
            item = event.get("item")
            if isinstance(item, dict):
                items.append(item)
        elif kind == "response.completed":
            response = event.get("response") or {}
            if not items:
                items = list(response.get("output") or ())
            return ModelResponse(
                items=items,
                usage=Usage.from_api(response.get("usage")),
                response_id=response.get("id"),
            )
        elif kind == "response.failed":
            error = (event.get("response") or {}).get("error") or {}
            raise _stream_error(error.get("code"), error.get("message"), "the response failed")
        elif kind == "response.incomplete":
            details = (event.get("response") or {}).get("incomplete_details") or {}
            reason = details.get("reason") or "unknown reason"
            raise ModelError("invalid_request", f"the model stopped early ({reason})")
        elif kind == "error":
            raise _stream_error(
                event.get("code"), event.get("message"), "the model reported an error"
            )
    raise ModelError("stream", "the model's stream ended before the response was complete")


def _stream_error(code: object, message: object, fallback: str) -> ModelError:
    text = str(message) if message else fallback
    code_text = str(code or "")
    if code_text:
        text = f"{text} ({code_text})"
    lowered = code_text.lower()
    if "rate_limit" in lowered or "rate limit" in text.lower():
        return ModelError("rate_limit", text)
    if lowered in {"server_error", "internal_error", "server_is_overloaded", "overloaded"}:
        return ModelError("server", text)
    if lowered in {"invalid_api_key", "unauthorized", "authentication_error"}:
        return ModelError("auth", text)
    if lowered in {"context_length_exceeded", "invalid_prompt", "invalid_request_error"}:
        return ModelError("invalid_request", text)
    # Unknown in-stream errors are most often transient server trouble.
    return ModelError("server", text)
