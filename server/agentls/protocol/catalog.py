"""Every method of protocol v1 with its params type: what ``docs/protocol.md``
must document (a test checks it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from agentls.protocol import types
from agentls.protocol.methods import (
    AUXILIARY,
    CANCEL,
    CLOSE_PANE,
    EVENT,
    FORK,
    NEW_SESSION,
    REQUEST_APPROVAL,
    SET_APPROVAL,
    SET_EFFORT,
    SET_FAST_MODE,
    STEER,
    SUBMIT,
)


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
    Method(SET_EFFORT, "client→server", "request", types.SetEffortParams),
    Method(SET_FAST_MODE, "client→server", "request", types.SetFastModeParams),
    Method(SET_APPROVAL, "client→server", "request", types.SetApprovalParams),
    Method(AUXILIARY, "client→server", "request", types.AuxiliaryParams),
    Method(NEW_SESSION, "client→server", "request", types.NewSessionParams),
    Method(EVENT, "server→client", "notification"),
    Method(REQUEST_APPROVAL, "server→client", "request"),
)
