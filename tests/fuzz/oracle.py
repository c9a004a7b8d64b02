"""What a response must look like, from docs/protocol.md."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from .harness import Sent
from .strategies import ALLOWED_ERRORS, EFFORTS, OMIT, check_params

Check = Callable[[dict[str, Any]], None]

# JSON-RPC's and LSP's own codes, for methods that are not ours.
STANDARD_CODES = {-32700, -32600, -32601, -32602, -32603, -32002, -32800, -32801, -32803}


def no_traceback(response: dict[str, Any]) -> None:
    error = response.get("error")
    if error is None:
        return
    data = error.get("data")
    assert not (isinstance(data, dict) and "traceback" in data), (
        f"an internal error with a Python traceback: {error['message']}"
    )
    assert "Traceback (most recent call last)" not in str(error), error


def expect_error(code: int, *, names: list[str] | None = None) -> Check:
    def check(response: dict[str, Any]) -> None:
        no_traceback(response)
        assert "error" in response, f"expected error {code}, got a result"
        assert response["error"]["code"] == code, (
            f"expected error {code}, got {response['error']['code']}"
        )
        if names:
            message = response["error"]["message"]
            assert any(name in message for name in names), (
                f"the message does not name the field ({' or '.join(names)}): {message!r}"
            )

    return check


def _pane(params: Any) -> str:
    if isinstance(params, dict) and "pane" in params:
        return str(params["pane"])
    return "main"


def _usage(value: Any) -> None:
    assert isinstance(value, dict), value
    for key in ("inputTokens", "outputTokens", "reasoningTokens", "cachedTokens"):
        assert isinstance(value.get(key), int), f"usage.{key}: {value}"


def check_result(method: str, params: Any, result: Any) -> None:
    """The result of a successful agent/* request has its documented shape."""
    pane = _pane(params)
    assert isinstance(result, dict), f"result is not an object: {result!r}"
    if method == "agent/submit":
        # A fork's turn may end after the fork was promoted to main.
        assert result.get("pane") in (pane, "main"), result
        assert isinstance(result.get("turnId"), int), result
        # The fake model answers "ok" to everything: a failed turn is a server bug.
        assert result.get("status") in ("completed", "cancelled"), result
        assert isinstance(result.get("finalMessage"), str), result
        if result["status"] == "completed":
            assert result["finalMessage"] == "ok", result
        else:
            assert isinstance(result.get("receipt"), dict), result
        _usage(result.get("usage"))
    elif method == "agent/steer":
        assert result.get("outcome") in ("admitted", "promoted"), result
        assert isinstance(result.get("turnId"), int), result
    elif method == "agent/cancel":
        assert isinstance(result.get("cancelled"), int) and result["cancelled"] >= 0, result
        assert isinstance(result.get("receipts"), list), result
    elif method == "agent/fork":
        assert re.fullmatch(r"fork-[1-9][0-9]*", str(result.get("pane"))), result
        assert isinstance(result.get("items"), int) and result["items"] >= 0, result
    elif method == "agent/closePane":
        assert isinstance(result.get("cancelled"), int) and result["cancelled"] >= 0, result
    elif method == "agent/setEffort":
        assert result == {"pane": pane, "effort": params["effort"]}, result
        assert result["effort"] in EFFORTS
    elif method == "agent/setFastMode":
        assert result == {"pane": pane, "enabled": params["enabled"]}, result
    elif method == "agent/auxiliary":
        assert result == {"text": "ok"}, result
    elif method == "agent/newSession":
        assert result.get("pane") == pane, result
        assert isinstance(result.get("sessionId"), str) and result["sessionId"], result
    else:  # pragma: no cover
        raise AssertionError(f"no oracle for {method}")


def expect_agent(method: str, params: Any, sent: Sent) -> Check:
    """An initialized server's answer to agent/* ``method`` with ``params``:
    -32602 naming a bad field, else a well-formed result or a documented code."""
    bad = check_params(method, params)
    raw = {} if params is OMIT else params

    def check(response: dict[str, Any]) -> None:
        no_traceback(response)
        error = response.get("error")
        if sent.cancel_requested and error is not None and error["code"] == -32800:
            return  # $/cancelRequest before the handler ran
        if bad:
            expect_error(-32602, names=bad)(response)
            return
        if error is not None:
            assert error["code"] in ALLOWED_ERRORS[method], (
                f"{method} with valid params got {error['code']}: {error['message']}"
            )
            return
        assert "result" in response, response
        check_result(method, raw, response["result"])

    return check


def expect_method_not_found(response: dict[str, Any]) -> None:
    expect_error(-32601)(response)


def expect_standard(response: dict[str, Any]) -> None:
    """A standard LSP method the server may or may not implement: a result, or
    a JSON-RPC/LSP error code — never an internal error with a traceback."""
    no_traceback(response)
    error = response.get("error")
    if error is not None:
        assert error["code"] in STANDARD_CODES - {-32603}, error
