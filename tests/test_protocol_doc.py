"""docs/protocol.md and the code must not drift: everything the server knows
is documented there."""

from __future__ import annotations

import re
from pathlib import Path

import attrs
import pytest

from agentls.protocol import errors, methods
from agentls.protocol.converter import camel
from agentls.protocol.options import InitializationOptions

DOC = (Path(__file__).resolve().parents[1] / "docs" / "protocol.md").read_text()


def section(name: str) -> str:
    """The text of the ``### name`` section."""
    match = re.search(rf"^### {re.escape(name)}\n(.*?)(?=^##)", DOC, re.S | re.M)
    assert match, f"docs/protocol.md has no section for {name}"
    return match.group(1)


@pytest.mark.parametrize("method", methods.METHODS, ids=lambda m: m.name)
def test_every_method_and_param_is_documented(method: methods.Method) -> None:
    text = section(method.name)
    if method.params is not None:
        for field in attrs.fields(methods.params_type(method.name)):
            assert f"{camel(field.name)}" in text, f"{method.name}: param {camel(field.name)}"


@pytest.mark.parametrize("kind", methods.EVENT_KINDS)
def test_every_event_kind_is_documented(kind: str) -> None:
    assert f"| `{kind}` |" in section("agent/event")


@pytest.mark.parametrize("code", sorted(errors.NAMES))
def test_every_error_code_is_documented(code: int) -> None:
    assert f"| {code} | {errors.NAMES[code]} |" in DOC


def test_every_initialization_option_is_documented() -> None:
    for field in attrs.fields(InitializationOptions):
        assert f"| `{camel(field.name)}` |" in DOC, camel(field.name)


def test_every_request_in_the_table_has_a_handler_and_no_other() -> None:
    from agentls.server.handlers import HANDLERS

    assert set(HANDLERS) == set(methods.CLIENT_REQUESTS)


def test_the_capabilities_example_matches() -> None:
    capabilities = methods.capabilities()
    names = capabilities["methods"]
    assert isinstance(names, list)
    for name in names:
        assert f'"{name}"' in DOC
    assert '"protocolVersion": 2' in DOC and '"maxForks": 1' in DOC
