"""The method table of protocol v1: every method the server serves or sends.

``docs/protocol.md`` documents each of these; a test keeps the two in step.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from agent_host.config import EFFORTS
from agent_host.protocol import types

PROTOCOL_VERSION = 1
MAX_FORKS = 1

SUBMIT = "agent/submit"
STEER = "agent/steer"
CANCEL = "agent/cancel"
FORK = "agent/fork"
CLOSE_PANE = "agent/closePane"
SET_THINKING = "agent/setThinking"
SET_FAST_MODE = "agent/setFastMode"
SET_APPROVAL = "agent/setApproval"
AUXILIARY = "agent/auxiliary"
NEW_SESSION = "agent/newSession"
EVENT = "agent/event"
REQUEST_APPROVAL = "agent/requestApproval"


@dataclass(frozen=True)
class Method:
    name: str
    direction: Literal["client→server", "server→client"]
    kind: Literal["request", "notification"]
    params: type | None = None


METHODS: tuple[Method, ...] = (
    Method(SUBMIT, "client→server", "request", types.SubmitParams),
    Method(STEER, "client→server", "request", types.SteerParams),
    Method(CANCEL, "client→server", "request", types.CancelParams),
    Method(FORK, "client→server", "request", types.ForkParams),
    Method(CLOSE_PANE, "client→server", "request", types.ClosePaneParams),
    Method(SET_THINKING, "client→server", "request", types.SetThinkingParams),
    Method(SET_FAST_MODE, "client→server", "request", types.SetFastModeParams),
    Method(SET_APPROVAL, "client→server", "request", types.SetApprovalParams),
    Method(AUXILIARY, "client→server", "request", types.AuxiliaryParams),
    Method(NEW_SESSION, "client→server", "request", types.NewSessionParams),
    Method(EVENT, "server→client", "notification"),
    Method(REQUEST_APPROVAL, "server→client", "request"),
)

CLIENT_REQUESTS = tuple(m.name for m in METHODS if m.direction == "client→server")

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
    """``capabilities.experimental.agentHost`` of the ``initialize`` result."""
    return {
        "protocolVersion": PROTOCOL_VERSION,
        "maxForks": MAX_FORKS,
        "efforts": list(EFFORTS),
        "methods": list(CLIENT_REQUESTS),
        "eventKinds": list(EVENT_KINDS),
    }
