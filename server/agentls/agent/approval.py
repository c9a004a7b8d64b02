"""Approval policy: when a tool call must be allowed by the user first.

The sandbox decides what is safe, not a list of harmless-looking words:

- ``on-request`` (the default): calls the sandbox confines run without
  asking — commands in the sandbox, patches where it lets commands write the
  workspace too. Everything else asks: a command the model wants to run
  outside the sandbox (``escalate``), and with no sandbox (off, or
  unavailable) every command and every patch; tools from elsewhere that may
  change something (MCP) always.
- ``always``: every call that may change anything asks.
- ``never``: nothing asks; an escalation is refused with an output the model
  reads (it must manage inside the sandbox).

Read-only tools (reading files, the plan, a background process's output)
never ask. "Allow for this session" allows exactly that command string (in
that directory, in or outside the sandbox as asked), or for a patch, edits to
those files, for the rest of the pane's life — never "anything starting with
its first word". The agent only decides *whether* to ask; who is asked (the
editor) is the ``Approver`` the agent was given.
"""

from __future__ import annotations

import json
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from agentls.domain import Approval, Decision
from agentls.tools.patch.grammar import affected_paths
from agentls.tools.registry import ToolCall
from agentls.tools.workspace import PathOutsideWorkspace, Workspace

# Tools whose calls are shell commands (``cmd``, ``workdir``, ``escalate``).
COMMAND_TOOLS = frozenset({"exec_command", "start_process"})


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    """What the editor is shown (``agent/requestApproval``)."""

    turn_id: int
    call_id: str
    tool: str
    title: str
    command: str | None = None
    # A patch as a unified diff of the files it changes.
    diff: str | None = None
    justification: str | None = None
    # The files a patch changes (for editors that list them).
    paths: tuple[str, ...] = ()
    # The call's arguments, for tools that are neither a command nor a patch.
    arguments: dict[str, Any] | None = None
    # Asked because review mode is on (every patch waits for the user).
    review: bool = False


@dataclass(frozen=True, slots=True)
class ApprovalDecision:
    decision: Decision
    reason: str | None = None


Approver = Callable[[ApprovalRequest], Awaitable[ApprovalDecision]]


def escalates(call: ToolCall) -> bool:
    return call.name in COMMAND_TOOLS and call.arguments.get("escalate") is True


def needs_approval(
    policy: Approval,
    call: ToolCall,
    *,
    read_only: bool,
    sandboxed: bool,
    allowed: bool,
) -> bool:
    """Whether to ask the user before this call.

    ``sandboxed``: the sandbox confines it; ``allowed``: the user allowed
    exactly this for the session."""
    if call.problem or read_only or policy == "never" or allowed:
        return False
    if policy == "always":
        return True
    return not sandboxed


def refused_escalation(call: ToolCall) -> str:
    return (
        f"error: {call.name} with escalate is refused: the approval policy is 'never', so "
        "nothing can run outside the sandbox. Do it inside the sandbox (write only inside "
        "the workspace or /tmp, without the network), or tell the user what you need."
    )


def _normal_path(raw: str, workspace: Workspace) -> str | None:
    try:
        return workspace.relative(workspace.resolve(raw))
    except (PathOutsideWorkspace, ValueError, OSError, RuntimeError):
        return None


def patch_files(patch: str, workspace: Workspace) -> tuple[str, ...] | None:
    """The files a patch changes, relative to the workspace (None if one of
    them is not a file of the workspace)."""
    files: list[str] = []
    for raw in affected_paths(patch):
        normal = _normal_path(raw, workspace)
        if normal is None:
            return None
        files.append(normal)
    return tuple(files)


def _command_key(call: ToolCall, workspace: Workspace) -> tuple[str, ...]:
    arguments = call.arguments
    workdir = arguments.get("workdir")
    where = _normal_path(workdir, workspace) if isinstance(workdir, str) else "."
    return (
        call.name,
        str(arguments.get("cmd", "")),
        where or f"?{workdir}",
        "escalate" if escalates(call) else "sandbox",
    )


@dataclass(slots=True)
class Allowances:
    """What the user allowed "for the session" in one pane, exactly."""

    commands: set[tuple[str, ...]] = field(default_factory=set)
    files: set[str] = field(default_factory=set)
    calls: set[tuple[str, str]] = field(default_factory=set)

    def covers(self, call: ToolCall, workspace: Workspace) -> bool:
        if call.name in COMMAND_TOOLS:
            return _command_key(call, workspace) in self.commands
        if call.name == "apply_patch":
            files = patch_files(str(call.arguments.get("patch", "")), workspace)
            return bool(files) and files is not None and set(files) <= self.files
        return (call.name, _canonical(call)) in self.calls

    def remember(self, call: ToolCall, workspace: Workspace) -> None:
        if call.name in COMMAND_TOOLS:
            self.commands.add(_command_key(call, workspace))
        elif call.name == "apply_patch":
            self.files.update(patch_files(str(call.arguments.get("patch", "")), workspace) or ())
        else:
            self.calls.add((call.name, _canonical(call)))


def _canonical(call: ToolCall) -> str:
    return json.dumps(call.arguments, sort_keys=True, separators=(",", ":"))


def request_for(
    turn_id: int,
    call: ToolCall,
    title: str,
    workspace: Workspace,
    diff: str | None = None,
    *,
    review: bool = False,
) -> ApprovalRequest:
    arguments = call.arguments
    if call.name == "apply_patch":
        patch = str(arguments.get("patch", ""))
        return ApprovalRequest(
            turn_id,
            call.call_id,
            call.name,
            title,
            diff=diff if diff is not None else patch,
            paths=patch_files(patch, workspace) or tuple(affected_paths(patch)),
            review=review,
        )
    justification = arguments.get("justification")
    if call.name in COMMAND_TOOLS:
        command = str(arguments.get("cmd", ""))
        workdir = arguments.get("workdir")
        if isinstance(workdir, str) and workdir not in ("", "."):
            command = f"cd {os.path.normpath(workdir)} && {command}"
    else:
        command = f"{call.name} {_canonical(call)}"
    return ApprovalRequest(
        turn_id,
        call.call_id,
        call.name,
        title,
        command=command,
        justification=justification if isinstance(justification, str) else None,
    )


def rejected_output(reason: str | None) -> str:
    """A patch the user rejected in review mode."""
    because = f" Their reason: {reason}" if reason else ""
    return (
        "error: the user reviewed this patch and rejected it; nothing was changed."
        f"{because} Take this into account before you change these files again."
    )


def denied_output(call: ToolCall, reason: str | None) -> str:
    because = f": {reason}" if reason else ""
    return (
        f"error: the user denied this {call.name} call{because}. "
        "Do not retry it as is; take another approach or ask the user."
    )
