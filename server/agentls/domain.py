"""The words every layer shares, defined once: Effort, Approval, Turn and
Tool call statuses, and the settings a pane can change at any time.

Literal types only, so that answering ``initialize`` (which needs some of
them) does not load the agent.
"""

from __future__ import annotations

from typing import Literal, get_args

# The model a server uses unless told otherwise (initializationOptions.model,
# $AGENTLS_MODEL).
DEFAULT_MODEL = "gpt-5.1-codex"

Effort = Literal["none", "minimal", "low", "medium", "high", "xhigh"]
EFFORTS: tuple[Effort, ...] = get_args(Effort)
DEFAULT_EFFORT: Effort = "medium"

# When a tool call asks the user first (docs/configuration.md, "Approval").
Approval = Literal["never", "on-request", "always"]
APPROVALS: tuple[Approval, ...] = get_args(Approval)
DEFAULT_APPROVAL: Approval = "on-request"

# Where commands run (docs/security.md, "Sandbox"): what they may write.
Sandbox = Literal["workspace-write", "read-only", "off"]
SANDBOXES: tuple[Sandbox, ...] = get_args(Sandbox)
DEFAULT_SANDBOX: Sandbox = "workspace-write"

TurnStatus = Literal["completed", "cancelled", "failed"]
# A tool call's outcome; "cancelled" when its turn was cancelled under it.
ToolStatus = Literal["completed", "failed", "cancelled"]

# The settings a pane can change at any time (``agent/set*``, editor settings).
SettingName = Literal["effort", "fast_mode", "approval", "web_search", "review"]

# An MCP server's state (``agent/mcpServers``): ``disabled`` is a project
# server the user has not allowed.
McpStatus = Literal["starting", "ready", "failed", "disabled"]

# What the user asked of an approval request.
Decision = Literal["allow", "allowSession", "deny"]

# Why the pane worker could not carry out a command (``worker.messages.Failure``);
# the protocol layer answers each kind with its own error code.
FailureKind = Literal[
    # The pane does not exist, or was closed (its agent stopped) under the command.
    "pane_unavailable",
    "fork_already_open",
    # The pane has turns in flight and the command needs it idle.
    "pane_busy",
    # The server is shutting down.
    "stopping",
    # No such stored session, or its file cannot be read.
    "session_not_found",
    # The command's values cannot be used (an unknown effort, an empty prompt).
    "invalid",
    # A valid command that cannot be carried out now (a full steer queue).
    "refused",
    # A bug: the message says what went wrong.
    "internal",
]
