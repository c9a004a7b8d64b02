"""The method table of protocol v1: every method the server serves or sends.

``docs/protocol.md`` documents each of these; a test keeps the two in step.
"""

from __future__ import annotations

from agentls.effort import EFFORTS

PROTOCOL_VERSION = 2
MAX_FORKS = 1

SUBMIT = "agent/submit"
STEER = "agent/steer"
CANCEL = "agent/cancel"
FORK = "agent/fork"
CLOSE_PANE = "agent/closePane"
SET_EFFORT = "agent/setEffort"
SET_FAST_MODE = "agent/setFastMode"
SET_APPROVAL = "agent/setApproval"
AUXILIARY = "agent/auxiliary"
NEW_SESSION = "agent/newSession"
EVENT = "agent/event"
REQUEST_APPROVAL = "agent/requestApproval"


CLIENT_REQUESTS = (
    SUBMIT,
    STEER,
    CANCEL,
    FORK,
    CLOSE_PANE,
    SET_EFFORT,
    SET_FAST_MODE,
    SET_APPROVAL,
    AUXILIARY,
    NEW_SESSION,
)

EVENT_KINDS = (
    "turn.started",
    "message.delta",
    "reasoning.delta",
    "tool.started",
    "tool.output",
    "tool.finished",
    "steer.admitted",
    "steer.applied",
    "usage",
    "turn.finished",
    "pane.opened",
    "pane.closed",
    "model.retry",
    "plan.updated",
)


def capabilities() -> dict[str, object]:
    """``capabilities.experimental.agentls`` of the ``initialize`` result."""
    return {
        "protocolVersion": PROTOCOL_VERSION,
        "maxForks": MAX_FORKS,
        "efforts": list(EFFORTS),
        "methods": list(CLIENT_REQUESTS),
        "eventKinds": list(EVENT_KINDS),
    }
