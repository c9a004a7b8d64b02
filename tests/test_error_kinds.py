"""Protocol error codes come from failure kinds, never from message text."""

from __future__ import annotations

import pytest

from agentls.domain import FailureKind
from agentls.protocol import errors
from agentls.worker.messages import Failure

EXPECTED: dict[FailureKind, int] = {
    "pane_unavailable": -32001,
    "fork_already_open": -32002,
    "stopping": -32003,
    "pane_busy": -32004,
    "invalid": -32602,
    "refused": -32600,
    "internal": -32603,
}


def test_every_kind_has_a_code() -> None:
    assert set(errors.CODES) == set(errors.ALL_KINDS)


@pytest.mark.parametrize("kind", sorted(EXPECTED))
def test_a_reworded_message_keeps_its_code(kind: FailureKind) -> None:
    for message in ("the original sentence", "entirely different words", "", "stopped"):
        error = errors.from_failure(Failure(kind, message, "main"))
        assert error.code == EXPECTED[kind]
        assert error.message == message
        assert error.data == {"pane": "main"}


def test_protocol_kinds() -> None:
    assert errors.invalid_params("x").code == -32602
    assert errors.invalid_request("x").code == -32600
    assert errors.pane_unavailable("fork-1").code == -32001
    assert errors.stopping().code == -32003
    assert errors.ProtocolError("cancelled", "gone").code == -32800
