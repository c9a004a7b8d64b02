"""What the server sends, checked against the wire schema: every
``agent/event`` and every ``agent/*`` result the test clients receive must be
what ``server/agentls/schema/protocol.json`` says — no field missing, none
extra (the check is stricter than the schema, which lets clients ignore
unknown fields)."""

from __future__ import annotations

import copy
import functools
from typing import Any

import jsonschema

from agentls.schema import generate

_SCHEMA = generate.load()


def _strict(node: Any) -> Any:
    if isinstance(node, dict):
        node = {key: _strict(value) for key, value in node.items()}
        if node.get("type") == "object" and "properties" in node:
            node.setdefault("additionalProperties", False)
    elif isinstance(node, list):
        node = [_strict(value) for value in node]
    return node


_STRICT = _strict(copy.deepcopy(_SCHEMA["definitions"]))
_RESULTS = {m["name"]: m.get("result") for m in _SCHEMA["x-methods"] if m["from"] == "client"}


@functools.cache
def _validator(name: str) -> jsonschema.Draft7Validator:
    return jsonschema.Draft7Validator({"definitions": _STRICT, "$ref": f"#/definitions/{name}"})


def _problems(name: str, instance: Any) -> list[str]:
    return [
        f"{name}: {'/'.join(map(str, error.absolute_path)) or '(top)'}: {error.message}"
        for error in _validator(name).iter_errors(instance)
    ]


def event_problems(params: Any) -> list[str]:
    """What is wrong with one ``agent/event`` params (nothing: [])."""
    kind = params.get("kind") if isinstance(params, dict) else None
    name = _SCHEMA["x-events"].get(kind)
    if name is None:
        return [f"agent/event: unknown kind {kind!r}"]
    return _problems(name, params)


def result_problems(method: str, result: Any) -> list[str]:
    """What is wrong with the result of a client request ([] for other methods)."""
    name = _RESULTS.get(method)
    return _problems(name, result) if name else []
