"""``make schema``: the wire schema (``protocol.json``) → the types of every
language that speaks it.

- ``agentls/schema/names.py``: the method table, event kinds, error codes and
  the wire's literal types (light: start-up and every layer use them);
- ``agentls/schema/wire.py``: the params the server parses (attrs classes,
  snake_case, parsed strictly by ``protocol.converter``) and the results and
  events it sends (TypedDicts, camelCase as on the wire);
- ``editors/neovim/lua/agentls/wire.lua``: LuaCATS ``---@class`` annotations
  (read by lua-language-server), and the method names and error codes;
- ``editors/vscode/src/wire.ts``: TypeScript, by json-schema-to-typescript
  (``--json2ts``), and the method names and error codes.

``--check`` writes nothing and fails (exit 1) naming every generated file that
is not what the schema makes. Python and Lua are generated here; TypeScript
only when ``--json2ts`` names the generator (the Makefile does).
"""

from __future__ import annotations

import argparse
import json
import keyword
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

SCHEMA = Path(__file__).with_name("protocol.json")
REPO = Path(__file__).resolve().parents[3]
NAMES_PY = Path(__file__).with_name("names.py")
WIRE_PY = Path(__file__).with_name("wire.py")
WIRE_LUA = REPO / "editors" / "neovim" / "lua" / "agentls" / "wire.lua"
WIRE_TS = REPO / "editors" / "vscode" / "src" / "wire.ts"

HEADER = "generated — do not edit: made from server/agentls/schema/protocol.json by `make schema`"

Schema = dict[str, Any]


def load(path: Path = SCHEMA) -> Schema:
    schema: Schema = json.loads(path.read_text(encoding="utf-8"))
    return schema


def definitions(schema: Schema) -> dict[str, Schema]:
    defs: dict[str, Schema] = schema["definitions"]
    return defs


def ref_name(node: Schema) -> str | None:
    ref = node.get("$ref")
    return ref.rsplit("/", 1)[-1] if isinstance(ref, str) else None


def snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def constant(method: str) -> str:
    """``agent/closePane`` → ``CLOSE_PANE``."""
    return snake(method.split("/", 1)[1]).upper()


def is_enum(node: Schema) -> bool:
    return "enum" in node and node.get("type") == "string"


def is_object(node: Schema) -> bool:
    return node.get("type") == "object"


def refs(node: Any) -> Iterable[str]:
    """Every definition ``node`` names, however deep."""
    if isinstance(node, dict):
        name = ref_name(node)
        if name is not None:
            yield name
        for value in node.values():
            yield from refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from refs(value)


def closure(defs: dict[str, Schema], roots: Iterable[str]) -> list[str]:
    """``roots`` and every definition they name, dependencies first."""
    seen: dict[str, None] = {}

    def visit(name: str) -> None:
        if name in seen:
            return
        seen[name] = None  # before the children: no cycles among our types
        for child in refs(defs[name]):
            visit(child)
        del seen[name]
        seen[name] = None

    for root in roots:
        visit(root)
    return list(seen)


def parsed_roots(schema: Schema) -> list[str]:
    """What the server parses: the params of the requests clients send, and
    the arguments of the commands they execute."""
    params = [
        m["params"]
        for m in schema["x-methods"]
        if m["from"] == "client" and m["kind"] == "request" and m.get("params")
    ]
    return [*params, *(c["arguments"] for c in schema.get("x-commands", []))]


def command_constant(command: str) -> str:
    """``agentls.ask`` (a ``workspace/executeCommand`` command) → ``ASK_COMMAND``."""
    return snake(command.split(".", 1)[1]).upper() + "_COMMAND"


# --- Python -------------------------------------------------------------------------


def py_type(node: Schema, defs: dict[str, Schema], *, literal_ok: bool = True) -> str:
    name = ref_name(node)
    if name is not None:
        return name
    if "anyOf" in node:
        return " | ".join(py_type(option, defs) for option in node["anyOf"])
    if is_enum(node) or (node.get("type") == "boolean" and "enum" in node):
        return "Literal[" + ", ".join(repr(v) for v in node["enum"]) + "]"
    kind = node.get("type")
    if kind == "string":
        return "str"
    if kind == "integer":
        return "int"
    if kind == "number":
        return "float"
    if kind == "boolean":
        return "bool"
    if kind == "null":
        return "None"
    if kind == "array":
        return f"list[{py_type(node['items'], defs)}]"
    if kind == "object":
        return "dict[str, Any]"
    return "Any"


def py_comment(node: Schema, indent: str) -> list[str]:
    text = node.get("description")
    if not text:
        return []
    return [f"{indent}# {line}" for line in _wrap(text, 96 - len(indent))]


def _wrap(text: str, width: int) -> list[str]:
    lines: list[str] = []
    line = ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    if line:
        lines.append(line)
    return lines


def python_names(schema: Schema) -> str:
    defs = definitions(schema)
    out = [f'"""{HEADER}.', "", "The method table, event kinds, error codes and literal types"]
    out += ["of the wire.", '"""', "", "from __future__ import annotations", ""]
    out += ["from dataclasses import dataclass", "from typing import Literal", ""]
    out += [f"PROTOCOL_VERSION = {schema['x-protocolVersion']}", ""]
    for name, node in defs.items():
        if is_enum(node):
            out += py_comment(node, "")
            out.append(f"{name} = {py_type(node, defs)}")
    out += ["", ""]
    for method in schema["x-methods"]:
        out.append(f"{constant(method['name'])} = {method['name']!r}")
    out += ["", "# workspace/executeCommand commands (for clients with nothing of ours)."]
    for command in schema.get("x-commands", []):
        out.append(f"{command_constant(command['name'])} = {command['name']!r}")
    out += [
        "",
        "",
        "@dataclass(frozen=True, slots=True)",
        "class Method:",
        "    name: str",
        "    # Who sends it.",
        '    sender: Literal["client", "server"]',
        '    kind: Literal["request", "notification"]',
        "    # The names of its params and result types (in ``wire``).",
        "    params: str | None = None",
        "    result: str | None = None",
        "",
        "",
        "METHODS: tuple[Method, ...] = (",
    ]
    for m in schema["x-methods"]:
        args = [constant(m["name"]), repr(m["from"]), repr(m["kind"]), repr(m.get("params"))]
        if m.get("result"):
            args.append(repr(m["result"]))
        out.append(f"    Method({', '.join(args)}),")
    out += [")", "", "# agent/event: each kind and its type (in ``wire``), oldest first."]
    out.append("EVENT_KINDS: dict[str, str] = {")
    out += [f"    {kind!r}: {name!r}," for kind, name in schema["x-events"].items()]
    out.append("}")
    kinds = [kind for error in schema["x-errors"] for kind in error["kinds"]]
    out += ["", "# What failed, as the code of the error response says it."]
    out.append("ErrorKind = Literal[" + ", ".join(repr(k) for k in kinds) + "]")
    out += ["", "# The one table of error codes."]
    out.append("CODES: dict[ErrorKind, int] = {")
    out += [f"    {kind!r}: {e['code']}," for e in schema["x-errors"] for kind in e["kinds"]]
    out += ["}", "", "# How docs/protocol.md names each code."]
    out.append("NAMES: dict[int, str] = {")
    out += [f"    {e['code']}: {e['name']!r}," for e in schema["x-errors"]]
    out += ["}", ""]
    return "\n".join(out)


def python_wire(schema: Schema) -> str:
    defs = definitions(schema)
    enums = [name for name, node in defs.items() if is_enum(node)]
    parsed = [n for n in closure(defs, parsed_roots(schema)) if n not in enums]
    sent = [n for n in closure(defs, defs) if n not in enums and n not in parsed]
    out = [f'"""{HEADER}.', ""]
    out += [
        "What the server parses (attrs classes, snake_case: ``protocol.converter``",
        "parses them strictly) and what it sends (TypedDicts, camelCase as on the wire).",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "from typing import Any, Literal, NotRequired, TypedDict",
        "",
        "import attrs",
        "",
    ]
    out.append("from agentls.schema.names import (  # noqa: F401")
    out += [f"    {name}," for name in sorted(enums)]
    out += [")", ""]
    for name in parsed:
        out += ["", *_attrs_class(name, defs[name], defs)]
    for name in sent:
        out += ["", *_typed_dict(name, defs[name], defs)]
    return "\n".join(out) + "\n"


def _alias(name: str, node: Schema, defs: dict[str, Schema]) -> list[str]:
    return [*py_comment(node, ""), f"{name} = {py_type(node, defs)}", ""]


def _attrs_class(name: str, node: Schema, defs: dict[str, Schema]) -> list[str]:
    if not is_object(node):
        return ["", *_alias(name, node, defs)]
    out = ["", "@attrs.define(frozen=True)", f"class {name}:"]
    if node.get("description"):
        out.append(f'    """{node["description"]}"""')
    props: dict[str, Schema] = node.get("properties", {})
    required = set(node.get("required", []))
    fields = [p for p in props if p in required] + [p for p in props if p not in required]
    if not fields:
        out.append("    pass")
    for prop in fields:
        spec = props[prop]
        field = snake(prop)
        if keyword.iskeyword(field):
            field += "_"
        kind = py_type(spec, defs)
        out += py_comment(spec, "    ")
        if prop in required:
            out.append(f"    {field}: {kind}")
        elif "default" in spec:
            out.append(f"    {field}: {kind} = {spec['default']!r}")
        else:
            out.append(f"    {field}: {kind} | None = None")
    return [line for line in out if line != ""] + [""]


def _typed_dict(name: str, node: Schema, defs: dict[str, Schema]) -> list[str]:
    if not is_object(node):
        return ["", *_alias(name, node, defs)]
    out = ["", f"class {name}(TypedDict):"]
    if node.get("description"):
        out.append(f'    """{node["description"]}"""')
    props: dict[str, Schema] = node.get("properties", {})
    required = set(node.get("required", []))
    if not props:
        out.append("    pass")
    for prop, spec in props.items():
        kind = py_type(spec, defs)
        out += py_comment(spec, "    ")
        kind = kind if prop in required else f"NotRequired[{kind}]"
        out.append(f"    {prop}: {kind}")
    return [*out, ""]


# --- Lua ------------------------------------------------------------------------------


def lua_type(node: Schema) -> str:
    name = ref_name(node)
    if name is not None:
        return f"agentls.{name}"
    if "anyOf" in node:
        return "|".join(lua_type(option) for option in node["anyOf"])
    if "enum" in node:
        return "|".join(json.dumps(v) for v in node["enum"])
    kind = node.get("type")
    if kind == "array":
        return f"{lua_type(node['items'])}[]"
    if kind == "object":
        return "table<string, any>"
    simple = {"string": "string", "integer": "integer", "number": "number", "boolean": "boolean"}
    return "nil" if kind == "null" else simple.get(str(kind), "any")


def lua(schema: Schema) -> str:
    defs = definitions(schema)
    out = [f"-- {HEADER}."]
    out += ["-- The wire's types as LuaCATS annotations; its method names and error codes.", ""]
    for name, node in defs.items():
        desc = node.get("description")
        if is_object(node):
            if desc:
                out += [f"--- {line}" for line in _wrap(desc, 96)]
            out.append(f"---@class agentls.{name}")
            props: dict[str, Schema] = node.get("properties", {})
            required = set(node.get("required", []))
            for prop, spec in props.items():
                mark = "" if prop in required else "?"
                note = f" {spec['description']}" if spec.get("description") else ""
                out.append(f"---@field {prop}{mark} {lua_type(spec)}{note}")
        else:
            if desc:
                out += [f"--- {line}" for line in _wrap(desc, 96)]
            out.append(f"---@alias agentls.{name} {lua_type(node)}")
        out.append("")
    out += ["local M = {}", "", f"M.PROTOCOL_VERSION = {schema['x-protocolVersion']}", ""]
    out.append("--- Every method of the protocol, by its constant name.")
    out.append("M.methods = {")
    out += [f'  {constant(m["name"])} = "{m["name"]}",' for m in schema["x-methods"]]
    out += ["}", "", "--- The error codes the server answers with, by name."]
    out.append("M.errors = {")
    out += [f"  {e['name']} = {e['code']}," for e in schema["x-errors"]]
    out += ["}", "", "--- agent/event kinds, in the order they were added."]
    out.append("M.event_kinds = {")
    out += [f'  "{kind}",' for kind in schema["x-events"]]
    out += ["}", "", "return M", ""]
    return "\n".join(out)


# --- TypeScript --------------------------------------------------------------------------


def typescript(schema: Schema, json2ts: str) -> str:
    """json-schema-to-typescript's types, and the constants it does not make."""
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "protocol.json"
        # The x- keys are ours; the generator needs only the definitions.
        source.write_text(json.dumps({**schema, "title": "agentls protocol"}), encoding="utf-8")
        done = subprocess.run(
            [
                json2ts,
                "--input",
                str(source),
                "--unreachableDefinitions",
                "--additionalProperties=false",
                "--bannerComment",
                f"/* {HEADER}. */",
            ],
            capture_output=True,
            text=True,
            check=False,
        )
    if done.returncode != 0:
        raise SystemExit(f"json2ts failed:\n{done.stderr}")
    types = _without_root(done.stdout)
    constants = [
        "",
        f"export const PROTOCOL_VERSION = {schema['x-protocolVersion']};",
        "",
        "/** Every method of the protocol. */",
        "export const Method = {",
        *[f"  {_ts_key(m['name'])}: '{m['name']}'," for m in schema["x-methods"]],
        "} as const;",
        "",
        "/** The error codes the server answers with. */",
        "export const ErrorCode = {",
        *[f"  {e['name'][0].lower() + e['name'][1:]}: {e['code']}," for e in schema["x-errors"]],
        "} as const;",
        "",
        "/** agent/event kinds, in the order they were added. */",
        "export const EVENT_KINDS = [",
        *[f"  '{kind}'," for kind in schema["x-events"]],
        "] as const;",
        "",
    ]
    return types.rstrip() + "\n" + "\n".join(constants)


_ROOT = "AgentlsProtocol"


def _without_root(types: str) -> str:
    """The generator's output without what it says of the schema's root
    (an empty interface, and where each definition hangs from it)."""
    referenced = (
        rf" \* This interface was referenced by `{_ROOT}`'s JSON-Schema\n"
        r' \* via the `definition` "\w+"\.\n'
    )
    types = re.sub(rf"/\*\*\n{referenced} \*/\n", "", types)
    types = re.sub(rf" \*\n{referenced}", "", types)
    types = re.sub(rf"export interface {_ROOT} \{{\n  \[k: string\]: unknown;\n\}}\n", "", types)
    assert "referenced by" not in types and f"interface {_ROOT}" not in types, "json2ts changed"
    return types


def _ts_key(method: str) -> str:
    return method.split("/", 1)[1]


# --- entry -------------------------------------------------------------------------------


def ruff_format(text: str, path: Path) -> str:
    """Python as ``make lint`` wants it (ruff, from this environment)."""
    done = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--stdin-filename", str(path), "-"],
        input=text,
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO,
    )
    if done.returncode != 0:
        raise SystemExit(f"ruff format failed on {path.name}:\n{done.stderr}")
    return done.stdout


def outputs(schema: Schema, json2ts: str | None) -> dict[Path, str]:
    made = {
        NAMES_PY: ruff_format(python_names(schema), NAMES_PY),
        WIRE_PY: ruff_format(python_wire(schema), WIRE_PY),
        WIRE_LUA: lua(schema),
    }
    if json2ts is not None:
        made[WIRE_TS] = typescript(schema, json2ts)
    return made


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m agentls.schema.generate")
    parser.add_argument("--check", action="store_true", help="fail if a generated file is stale")
    parser.add_argument("--json2ts", help="json-schema-to-typescript's json2ts (for wire.ts)")
    args = parser.parse_args(argv)
    made = outputs(load(), args.json2ts)
    stale = [path for path, text in made.items() if not path.exists() or path.read_text() != text]
    if args.check:
        for path in stale:
            print(f"stale: {path.relative_to(REPO)} (run `make schema`)", file=sys.stderr)
        return 1 if stale else 0
    for path in stale:
        path.write_text(made[path], encoding="utf-8")
        print(f"wrote {path.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
