"""``GET /v1/models``: the list of models, as OpenAI's API answers it.

Clients call it to see that a base URL and a key work (Neovim's
``:checkhealth agentls`` does) before any prompt. Like the real API, a
request without a bearer token gets ``401`` and OpenAI's message for it;
any token is accepted (the fake has no accounts).
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from .http import error_body

MODELS_PATHS = frozenset({"/v1/models", "/models"})

# What the list holds: OpenAI models the server knows, and the name the
# test suite configures.
LISTED_MODELS = ("gpt-5.1-codex", "gpt-5.1", "gpt-5-mini", "test-model")

# Created at: a fixed time, so answers are the same from run to run.
_CREATED = 1_700_000_000

NO_KEY = (
    "You didn't provide an API key. You need to provide your API key in an Authorization "
    "header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password "
    "field (with blank username) if you're accessing the API from your browser and are "
    "prompted for a username. You can obtain an API key from "
    "https://platform.openai.com/account/api-keys."
)


def models_answer(headers: Mapping[str, str]) -> tuple[int, bytes]:
    """The status and JSON body of ``GET /v1/models`` with these (lower-case) headers."""
    scheme, _, token = headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return 401, error_body(NO_KEY, "invalid_request_error", None)
    data = [
        {"id": model, "object": "model", "created": _CREATED, "owned_by": "system"}
        for model in LISTED_MODELS
    ]
    return 200, json.dumps({"object": "list", "data": data}, indent=2).encode()
