"""Strict mode: refusing the requests the real Responses API refuses, in its words.

Each check returns a :class:`Refusal` (or None). The wording, ``param`` and
``code`` are the real API's where they could be verified from its answers
quoted in public bug reports; the rest follow the same pattern (marked below).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .tokens import estimate_input_tokens

# The parameters of ``client.responses.create`` in the openai SDK (its
# ``ResponseCreateParamsStreaming``, plus ``stream``). The real API answers any
# other top-level key with 400 ``unknown_parameter``. A test compares this set
# with the installed SDK's, so an SDK upgrade that adds one is noticed.
RESPONSES_CREATE_PARAMS = frozenset(
    {
        "access_programs",
        "background",
        "background_options",
        "context_management",
        "conversation",
        "image",
        "include",
        "input",
        "instructions",
        "max_output_tokens",
        "max_tool_calls",
        "metadata",
        "model",
        "moderation",
        "parallel_tool_calls",
        "previous_response_id",
        "prompt",
        "prompt_cache_key",
        "prompt_cache_options",
        "prompt_cache_retention",
        "reasoning",
        "safety_identifier",
        "service_tier",
        "store",
        "stream",
        "stream_options",
        "temperature",
        "text",
        "tool_choice",
        "tools",
        "top_logprobs",
        "top_p",
        "truncation",
        "user",
    }
)

# Client-side call item types, the output type that answers each, and the words
# the real API uses for them. Verified: "function call", "custom tool call",
# "shell call" (no output); "function call output" (no call). The others follow
# that pattern. Hosted calls (web_search_call, code_interpreter_call, mcp_call,
# ...) run on OpenAI's side and need no output.
CALL_OUTPUTS: dict[str, tuple[str, str]] = {
    "function_call": ("function_call_output", "function call"),
    "custom_tool_call": ("custom_tool_call_output", "custom tool call"),
    "shell_call": ("shell_call_output", "shell call"),
    "local_shell_call": ("local_shell_call_output", "local shell call"),
    "apply_patch_call": ("apply_patch_call_output", "apply patch call"),
}
_OUTPUT_OF = {output: (call, words) for call, (output, words) in CALL_OUTPUTS.items()}

CONTEXT_LENGTH_EXCEEDED = (
    "Your input exceeds the context window of this model. Please adjust your input and try again."
)


@dataclass(frozen=True, slots=True)
class Refusal:
    """An error the real API answers a request with, instead of a response.

    ``in_stream``: a streamed request gets it the way the real API reports it
    once the stream has begun -- ``200``, ``response.created``,
    ``response.in_progress``, an ``error`` event with this error nested, then
    ``response.failed`` -- rather than as an HTTP error before any event.
    """

    status: int
    message: str
    param: str | None
    code: str | None
    type: str = "invalid_request_error"
    in_stream: bool = False

    def error(self) -> dict[str, Any]:
        """The ``error`` object, in OpenAI's shape."""
        return {"message": self.message, "type": self.type, "param": self.param, "code": self.code}


def _call_id(item: Mapping[str, Any]) -> str | None:
    """The call id an item carries. A ``local_shell_call_output`` names its call
    by ``id`` (it has no ``call_id`` field in the API's schema)."""
    value = item.get("call_id")
    if value is None and item.get("type") == "local_shell_call_output":
        value = item.get("id")
    return value if isinstance(value, str) else None


def unknown_parameter(body: Mapping[str, Any]) -> Refusal | None:
    for key in body:
        if key not in RESPONSES_CREATE_PARAMS:
            return Refusal(400, f"Unknown parameter: '{key}'.", key, "unknown_parameter")
    return None


def stored_item_id(body: Mapping[str, Any]) -> Refusal | None:
    """An input item with an ``id`` while ``store`` is false: the real API looks
    the id up among stored items, finds nothing, and says so (404)."""
    items = body.get("input")
    if body.get("store") is not False or not isinstance(items, list):
        return None
    for item in items:
        if not isinstance(item, Mapping) or item.get("type") == "local_shell_call_output":
            continue
        item_id = item.get("id")
        if isinstance(item_id, str):
            return Refusal(
                404,
                f"Item with id '{item_id}' not found. Items are not persisted when `store` is "
                "set to false. Try again with `store` set to true, or remove this item from "
                "your input.",
                "input",
                None,
            )
    return None


def unpaired_call(body: Mapping[str, Any]) -> Refusal | None:
    """The first client-side call in ``input`` without its output, or output
    without its call (matched by call id, wherever each stands in ``input``).

    With ``previous_response_id`` or ``conversation`` the call an output
    answers may be stored on OpenAI's side, so only unanswered calls count.
    """
    value = body.get("input")
    items = [item for item in value if isinstance(item, Mapping)] if isinstance(value, list) else []
    calls = {(item.get("type"), _call_id(item)) for item in items}
    stored_elsewhere = body.get("previous_response_id") is not None or (
        body.get("conversation") is not None
    )
    for item in items:
        kind = item.get("type")
        call_id = _call_id(item)
        if kind in CALL_OUTPUTS:
            output, words = CALL_OUTPUTS[kind]
            if (output, call_id) not in calls:
                return Refusal(400, f"No tool output found for {words} {call_id}.", "input", None)
        elif kind in _OUTPUT_OF and not stored_elsewhere:
            call, words = _OUTPUT_OF[kind]
            if (call, call_id) not in calls:
                return Refusal(
                    400,
                    f"No tool call found for {words} output with call_id {call_id}.",
                    "input",
                    None,
                )
    return None


def context_overflow(body: Mapping[str, Any], context_window: int) -> Refusal | None:
    if estimate_input_tokens(body) <= context_window:
        return None
    return Refusal(400, CONTEXT_LENGTH_EXCEEDED, "input", "context_length_exceeded", in_stream=True)


def check_request(
    body: Mapping[str, Any],
    *,
    strict: bool,
    context_window: int | None,
    reject_stored_item_ids: bool,
) -> Refusal | None:
    """The refusal the real API would answer ``body`` with, or None.

    One refusal at a time, checked in this order (the real API's own order is
    not documented): the request's parameters, the stored items it refers to,
    its tool calls, its size.
    """
    refusal = None
    if strict:
        refusal = unknown_parameter(body)
    if refusal is None and reject_stored_item_ids:
        refusal = stored_item_id(body)
    if refusal is None and strict:
        refusal = unpaired_call(body)
    if refusal is None and context_window is not None:
        refusal = context_overflow(body, context_window)
    return refusal
