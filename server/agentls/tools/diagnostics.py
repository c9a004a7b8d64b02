"""``get_diagnostics``: the problems the editor shows (from every language
server it runs: pyright, tsserver, rust-analyzer, …), so that after a patch
the model sees the errors the user sees.

Offered only when the editor can answer (it advertises
``experimental.agentls.diagnostics``); the editor is asked through a
``DiagnosticsSource``, which the language server implements.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Protocol

from agentls.tools.base import FunctionTool, ToolContext, ToolResult, get_str
from agentls.tools.output import bounded
from agentls.tools.workspace import Workspace

# Most problems listed in one answer (the model can ask about one file).
MAX_DIAGNOSTICS = 200
SEVERITIES = {1: "error", 2: "warning", 3: "information", 4: "hint"}


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One problem, as the editor shows it (line and column from 1)."""

    path: str
    line: int
    column: int
    severity: str
    message: str
    source: str | None = None

    def describe(self) -> str:
        source = f" [{self.source}]" if self.source else ""
        return f"{self.path}:{self.line}:{self.column}: {self.severity}{source}: {self.message}"


class DiagnosticsSource(Protocol):
    async def diagnostics(self, path: Path | None) -> list[Diagnostic]:
        """Everything the editor shows for ``path`` (a real path), or for
        every file when None."""
        ...


_ORDER = {"error": 0, "warning": 1, "information": 2, "hint": 3}


def _plural(kind: str, n: int) -> str:
    if kind == "information":
        return "notes" if n != 1 else "note"
    return kind if n == 1 else f"{kind}s"


class GetDiagnostics(FunctionTool):
    name = "get_diagnostics"
    read_only: ClassVar[bool] = True
    description = (
        "List the problems the user's editor shows (errors and warnings from its language "
        "servers: type checkers, linters, compilers), for one file or for every file. Use it "
        "after editing to check your change; language servers may need a moment after an "
        "edit to update."
    )
    properties = {
        "path": {
            "type": "string",
            "description": "A file, relative to the workspace; omit for every file.",
        }
    }
    required = ()

    def __init__(self, source: DiagnosticsSource) -> None:
        self._source = source

    def title(self, args: dict[str, Any], workspace: Workspace) -> str:
        path = args.get("path")
        if isinstance(path, str) and path:
            return f"Checking problems in {workspace.display(path)}"
        return "Checking problems"

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        raw = get_str(args, "path", required=False)
        path = ctx.workspace.resolve(raw) if raw else None
        found = await self._source.diagnostics(path)
        where = f"in {ctx.workspace.relative(path)}" if path is not None else "in any file"
        if not found:
            return ToolResult(output=f"The editor shows no problems {where}.")
        found.sort(key=lambda d: (_ORDER.get(d.severity, 4), d.path, d.line, d.column))
        counts: dict[str, int] = {}
        for diagnostic in found:
            counts[diagnostic.severity] = counts.get(diagnostic.severity, 0) + 1
        summary = ", ".join(f"{n} {_plural(kind, n)}" for kind, n in counts.items())
        lines = [f"The editor shows {summary} {where}:"]
        lines += [d.describe() for d in found[:MAX_DIAGNOSTICS]]
        if len(found) > MAX_DIAGNOSTICS:
            lines.append(f"… and {len(found) - MAX_DIAGNOSTICS} more (ask about one file)")
        text = "\n".join(lines)
        head, tail = ctx.config.output_head_bytes, ctx.config.output_tail_bytes
        return ToolResult(output=bounded(text, head, tail))
