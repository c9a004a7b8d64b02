"""The tool box: which tools the model is offered, and calling them safely.

A tool never crashes a turn: bad arguments, paths outside the workspace,
unknown tools and I/O errors all become an error output the model can read
and act on.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from agentls.tools.base import Tool, ToolArgumentError, ToolContext, ToolResult
from agentls.tools.workspace import PathOutsideWorkspace, Workspace

log = logging.getLogger(__name__)


# Calls of built-in tools the Responses API has and we never offer: answered
# with an output that says so (an unanswered call fails every later request).
BUILT_IN_CALLS = {
    "shell_call": "the built-in shell tool is not available here: use exec_command",
    "local_shell_call": "the built-in local shell tool is not available here: use exec_command",
    "apply_patch_call": "the built-in apply_patch tool is not available here: use the "
    "apply_patch function tool",
}


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A call the model made, parsed as far as it parses."""

    call_id: str
    name: str
    arguments: dict[str, Any]
    # Why the arguments could not be used, if they could not.
    problem: str | None = None
    # The call item's type: "function_call", "custom_tool_call" (freeform
    # input) or one of BUILT_IN_CALLS.
    kind: str = "function_call"


def parse_call(item: dict[str, Any]) -> ToolCall:
    kind = str(item.get("type") or "function_call")
    call_id = str(item.get("call_id") or item.get("id") or "")
    if kind in BUILT_IN_CALLS:
        details: dict[str, Any] = {key: item[key] for key in ("action", "operation") if key in item}
        return ToolCall(call_id, kind, details, kind=kind)
    name = str(item.get("name") or "")
    if kind == "custom_tool_call":
        return ToolCall(call_id, name, {"input": str(item.get("input") or "")}, kind=kind)
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


class ToolSources:
    """Several sources as one (the MCP servers' tools and the editor's)."""

    def __init__(self, *sources: ToolSource) -> None:
        self._sources = sources

    @property
    def version(self) -> int:
        # Every source's version only grows: the sum changes when any does.
        return sum(source.version for source in self._sources)

    def tools(self) -> Sequence[Tool]:
        return [tool for source in self._sources for tool in source.tools()]


# ``apply_patch <<'EOF' … EOF`` typed as a command (Codex-trained models do),
# optionally after ``cd DIR &&``.
_HEREDOC = re.compile(
    r"\A\s*(?:cd\s+(?P<cd>[^\s;&|]+)\s*&&\s*)?(?:apply_patch|applypatch)\s+<<-?\s*"
    r"(?P<q>['\"]?)(?P<tag>\w+)(?P=q)[ \t]*\n(?P<body>.*?)\n[ \t]*(?P=tag)\s*\Z",
    re.S,
)
# The argument a freeform (custom tool) call's text input stands for.
_FREEFORM = {"apply_patch": "patch", "exec_command": "cmd"}
_PATCH_PATHS = re.compile(r"^(\*\*\* (?:Add File|Delete File|Update File|Move to): )(.+)$", re.M)


def _patch_in_command(call: ToolCall, workspace: Workspace) -> ToolCall | None:
    """The apply_patch call a heredoc command stands for, or None."""
    cmd = call.arguments.get("cmd")
    if call.problem or not isinstance(cmd, str) or "apply" not in cmd:
        return None
    match = _HEREDOC.match(cmd)
    if match is None:
        return None
    patch = match.group("body")
    workdir = call.arguments.get("workdir")
    try:
        base = workspace.resolve(workdir if isinstance(workdir, str) and workdir else ".")
        folder = workspace.relative(workspace.resolve(base / (match.group("cd") or ".")))
    except (PathOutsideWorkspace, ValueError):
        return None  # not ours to rewrite: the shell says what is wrong
    if folder != ".":
        # The patch's paths are relative to where the command would have run.
        patch = _PATCH_PATHS.sub(lambda m: f"{m.group(1)}{folder}/{m.group(2)}", patch)
    return replace(call, name="apply_patch", arguments={"patch": patch})


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

    def route(self, call: ToolCall, workspace: Workspace) -> ToolCall:
        """The call as it will run (and as approval sees it): a freeform call
        of one of our tools gets its one free-text argument (the patch, the
        command); ``apply_patch <<'EOF'`` typed into exec_command is applied
        by the patch tool, not run by the shell."""
        if call.kind == "custom_tool_call" and call.name in _FREEFORM and not call.problem:
            text = call.arguments.get("input", "")
            call = replace(call, arguments={_FREEFORM[call.name]: text})
        if call.name == "exec_command" and "apply_patch" in self._tools:
            routed = _patch_in_command(call, workspace)
            if routed is not None:
                return routed
        return call

    def title(self, call: ToolCall, workspace: Workspace) -> str:
        if call.kind in BUILT_IN_CALLS:
            return f"Unavailable tool: {call.kind}"
        tool = self.get(call.name)
        if tool is None or call.problem:
            return f"Calling {call.name or 'an unnamed tool'}"
        try:
            return tool.title(call.arguments, workspace)
        except Exception:  # a title is cosmetic; never let it fail a call
            return f"Calling {call.name}"

    async def run(self, call: ToolCall, ctx: ToolContext) -> ToolResult:
        if call.kind in BUILT_IN_CALLS:
            return ToolResult.error(f"{BUILT_IN_CALLS[call.kind]}.")
        tool = self.get(call.name)
        if tool is not None and call.kind == "custom_tool_call" and call.name not in _FREEFORM:
            return ToolResult.error(f"{call.name} takes JSON arguments, not freeform input")
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
