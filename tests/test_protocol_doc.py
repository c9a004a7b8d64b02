"""docs/protocol.md and the wire schema must not drift: every method, its
params and result fields, every event kind and its fields, and every error
code are as the schema (``server/agentls/schema/protocol.json``) says."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import attrs
import pytest

from agentls.protocol import methods
from agentls.protocol.converter import camel
from agentls.protocol.options import InitializationOptions
from agentls.schema import generate

DOC = (Path(__file__).resolve().parents[1] / "docs" / "protocol.md").read_text()
SCHEMA = generate.load()
DEFS: dict[str, Any] = SCHEMA["definitions"]
METHODS = {m["name"]: m for m in SCHEMA["x-methods"]}
# Fields every agent/event has; the table documents the rest.
EVENT_BASE = {"pane", "turnId", "seq", "kind"}


def section(name: str) -> str:
    """The text of the ``### name`` section."""
    match = re.search(rf"^### {re.escape(name)}\n(.*?)(?=^##)", DOC, re.S | re.M)
    assert match, f"docs/protocol.md has no section for {name}"
    return match.group(1)


def split_top(text: str) -> list[str]:
    """``text`` split at the commas outside brackets, braces and parentheses."""
    parts, depth, current = [], 0, ""
    for char in text:
        if char in "{[(":
            depth += 1
        elif char in "}])":
            depth -= 1
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    return [*parts, current]


def inline_fields(span: str) -> dict[str, bool]:
    """``{a?: T, b: T}`` → {"a": optional, "b": required}."""
    body = span.strip()
    assert body.startswith("{") and body.endswith("}"), span
    fields: dict[str, bool] = {}
    for part in split_top(body[1:-1]):
        match = re.match(r"\s*([A-Za-z]+)(\?)?", part)
        if match:
            fields[match.group(1)] = bool(match.group(2))
    return fields


def named_fields(text: str) -> dict[str, bool]:
    """The field names in ``text``'s backtick spans, as a row of a table
    names them (``name``, ``name?``, ``a, b: T``), with whether they are
    marked optional. Values (``"auto"``), types (``Usage``) are left out."""
    fields: dict[str, bool] = {}
    for span in re.findall(r"`([^`]*)`", text):
        for part in split_top(span):
            match = re.fullmatch(r"\s*([a-z][A-Za-z]*)(\?)?\s*(?::.*)?", part, re.S)
            if match:
                fields[match.group(1)] = fields.get(match.group(1), False) or bool(match.group(2))
    return fields


def schema_fields(name: str) -> dict[str, bool]:
    node = DEFS[name]
    required = set(node.get("required", []))
    return {prop: prop not in required for prop in node.get("properties", {})}


def table_rows(text: str) -> list[tuple[str, str]]:
    """The rows (first cell, the rest) of the first markdown table in ``text``."""
    rows = []
    started = False
    for line in text.splitlines():
        if line.startswith("|"):
            started = True
            cells = [cell.strip() for cell in line.strip().strip("|").split(" | ", 1)]
            if not set(cells[0]) <= {"-", " ", "|"} and cells[0] not in ("field", "kind"):
                rows.append((cells[0], cells[1] if len(cells) > 1 else ""))
        elif started:
            break
    return rows


@pytest.mark.parametrize("name", list(METHODS))
def test_every_method_has_a_section(name: str) -> None:
    section(name)


def test_every_agent_method_documented_is_in_the_schema() -> None:
    documented = set(re.findall(r"^### (agent/\w+)$", DOC, re.M))
    assert documented <= set(METHODS), documented - set(METHODS)


REQUESTS = [m for m in METHODS.values() if m["kind"] == "request"]


@pytest.mark.parametrize("method", REQUESTS, ids=lambda m: m["name"])
def test_params_as_documented(method: dict[str, Any]) -> None:
    text = section(method["name"])
    expected = schema_fields(method["params"])
    inline = re.search(r"Params:\s*`(\{[^`]*\})`", text)
    if inline is not None:
        assert inline_fields(inline.group(1)) == expected, method["name"]
        return
    # A table of the params (agent/requestApproval).
    after = text[text.index("Params:") :]
    documented: dict[str, bool] = {}
    for cell, _ in table_rows(after):
        documented.update(named_fields(cell))
    assert documented == expected, method["name"]


@pytest.mark.parametrize("method", REQUESTS, ids=lambda m: m["name"])
def test_result_as_documented(method: dict[str, Any]) -> None:
    text = section(method["name"])
    match = re.search(r"Result[^`]*?`([^`]*)`", text, re.S)
    assert match, f"{method['name']}: no Result"
    span = match.group(1)
    if span.startswith("{"):
        assert inline_fields(span) == schema_fields(method["result"]), method["name"]
        return
    # A named type (TurnResult, McpServer): its table lists its fields.
    assert span == method["result"], f"{method['name']}: result {span}, schema {method['result']}"
    where = re.search(rf"`{span}`[^\n]*:\n\n(\|.*?)\n\n", DOC, re.S)
    assert where, f"no table of {span}"
    documented: dict[str, bool] = {}
    for cell, _ in table_rows(where.group(1)):
        documented.update(named_fields(cell))
    assert set(documented) == set(schema_fields(span)), span


@pytest.mark.parametrize("kind", list(SCHEMA["x-events"]))
def test_every_event_kind_and_its_fields_are_documented(kind: str) -> None:
    rows = dict(table_rows(section("agent/event")))
    cell = rows.get(f"`{kind}`")
    assert cell is not None, f"agent/event: no row for {kind}"
    documented = named_fields(cell.split(" — ", 1)[0])
    expected = {k: v for k, v in schema_fields(SCHEMA["x-events"][kind]).items()}
    for base in EVENT_BASE:
        expected.pop(base)
    assert set(documented) == set(expected), kind
    marked = {name for name, optional in documented.items() if optional}
    assert all(expected[name] for name in marked), f"{kind}: documented optional: {marked}"


def test_no_event_kind_is_documented_that_the_schema_lacks() -> None:
    rows = table_rows(section("agent/event"))
    kinds = {cell.strip("` ") for cell, _ in rows}
    assert kinds == set(SCHEMA["x-events"])


def test_the_error_table_is_the_schema_s() -> None:
    rows = re.findall(r"^\| (-\d+) \| (\w+) \|", DOC, re.M)
    assert {int(code): name for code, name in rows} == {
        e["code"]: e["name"] for e in SCHEMA["x-errors"]
    }


def test_every_initialization_option_is_documented() -> None:
    for field in attrs.fields(InitializationOptions):
        assert f"| `{camel(field.name)}` |" in DOC, camel(field.name)


def test_every_request_in_the_table_has_a_handler_and_no_other() -> None:
    from agentls.lsp.handlers import HANDLERS

    assert set(HANDLERS) == set(methods.CLIENT_REQUESTS)


def test_the_capabilities_example_matches() -> None:
    capabilities = methods.capabilities()
    names = capabilities["methods"]
    assert isinstance(names, list)
    for name in names:
        assert f'"{name}"' in DOC
    version = SCHEMA["x-protocolVersion"]
    assert f'"protocolVersion": {version}' in DOC and '"maxForks": 1' in DOC
