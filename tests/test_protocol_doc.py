"""docs/protocol.md and the code must not drift: everything the server knows
is documented there."""

from __future__ import annotations

import re
from pathlib import Path

import attrs
import pytest

from agentls.protocol import catalog, errors, methods
from agentls.protocol.converter import camel
from agentls.protocol.options import InitializationOptions

DOC = (Path(__file__).resolve().parents[1] / "docs" / "protocol.md").read_text()


def section(name: str) -> str:
    """The text of the ``### name`` section."""
    match = re.search(rf"^### {re.escape(name)}\n(.*?)(?=^##)", DOC, re.S | re.M)
    assert match, f"docs/protocol.md has no section for {name}"
    return match.group(1)


@pytest.mark.parametrize("method", catalog.METHODS, ids=lambda m: m.name)
def test_every_method_and_param_is_documented(method: catalog.Method) -> None:
    text = section(method.name)
    if method.params is not None:
        for field in attrs.fields(method.params):
            assert f"{camel(field.name)}" in text, f"{method.name}: param {camel(field.name)}"


@pytest.mark.parametrize("kind", methods.EVENT_KINDS)
def test_every_event_kind_is_documented(kind: str) -> None:
    assert f"| `{kind}` |" in section("agent/event")


@pytest.mark.parametrize("code", sorted(errors.ERROR_NAMES))
def test_every_error_code_is_documented(code: int) -> None:
    assert f"| {code} | {errors.ERROR_NAMES[code]} |" in DOC


def test_every_initialization_option_is_documented() -> None:
    for field in attrs.fields(InitializationOptions):
        assert f"| `{camel(field.name)}` |" in DOC, camel(field.name)


def test_the_catalog_lists_every_request_the_server_serves() -> None:
    served = tuple(m.name for m in catalog.METHODS if m.direction == "client→server")
    assert served == methods.CLIENT_REQUESTS


def test_the_capabilities_example_matches() -> None:
    capabilities = methods.capabilities()
    names = capabilities["methods"]
    assert isinstance(names, list)
    for name in names:
        assert f'"{name}"' in DOC
    assert '"protocolVersion": 2' in DOC and '"maxForks": 1' in DOC
