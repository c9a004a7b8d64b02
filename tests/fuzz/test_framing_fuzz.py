"""Fuzzing the byte level: LSP base framing and bodies that are not what they claim.

Garbage that keeps the framing intact must leave the server serving; any
garbage at all followed by the end of input must end the server in order.
(Garbage that breaks the framing and is *not* followed by the end of input:
see test_defects.py, D13.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentls.testing.fake_model import FakeModelThread

from .framing import desync_garbage, in_sync_garbage
from .harness import EXIT_WAIT, Live, RawServer, count_case, encode, frame, initialize
from .oracle import no_traceback
from .profile import TIMEOUT, fuzz
from .strategies import EFFORTS

pytestmark = pytest.mark.timeout(TIMEOUT)


@fuzz(small=30, long=500)
@given(
    plan=st.lists(st.one_of(st.sampled_from(EFFORTS), in_sync_garbage()), min_size=1, max_size=8)
)
def test_garbage_that_keeps_the_framing_leaves_the_server_serving(
    live: Live, plan: list[str | tuple[bytes, str | None]]
) -> None:
    """Bodies that are not JSON, not UTF-8, not objects, not JSON-RPC 2.0; extra
    headers, junk header lines, BOMs, UTF-16: interleaved with good requests,
    which must all be answered exactly right."""
    with live.case("framing: garbage that keeps the framing") as case:
        for step in plan:
            n = case.server.next_id()
            if isinstance(step, tuple):
                raw, carried = step
                # A body that is no request gets its parse or invalid-request
                # error with id null, as JSON-RPC says.
                case.allow(None)
                if carried is not None:
                    case.allow(carried)
                case.send_raw(raw)
            else:
                message = {
                    "jsonrpc": "2.0",
                    "id": n + 1_000_000,
                    "method": "agent/setEffort",
                    "params": {"effort": step},
                }

                def exact(response: dict[str, object], effort: str = step) -> None:
                    no_traceback(response)
                    assert response.get("result") == {"pane": "main", "effort": effort}, response

                case.request(message, exact)


@fuzz(small=3, long=80, shrink=False)
@given(
    garbage=st.one_of(desync_garbage(huge=True), in_sync_garbage().map(lambda g: g[0])),
    initialized=st.booleans(),
    then_valid=st.booleans(),
)
def test_any_garbage_then_end_of_input_stops_the_server_in_order(
    fuzz_fake: FakeModelThread,
    fuzz_workspace: Path,
    garbage: bytes,
    initialized: bool,
    then_valid: bool,
) -> None:
    """Whatever was sent, closing the input ends the server: exit code 0 (docs:
    "the end of input" stops it in order), nothing but protocol on stdout."""
    count_case("framing: garbage then end of input")
    server = RawServer(fuzz_fake.base_url, fuzz_workspace)
    try:
        if initialized:
            initialize(server)
        server.send_raw(garbage)
        if then_valid:
            good: dict[str, Any] = {"jsonrpc": "2.0", "id": "after", "method": "agent/setEffort"}
            good["params"] = {"effort": "low"}
            server.send_raw(frame(encode(good)))
        server.close_input()
        code = server.wait_exit(EXIT_WAIT)
        server._reader.join(5)
        assert code == 0, f"exit code {code}; stderr: {server.stderr_tail()}"
        assert not server.got.violations, server.got.violations
        assert len(server.responses("after")) <= 1
    finally:
        server.stop(kill=True)
