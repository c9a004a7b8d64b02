"""Approval policy: when a tool call must be allowed by the user first.

- ``never``: tools run without asking (the default: as the user would in
  their own workspace).
- ``on-request``: ask before anything that may change something — every
  patch, and every command that is not plainly read-only (``ls``, ``cat``,
  ``rg``, ``git status`` …).
- ``always``: ask before every command and every patch.

Reading files and updating the plan never ask. Any other tool (an MCP
server's) asks under ``on-request`` and ``always`` unless it declares that it
only reads. "Allow for the session"
remembers the command's program (``pytest``) or, for patches, all patches,
for the rest of the pane's life. The agent only decides *whether* to ask; who
is asked (the editor) is the ``Approver`` the agent was given.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from agentls.domain import Approval, Decision
from agentls.tools.apply_patch import affected_paths
from agentls.tools.registry import ToolCall

_GUARDED_TOOLS = frozenset({"exec_command", "apply_patch"})
_READ_ONLY_PROGRAMS = frozenset(
    {
        "ls",
        "cat",
        "head",
        "tail",
        "wc",
        "rg",
        "grep",
        "pwd",
        "echo",
        "which",
        "file",
        "stat",
        "tree",
        "du",
        "df",
        "date",
        "whoami",
        "uname",
        "env",
        "printenv",
        "true",
        "diff",
        "sort",
        "uniq",
        "cut",
        "nl",
        "basename",
        "dirname",
        "realpath",
    }
)
_READ_ONLY_GIT = frozenset(
    {"status", "diff", "log", "show", "branch", "blame", "rev-parse", "ls-files"}
)
_SEPARATORS = re.compile(r"&&|\|\||[|;&\n]")


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    turn_id: int
    call_id: str
    tool: str
    title: str
    command: str | None = None
    workdir: str | None = None
    patch: str | None = None
    paths: tuple[str, ...] = ()
    # The call's arguments, for tools that are neither a command nor a patch.
    arguments: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class ApprovalDecision:
    decision: Decision
    reason: str | None = None


Approver = Callable[[ApprovalRequest], Awaitable[ApprovalDecision]]


def read_only(command: str) -> bool:
    """True if every part of a shell command line only reads (and writes nowhere)."""
    if any(token in command for token in (">", "`", "$(")):
        return False
    for part in _SEPARATORS.split(command):
        try:
            words = shlex.split(part)
        except ValueError:
            return False
        if not words:
            continue
        program = words[0].rsplit("/", 1)[-1]
        if program == "git":
            if len(words) < 2 or words[1] not in _READ_ONLY_GIT:
                return False
        elif program == "find":
            if any(w in ("-exec", "-execdir", "-delete", "-ok", "-fprint") for w in words):
                return False
        elif program == "sed":
            if any(w.startswith("-i") for w in words[1:]):
                return False
        elif program not in _READ_ONLY_PROGRAMS:
            return False
    return True


@dataclass(slots=True)
class Allowances:
    """What the user allowed "for the session" in one pane."""

    programs: set[str] = field(default_factory=set)
    patches: bool = False
    # Other tools allowed by name (an MCP server's tool).
    tools: set[str] = field(default_factory=set)

    def covers(self, call: ToolCall) -> bool:
        if call.name == "apply_patch":
            return self.patches
        if call.name not in _GUARDED_TOOLS:
            return call.name in self.tools
        return _program(call) in self.programs

    def remember(self, call: ToolCall) -> None:
        if call.name == "apply_patch":
            self.patches = True
        elif call.name not in _GUARDED_TOOLS:
            self.tools.add(call.name)
        elif program := _program(call):
            self.programs.add(program)


def _program(call: ToolCall) -> str:
    command = call.arguments.get("cmd")
    if not isinstance(command, str):
        return ""
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    return words[0].rsplit("/", 1)[-1] if words else ""


def needs_approval(
    policy: Approval, call: ToolCall, allowances: Allowances, *, read_only_tool: bool = False
) -> bool:
    """``read_only_tool``: the tool declares it changes nothing (never asked about)."""
    if policy == "never" or call.problem or allowances.covers(call):
        return False
    if call.name not in _GUARDED_TOOLS:
        return not read_only_tool
    if policy == "on-request" and call.name == "exec_command":
        command = call.arguments.get("cmd")
        return not (isinstance(command, str) and read_only(command))
    return True


def request_for(turn_id: int, call: ToolCall, title: str) -> ApprovalRequest:
    arguments = call.arguments
    if call.name not in _GUARDED_TOOLS:
        return ApprovalRequest(turn_id, call.call_id, call.name, title, arguments=arguments)
    if call.name == "apply_patch":
        patch = str(arguments.get("patch", ""))
        return ApprovalRequest(
            turn_id, call.call_id, call.name, title, patch=patch, paths=tuple(affected_paths(patch))
        )
    workdir = arguments.get("workdir")
    return ApprovalRequest(
        turn_id,
        call.call_id,
        call.name,
        title,
        command=str(arguments.get("cmd", "")),
        workdir=workdir if isinstance(workdir, str) else None,
    )


def denied_output(call: ToolCall, reason: str | None) -> str:
    because = f": {reason}" if reason else ""
    return (
        f"error: the user denied this {call.name} call{because}. "
        "Do not retry it as is; take another approach or ask the user."
    )
