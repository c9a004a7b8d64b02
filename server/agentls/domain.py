"""The words every layer shares, defined once: Effort, Approval, Turn and
Tool call statuses, and the settings a pane can change at any time.

Literal types only, so that answering ``initialize`` (which needs some of
them) does not load the agent.
"""

from __future__ import annotations

from typing import Literal, get_args

# The words the wire has too are defined by the wire schema (schema/protocol.json).
from agentls.schema.names import (
    Approval,
    Decision,
    Effort,
    McpStatus,
    Sandbox,
    ToolStatus,
    TurnStatus,
)

__all__ = [
    "APPROVALS",
    "DEFAULT_APPROVAL",
    "DEFAULT_EFFORT",
    "DEFAULT_MODEL",
    "DEFAULT_SANDBOX",
    "EFFORTS",
    "SANDBOXES",
    "Approval",
    "Decision",
    "Effort",
    "FailureKind",
    "McpStatus",
    "Sandbox",
    "SettingName",
    "ToolStatus",
    "TurnStatus",
]

# The model a server uses unless told otherwise (initializationOptions.model,
# $AGENTLS_MODEL).
DEFAULT_MODEL = "gpt-5.1-codex"

EFFORTS: tuple[Effort, ...] = get_args(Effort)
DEFAULT_EFFORT: Effort = "medium"

# When a tool call asks the user first (docs/configuration.md, "Approval").
APPROVALS: tuple[Approval, ...] = get_args(Approval)
DEFAULT_APPROVAL: Approval = "on-request"

# Where commands run (docs/security.md, "Sandbox"): what they may write.
SANDBOXES: tuple[Sandbox, ...] = get_args(Sandbox)
DEFAULT_SANDBOX: Sandbox = "workspace-write"

# The settings a pane can change at any time (``agent/set*``, editor settings).
SettingName = Literal["effort", "fast_mode", "approval", "web_search", "review"]

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
