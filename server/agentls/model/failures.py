"""What an error the model server names means for us: one classification for
the errors it answers a request with (HTTP) and the ones it reports inside a
stream (an ``error`` event, ``response.failed``).

Decided by the error's ``code`` (and ``param``), never by its wording, except
for one thing the API says only in words: that a request is larger than the
rate limit could ever allow ("Limit 30000, Requested 35364").
"""

from __future__ import annotations

import re

from agentls.model.errors import ModelError

BILLING_URL = "https://platform.openai.com/settings/organization/billing"

_QUOTA_CODES = frozenset({"insufficient_quota", "billing_hard_limit_reached", "billing_not_active"})
_SERVER_CODES = frozenset(
    {"server_error", "internal_error", "server_is_overloaded", "overloaded", "service_unavailable"}
)
_AUTH_CODES = frozenset({"invalid_api_key", "unauthorized", "authentication_error"})
# The server does not take a parameter we sent: ``param`` names it.
_UNSUPPORTED_CODES = frozenset({"unsupported_value", "unsupported_parameter", "unknown_parameter"})
_LIMIT = re.compile(r"Limit:? ?(\d+), Requested:? ?(\d+)")


def classify(code: object, message: object, param: object = None) -> ModelError | None:
    """The ModelError an error with this ``code`` is, or None when the code
    alone does not say (the caller then decides by the HTTP status)."""
    code_text = str(code or "").lower()
    text = str(message or "") or "the model reported an error"
    param_text = str(param) if isinstance(param, str) and param else None
    described = f"{text} ({code_text})" if code_text else text
    if code_text in _QUOTA_CODES:
        return ModelError(
            "quota",
            f"{described}. Your account has no quota left for this request: add credit or "
            f"raise your spending limit at {BILLING_URL}, then try again.",
        )
    if code_text == "context_length_exceeded":
        return ModelError("context_length", described, param=param_text)
    if "rate_limit" in code_text or "tokens_exceeded" in code_text:
        return rate_limited(described, text)
    if code_text in _UNSUPPORTED_CODES and param_text:
        return ModelError("unsupported", described, param=param_text)
    if code_text in _SERVER_CODES:
        return ModelError("server", described)
    if code_text in _AUTH_CODES:
        return ModelError("auth", described)
    if code_text in {"invalid_prompt", "invalid_request_error"}:
        return ModelError("invalid_request", described)
    return None


def rate_limited(described: str, text: str, retry_after: float | None = None) -> ModelError:
    """A rate limit: retried with backoff — unless the request alone is larger
    than the limit, which no wait can fix."""
    match = _LIMIT.search(text)
    if match is not None and int(match.group(2)) > int(match.group(1)):
        return ModelError(
            "too_large",
            f"{described}. This one request is larger than your rate limit allows, so "
            "waiting cannot help: compact the conversation (agent/compact), use a model "
            "with a higher limit, or raise your usage tier.",
        )
    return ModelError("rate_limit", described, retry_after=retry_after)


def incomplete(reason: object) -> ModelError:
    """``response.incomplete``: the model stopped before it was done."""
    why = str(reason or "unknown reason")
    explained = {
        "max_output_tokens": "its answer reached the output token limit",
        "content_filter": "the server's content filter stopped it",
    }.get(why)
    detail = f"{explained} ({why})" if explained else why
    return ModelError("incomplete", f"the model stopped early: {detail}")
