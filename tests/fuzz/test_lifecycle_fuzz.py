"""Fuzzing the LSP life cycle: out-of-order initialize/initialized/shutdown/exit,
agent/* requests before initialize, pipelined or not, ended by exit or by the
end of input. Each example runs a fresh server, which must end in order with
the exit code docs/protocol.md ("Shutdown") gives, every request answered once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from agentls.testing.fake_model import FakeModelThread

from .harness import (
    EXIT_WAIT,
    START_WAIT,
    Check,
    RawServer,
    Uninitialized,
    count_case,
    id_key,
    initialize_params,
)
from .oracle import check_result, expect_error, no_traceback
from .profile import TIMEOUT, fuzz
from .strategies import EFFORTS, OMIT, json_values, texts

pytestmark = pytest.mark.timeout(TIMEOUT)

STEPS = [
    "agent",
    "agent-bad-params",
    "submit",
    "unknown",
    "initialize",
    "initialize-bad",
    "initialized",
    "shutdown",
    "exit",
    "end-of-input",
    "wait",
]
# After shutdown only these may follow (a request there is defect D12, see test_defects.py).
AFTER_SHUTDOWN = ["initialized", "exit", "end-of-input", "wait", "shutdown-notification"]


@dataclass
class Pending:
    msg_id: str
    check: Check
    # Still unanswered, as far as the client knew, when it sent shutdown/exit or
    # closed the input: "the server is shutting down" (-32003) is then a fair answer.
    overtaken: bool = False


def _ok(response: dict[str, Any]) -> None:
    no_traceback(response)
    assert "result" in response, response


@fuzz(small=3, long=100, shrink=False)
@given(
    steps=st.lists(st.sampled_from(STEPS), min_size=1, max_size=10),
    tail=st.lists(st.sampled_from(AFTER_SHUTDOWN), max_size=3),
    effort=st.sampled_from(EFFORTS),
    bad_options=st.sampled_from(
        [{"effort": "turbo"}, {"approval": 5}, {"fastMode": "yes"}, {"idleTimeout": "2"}]
    ),
)
def test_life_cycle_in_any_order(
    fuzz_fake: FakeModelThread,
    fuzz_workspace: Path,
    steps: list[str],
    tail: list[str],
    effort: str,
    bad_options: dict[str, Any],
) -> None:
    """A fresh server, then life-cycle messages and requests in any order, pipelined
    (``wait`` steps aside): each answered as the state at that point says, every
    request answered exactly once before the process ends, and the exit code 0
    after shutdown + exit or the end of input, 1 after exit alone."""
    # Cut the plan at the first shutdown, then only what may follow it.
    if "shutdown" in steps:
        steps = [*steps[: steps.index("shutdown") + 1], *tail]
    for end in ("exit", "end-of-input"):
        if end in steps:
            steps = steps[: steps.index(end) + 1]
    assume(steps)
    count_case("life cycle in any order")
    server = RawServer(fuzz_fake.base_url, fuzz_workspace)
    pending: list[Pending] = []
    initialized = shut_down = False
    ended_by: str | None = None
    n = 0

    def request(method: str, params: Any, check: Check) -> None:
        nonlocal n
        n += 1
        msg_id = f"lc-{n}"
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not OMIT:
            message["params"] = params
        server.send(message)
        pending.append(Pending(msg_id, check))

    try:
        for step in steps:
            if step == "agent":
                params = {"effort": effort}
                if initialized:
                    expected = {"pane": "main", "effort": effort}
                    request("agent/setEffort", params, _result(expected))
                else:
                    request("agent/setEffort", params, expect_error(-32600))
            elif step == "agent-bad-params":
                # Before initialize either answer is right: not initialized, or bad params.
                request("agent/setFastMode", {"enabled": "yes"}, _bad_params(initialized))
            elif step == "submit":
                params = {"prompt": "hi"}
                request(
                    "agent/submit",
                    params,
                    _submit_result(params) if initialized else expect_error(-32600),
                )
            elif step == "unknown":
                request("agent/noSuchMethod", {}, expect_error(-32601))
            elif step == "initialize":
                if initialized:
                    request("initialize", initialize_params(server), expect_error(-32600))
                else:
                    # Requests sent before it must have been answered first: pipelined
                    # right behind them, initialize overtakes them (D21, test_defects.py).
                    for p in pending:
                        server.wait_response(p.msg_id)
                    request("initialize", initialize_params(server), _ok)
                    initialized = True
            elif step == "initialize-bad":
                params = initialize_params(server, **bad_options)
                names = ["initializationOptions", *bad_options]
                code = -32600 if initialized else -32602
                request(
                    "initialize", params, expect_error(code, names=None if initialized else names)
                )
            elif step == "initialized":
                server.notify("initialized", {})
            elif step == "shutdown-notification":
                server.notify("shutdown")  # a request sent as a notification: ignored
            elif step == "shutdown":
                overtake(server, pending)
                request("shutdown", OMIT, _null_result)
                shut_down = True
            elif step == "exit":
                overtake(server, pending)
                server.notify("exit")
                ended_by = "exit"
            elif step == "end-of-input":
                overtake(server, pending)
                server.close_input()
                ended_by = "end-of-input"
            elif step == "wait":
                for p in pending:
                    server.wait_response(p.msg_id)
        if ended_by is None:
            # Not ended yet: the orderly way.
            overtake(server, pending)
            if not shut_down:
                request("shutdown", OMIT, _null_result)
                shut_down = True
            server.notify("exit")
            ended_by = "exit"
        code = server.wait_exit(EXIT_WAIT + START_WAIT)
        server._reader.join(5)
        expected_code = 1 if ended_by == "exit" and not shut_down else 0
        assert code == expected_code, (
            f"exit code {code}, expected {expected_code} (steps: {steps}); "
            f"stderr: {server.stderr_tail()}"
        )
        assert not server.got.violations, server.got.violations
        # Every request sent before the end was answered, exactly once, before the exit.
        for p in pending:
            responses = server.responses(p.msg_id)
            assert len(responses) == 1, f"{len(responses)} responses to {p.msg_id} ({steps})"
            if p.overtaken and responses[0].get("error", {}).get("code") == -32003:
                continue
            p.check(responses[0])
        expected_keys = {id_key(p.msg_id) for p in pending}
        assert set(server.got.responses) <= expected_keys, server.got.responses.keys()
    finally:
        server.stop(kill=True)


def overtake(server: RawServer, pending: list[Pending]) -> None:
    """The client stops the server: whatever it has not seen answered yet may be
    refused as "the server is shutting down"."""
    for p in pending:
        if not server.responses(p.msg_id):
            p.overtaken = True


def _result(expected: Any) -> Check:
    def check(response: dict[str, Any]) -> None:
        no_traceback(response)
        assert response.get("result") == expected, response

    return check


def _null_result(response: dict[str, Any]) -> None:
    no_traceback(response)
    assert "result" in response and response["result"] is None, response


def _bad_params(initialized: bool) -> Check:
    def check(response: dict[str, Any]) -> None:
        no_traceback(response)
        codes = {-32602} if initialized else {-32600, -32602}
        assert response.get("error", {}).get("code") in codes, response

    return check


def _submit_result(params: dict[str, Any]) -> Check:
    def check(response: dict[str, Any]) -> None:
        no_traceback(response)
        if response.get("error", {}).get("code") == -32003:
            return  # still pending when the server stopped (strictly: D19, test_defects.py)
        assert "result" in response, response
        check_result("agent/submit", params, response["result"])

    return check


# --- initialize with params of every shape ---------------------------------------------

OPTION_FIELDS: dict[str, Callable[[Any], bool]] = {
    "model": lambda v: v is None or isinstance(v, str),
    "baseUrl": lambda v: v is None or isinstance(v, str),
    "effort": lambda v: v is None or (isinstance(v, str) and v in EFFORTS),
    "fastMode": lambda v: v is None or isinstance(v, bool),
    "workspace": lambda v: v is None or isinstance(v, str),
    "approval": lambda v: isinstance(v, str) and v in ("never", "on-request", "always"),
    "idleTimeout": lambda v: v is None or (isinstance(v, int | float) and not isinstance(v, bool)),
    "token": lambda v: v is None or isinstance(v, str),
}


def bad_options(options: Any) -> list[str]:
    if options is None:
        return []
    if not isinstance(options, dict):
        return ["initializationOptions"]
    return [name for name, ok in OPTION_FIELDS.items() if name in options and not ok(options[name])]


@st.composite
def initialize_variants(draw: st.DrawFn, workspace: str, base_url: str) -> Any:
    options: dict[str, Any] = {"workspace": workspace, "baseUrl": base_url}
    valid_values = {
        "model": st.sampled_from(["fuzz-model", "gpt-5.1-codex", ""]),
        "effort": st.sampled_from(EFFORTS),
        "fastMode": st.booleans(),
        "approval": st.sampled_from(["never", "on-request", "always"]),
        "idleTimeout": st.one_of(st.integers(1, 1000), st.floats(0.5, 1e6)),
        "token": texts(),
        "workspace": st.sampled_from([workspace, workspace + "/", "/nonexistent/dir"]),
    }
    for name in draw(st.lists(st.sampled_from(sorted(OPTION_FIELDS)), max_size=4, unique=True)):
        if draw(st.booleans()) and name in valid_values:
            options[name] = draw(valid_values[name])
        else:
            options[name] = draw(json_values(max_leaves=5))
    params: dict[str, Any] = {
        "processId": None,
        "rootUri": Path(workspace).as_uri(),
        "capabilities": {},
        "initializationOptions": options,
    }
    shape = draw(st.sampled_from(["options", "options", "not-object", "extra", "structure"]))
    if shape == "not-object":
        params["initializationOptions"] = draw(
            json_values(max_leaves=5).filter(lambda v: not isinstance(v, dict) and v is not None)
        )
    elif shape == "extra":
        params.update(draw(st.dictionaries(texts(max_size=10), json_values(max_leaves=5))))
    elif shape == "structure":
        # The LSP part of the params in a wrong shape (lsprotocol checks it).
        name = draw(st.sampled_from(["processId", "capabilities", "rootUri", "clientInfo"]))
        params[name] = draw(json_values(max_leaves=5))
    return params, shape


@fuzz(small=8, long=150)
@given(data=st.data())
def test_initialize_with_params_of_every_shape(
    uninitialized: Uninitialized, data: st.DataObject
) -> None:
    """initialize answers a result or -32602 — naming the field when it is one of
    initializationOptions — and never an internal error. A failed initialize
    leaves the server waiting for a good one."""
    fake, workspace = uninitialized.fake, uninitialized.workspace
    params, shape = data.draw(initialize_variants(str(workspace), fake.base_url))
    count_case("initialize, params of every shape")
    server = uninitialized.get()
    ok = False
    try:
        response = server.call("initialize", params, timeout=START_WAIT)
        no_traceback(response)
        options = params.get("initializationOptions")
        bad = bad_options(options)
        if "error" in response:
            assert response["error"]["code"] == -32602, response
            if bad and shape != "structure":
                message = response["error"]["message"]
                assert "initializationOptions" in message, message
                assert any(name in message for name in bad), message
            # Not initialized: agent/* is still refused, and a good initialize works.
            refused = server.call("agent/setEffort", {"effort": "low"})
            assert refused.get("error", {}).get("code") == -32600, refused
            ok = True
        else:
            assert not bad or shape == "structure", f"accepted bad options {bad}: {options}"
            agentls = response["result"]["capabilities"]["experimental"]["agentls"]
            assert agentls["protocolVersion"] == 2, agentls
    finally:
        if not ok:
            uninitialized.discard()  # initialized (or broken): the next example needs a fresh one
