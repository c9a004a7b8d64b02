"""The house's import rules (docs/architecture.md): arrows point down the
layers, nothing below the faces knows JSON-RPC, handlers see the service (not
the server class or the agent), and no import runs in a circle. Every import
counts: those made for typing only and those inside functions too."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "server" / "agentls"

# Below the faces: never pygls, lsprotocol, a face or the LSP wire helpers.
TRANSPORT_FREE = ("service", "worker", "agent", "sessions", "model", "tools", "mcp", "schema")
FACES = ("agentls.lsp", "agentls.protocol", "pygls", "lsprotocol")
# Import circles that predate the rule, in the sandbox's part of the tools
# (issue 22's ground); nothing may join them and no other may appear.
KNOWN_CIRCLES = [
    {
        "agentls.tools.background",
        "agentls.tools.base",
        "agentls.tools.exec_command",
        "agentls.tools.shell",
    }
]


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def modules() -> dict[str, Path]:
    return {
        module_name(path): path
        for path in PACKAGE.rglob("*.py")
        if "demo/example" not in path.as_posix()
    }


def imported(path: Path) -> Iterator[str]:
    """Every module ``path`` imports, anywhere in it, by full name."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module
            yield from (f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)


@cache
def graph() -> dict[str, set[str]]:
    known = modules()
    return {
        name: {target for target in imported(path) if target in known}
        for name, path in known.items()
    }


def circles() -> list[set[str]]:
    """The strongly connected groups of more than one module (Tarjan)."""
    edges = graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in edges[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.add(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(group)

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_no_import_runs_in_a_circle() -> None:
    assert [c for c in circles() if c not in KNOWN_CIRCLES] == []


def test_the_faces_and_the_service_are_free_of_circles() -> None:
    layers = ("agentls.lsp", "agentls.service", "agentls.protocol", "agentls.schema")
    for circle in circles():
        assert not any(m.startswith(layers) for m in circle), circle


@pytest.mark.parametrize("layer", TRANSPORT_FREE)
def test_below_the_faces_nothing_knows_json_rpc(layer: str) -> None:
    for name, path in modules().items():
        if not name.startswith(f"agentls.{layer}"):
            continue
        for target in imported(path):
            assert not target.startswith(FACES), f"{name} imports {target}"


def test_handlers_see_the_service_not_the_server_or_the_agent() -> None:
    for name, path in modules().items():
        if not name.startswith("agentls.lsp.handlers"):
            continue
        for target in imported(path):
            assert target not in ("agentls.lsp.app", "agentls.agent.agent"), (name, target)
            assert not target.startswith("agentls.worker.worker"), (name, target)


def test_the_agent_and_the_worker_never_import_the_service() -> None:
    for name, path in modules().items():
        if name.startswith(("agentls.agent", "agentls.worker")):
            for target in imported(path):
                assert not target.startswith("agentls.service"), (name, target)


def test_tools_and_model_never_import_each_other() -> None:
    for name, path in modules().items():
        for mine, theirs in (("tools", "model"), ("model", "tools")):
            if name.startswith(f"agentls.{mine}"):
                for target in imported(path):
                    assert not target.startswith(f"agentls.{theirs}"), (name, target)


def test_the_rules_see_real_imports() -> None:
    # The checks above would pass on an empty graph: make sure they read the code.
    edges = graph()
    assert "agentls.service.service" in edges["agentls.lsp.face"]
    assert "agentls.lsp.app" not in edges["agentls.lsp.handlers.turns"]
    assert "agentls.agent.agent" in edges["agentls.service.service"]
