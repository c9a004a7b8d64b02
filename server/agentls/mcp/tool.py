"""One MCP tool as the agent sees it: a function tool named ``mcp__SERVER__TOOL``.

Its parameters are the tool's own JSON schema; its title in the editor is
``SERVER \u203a TOOL`` (a right-pointing angle quote); it counts as able to
change things unless the server declares ``readOnlyHint`` (approval asks
accordingly). Calling it goes to the server's runner; what comes back is the
call's output, also shown in the editor.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from agentls.tools.base import ToolContext, ToolResult
from agentls.tools.workspace import Workspace

# Between server and tool in titles: github \u203a search_issues.
SEPARATOR = " \u203a "

# (MCP tool name, arguments, head bytes, tail bytes) -> the call's result
Call = Callable[[str, dict[str, Any], int, int], Awaitable[ToolResult]]


def parameters(schema: Any) -> dict[str, Any]:
    """The tool's input schema as function parameters (always an object schema)."""
    params = dict(schema) if isinstance(schema, dict) else {}
    params["type"] = "object"
    params.setdefault("properties", {})
    return params


def label(server: str, tool: str) -> str:
    return f"{server}{SEPARATOR}{tool}"


class McpTool:
    # agent/cancelTool stops an MCP call by cancelling it (the SDK tells the
    # server); it has no partial output to hand back.
    stoppable = False

    def __init__(
        self,
        name: str,
        server: str,
        tool: str,
        *,
        description: str | None,
        schema: Any,
        read_only: bool,
        call: Call,
    ) -> None:
        self.name = name
        self.server = server
        self.tool = tool
        self.read_only = read_only
        self._call = call
        self._spec = {
            "type": "function",
            "name": name,
            "description": description or f"The tool {tool!r} of the MCP server {server!r}.",
            "strict": False,
            "parameters": parameters(schema),
        }

    def spec(self) -> dict[str, Any]:
        return self._spec

    def sandboxed(self, args: dict[str, Any], sandbox: object) -> bool:
        """Never: an MCP server is the user's own program, outside the sandbox."""
        return False

    def title(self, args: dict[str, Any], workspace: Workspace) -> str:
        return label(self.server, self.tool)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        config = ctx.config
        result = await self._call(
            self.tool, args, config.output_head_bytes, config.output_tail_bytes
        )
        ctx.emit_output(result.output)
        return result
