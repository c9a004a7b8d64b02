"""The wire schema (``server/agentls/schema/protocol.json``) is the one
description of the protocol: the Python and Lua types generated from it are
fresh (``make schema-check`` does the same for TypeScript, which needs Node),
it is a valid JSON Schema, and the server's tables are the schema's."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import jsonschema
import pytest

from agentls.protocol import errors, methods
from agentls.schema import generate, names
from agentls.schema.generate import NAMES_PY, WIRE_LUA, WIRE_PY

from .support import WAIT

SCHEMA = generate.load()
CACHE = Path(os.environ.get("AGENTLS_E2E_CACHE", Path.home() / ".cache" / "agentls-e2e"))
NVIM = CACHE / "nvim-0.11" / "bin" / "nvim"


@pytest.mark.parametrize("path", [NAMES_PY, WIRE_PY, WIRE_LUA], ids=lambda p: p.name)
def test_the_generated_files_are_what_the_schema_makes(path: Path) -> None:
    made = generate.outputs(SCHEMA, json2ts=None)[path]
    assert path.read_text() == made, f"{path.name} is stale: run `make schema`"
    assert "generated — do not edit" in made.splitlines()[0]


def test_a_stale_file_fails_the_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stale = tmp_path / "wire.lua"
    stale.write_text(WIRE_LUA.read_text() + "-- edited by hand\n")
    monkeypatch.setattr(generate, "WIRE_LUA", stale)
    monkeypatch.setattr(generate, "REPO", tmp_path)
    assert generate.main(["--check"]) == 1


def test_the_schema_is_a_json_schema_and_every_reference_resolves() -> None:
    jsonschema.Draft7Validator.check_schema(SCHEMA)
    defs = SCHEMA["definitions"]
    for name in defs:
        for target in generate.refs(defs[name]):
            assert target in defs, f"{name} names {target}, which is not defined"
    for method in SCHEMA["x-methods"]:
        for part in ("params", "result"):
            if method.get(part):
                assert method[part] in defs, f"{method['name']}: {method[part]}"
    for kind, name in SCHEMA["x-events"].items():
        assert defs[name]["properties"]["kind"]["enum"] == [kind]


def test_the_server_tables_are_the_schema_s() -> None:
    assert SCHEMA["x-protocolVersion"] == methods.PROTOCOL_VERSION
    assert [m.name for m in methods.METHODS] == [m["name"] for m in SCHEMA["x-methods"]]
    assert list(methods.EVENT_KINDS) == list(SCHEMA["x-events"])
    assert set(errors.CODES) == {k for e in SCHEMA["x-errors"] for k in e["kinds"]}
    assert {e["code"]: e["name"] for e in SCHEMA["x-errors"]} == names.NAMES


def test_lua_loads_and_carries_the_schema_s_names() -> None:
    if not NVIM.exists():
        pytest.fail(f"{NVIM} is missing: run `make nvim-tools`")
    lua_path = json.dumps(str(WIRE_LUA.parent.parent) + "/?.lua")
    script = (
        f"package.path = {lua_path} .. ';' .. package.path\n"
        "local wire = require('agentls.wire')\n"
        "io.write(vim.json.encode({methods = wire.methods, errors = wire.errors,"
        " kinds = wire.event_kinds, version = wire.PROTOCOL_VERSION}))\n"
    )
    done = subprocess.run(
        [str(NVIM), "--clean", "-l", "-"],
        input=script,
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=True,
    )
    loaded = json.loads(done.stdout)
    assert sorted(loaded["methods"].values()) == sorted(m["name"] for m in SCHEMA["x-methods"])
    assert loaded["errors"] == {e["name"]: e["code"] for e in SCHEMA["x-errors"]}
    assert loaded["kinds"] == list(SCHEMA["x-events"])
    assert loaded["version"] == SCHEMA["x-protocolVersion"]
