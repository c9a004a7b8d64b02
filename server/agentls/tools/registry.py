"""The tool box: which tools the model is offered, and calling them safely.

A tool never crashes a turn: bad arguments, paths outside the workspace,
unknown tools and I/O errors all become an error output the model can read
and act on.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from agentls.tools.base import Tool, ToolArgumentError, ToolContext, ToolResult
from agentls.tools.workspace import PathOutsideWorkspace, Workspace

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A function call the model made, parsed as far as it parses."""

    call_id: str
    name: str
    arguments: dict[str, Any]
    # Why the arguments could not be used, if they could not.
    problem: str | None = None


def parse_call(item: dict[str, Any]) -> ToolCall:
    call_id = str(item.get("call_id") or item.get("id") or "")
    name = str(item.get("name") or "")
    raw = item.get("arguments") or "{}"
    try:
        arguments = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError as exc:
        return ToolCall(call_id, name, {}, f"arguments are not valid JSON: {exc}")
    if not isinstance(arguments, dict):
        return ToolCall(call_id, name, {}, "arguments must be a JSON object")
    return ToolCall(call_id, name, arguments)


class ToolSource(Protocol):
    """Tools that come and go while the server runs (the MCP servers' tools).
    ``version`` changes whenever ``tools()`` does."""

    @property
    def version(self) -> int: ...

    def tools(self) -> Sequence[Tool]: ...


class ToolBox:
    def __init__(self, tools: Sequence[Tool], extra: ToolSource | None = None) -> None:
        self._tools = {tool.name: tool for tool in tools}
        self._specs = [tool.spec() for tool in tools]
        self._extra = extra
        self._extra_version = -1
        self._extra_tools: dict[str, Tool] = {}
        self._all_specs = self._specs

    @classmethod
    def default(cls, extra: ToolSource | None = None) -> ToolBox:
        from agentls.tools.apply_patch import ApplyPatch
        from agentls.tools.background import ReadProcessOutput, StartProcess, StopProcess
        from agentls.tools.exec_command import ExecCommand
        from agentls.tools.read_file import ReadFile
        from agentls.tools.update_plan import UpdatePlan

        return cls(
            [
                ExecCommand(),
                ApplyPatch(),
                ReadFile(),
                UpdatePlan(),
                StartProcess(),
                ReadProcessOutput(),
                StopProcess(),
            ],
            extra,
        )

    def read_only(self) -> ToolBox:
        """Only the built-in tools that can change nothing (for auxiliary
        jobs, which nobody watches and nobody can approve; MCP tools are left
        out, since a server's read-only hint is only a hint)."""
        return ToolBox([tool for tool in self._tools.values() if tool.read_only])

    def _refresh(self) -> None:
        extra = self._extra
        if extra is not None and extra.version != self._extra_version:
            tools = [t for t in extra.tools() if t.name not in self._tools]
            self._extra_tools = {tool.name: tool for tool in tools}
            self._all_specs = [*self._specs, *(tool.spec() for tool in tools)]
            self._extra_version = extra.version

    @property
    def specs(self) -> list[dict[str, Any]]:
        """What the model is offered now (tools of MCP servers that became ready included)."""
        self._refresh()
        return self._all_specs

    def get(self, name: str) -> Tool | None:
        """The tool of that name, built in or from the extra source."""
        tool = self._tools.get(name)
        if tool is None and self._extra is not None:
            self._refresh()
            tool = self._extra_tools.get(name)
        return tool

    def title(self, call: ToolCall, workspace: Workspace) -> str:
        tool = self.get(call.name)
        if tool is None or call.problem:
            return f"Calling {call.name or 'an unnamed tool'}"
        try:
            return tool.title(call.arguments, workspace)
        except Exception:  # a title is cosmetic; never let it fail a call
            return f"Calling {call.name}"

    async def run(self, call: ToolCall, ctx: ToolContext) -> ToolResult:
        tool = self.get(call.name)
        if tool is None:
            known = ", ".join(sorted([*self._tools, *self._extra_tools]))
            return ToolResult.error(f"unknown tool {call.name!r}; available tools: {known}")
        if call.problem:
            return ToolResult.error(f"{call.name}: {call.problem}")
        try:
            return await tool.run(call.arguments, ctx)
        except ToolArgumentError as exc:
            return ToolResult.error(f"{call.name}: {exc}")
        except PathOutsideWorkspace as exc:
            return ToolResult.error(str(exc))
        except (OSError, ValueError, UnicodeError) as exc:
            return ToolResult.error(f"{call.name}: {_describe(exc)}")
        except Exception as exc:
            # A bug in a tool is still only a failed call, never a crashed turn.
            log.exception("tool %s failed unexpectedly", call.name)
            return ToolResult.error(f"{call.name} failed unexpectedly: {_describe(exc)}")


def _describe(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        where = f": {exc.filename}" if exc.filename else ""
        return f"{exc.strerror}{where}"
    return str(exc) or type(exc).__name__
