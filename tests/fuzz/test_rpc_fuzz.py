"""Property-based fuzzing of requests and notifications against one shared server.

After every example the server must be alive, answer the probe request
exactly right, have answered every request of the example exactly once (and
nothing else), and have written nothing but protocol messages to stdout.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from .harness import Live, id_key
from .oracle import expect_agent, expect_error, expect_method_not_found, expect_standard
from .profile import TIMEOUT, fuzz
from .strategies import (
    AGENT_METHODS,
    LSP_METHODS,
    OMIT,
    Call,
    agent_calls,
    agent_params,
    json_values,
    known_defect,
    texts,
    unknown_method_names,
)

pytestmark = pytest.mark.timeout(TIMEOUT)


def unique_id(live: Live, draw_kind: str, suffix: str = "") -> int | str:
    n = live.get().next_id() + 1_000_000
    return n if draw_kind == "int" else f"c{n}-{suffix}"


@fuzz(small=120, long=2500)
@given(
    calls=st.lists(agent_calls(), min_size=1, max_size=4),
    id_kinds=st.lists(st.sampled_from(["int", "str"]), min_size=4, max_size=4),
    suffix=texts(surrogates=True, max_size=8),
    cancel=st.one_of(st.none(), st.integers(0, 3)),
)
def test_agent_requests_with_params_of_every_shape(
    live: Live, calls: list[Call], id_kinds: list[str], suffix: str, cancel: int | None
) -> None:
    """agent/* requests, pipelined, with valid params, unknown fields, wrong shapes,
    missing fields, huge strings and deep nesting; now and then one is cancelled."""
    messages = [
        c.message(unique_id(live, k, suffix)) for c, k in zip(calls, id_kinds, strict=False)
    ]
    for message in messages:
        assume(known_defect(message) is None)
    with live.case("agent/* requests, params of every shape") as case:
        for call, message in zip(calls, messages, strict=True):
            sent = case.request(message)
            sent.check = expect_agent(call.method, call.params, sent)
        if cancel is not None and cancel < len(case.sent):
            case.cancel(case.sent[cancel])


@fuzz(small=30, long=600)
@given(
    method=unknown_method_names,
    params=st.one_of(st.just(OMIT), json_values()),
    notification=st.booleans(),
)
def test_unknown_methods(live: Live, method: str, params: Any, notification: bool) -> None:
    """An unknown method is -32601 as a request and ignored as a notification."""
    call = Call(method, params, notification=notification)
    message = call.message(unique_id(live, "int"))
    assume(known_defect(message) is None)
    with live.case("unknown methods") as case:
        if notification:
            case.notify(message)
        else:
            case.request(message, expect_method_not_found)


def _restore_settings(live: Live) -> None:
    live.get().notify(
        "workspace/didChangeConfiguration",
        {"settings": {"agentls": {"baseUrl": live.fake.base_url, "model": "fuzz-model"}}},
    )


@fuzz(small=30, long=600)
@given(
    method=st.sampled_from(LSP_METHODS),
    params=st.one_of(st.just(OMIT), json_values()),
    notification=st.booleans(),
)
def test_standard_lsp_methods(live: Live, method: str, params: Any, notification: bool) -> None:
    """Every standard LSP method but the life cycle, with params of any shape: one
    response with a result or a standard code per request, none per notification."""
    call = Call(method, params, notification=notification)
    message = call.message(unique_id(live, "int"))
    assume(known_defect(message) is None)
    with live.case("standard LSP methods") as case:
        if notification:
            case.notify(message)
        else:
            case.request(message, expect_standard)
    if method == "workspace/didChangeConfiguration":
        _restore_settings(live)  # the fuzzed settings may have pointed the model elsewhere


def _id_for(kind: str, n: int, text: str) -> Any:
    return {
        "int": n,
        "negative": -n,
        "big": n + 2**63,
        "str": f"{text}{n}",
        "float": n + 0.5,
        "null": None,
        "bool": n % 2 == 0,
    }[kind]


@fuzz(small=30, long=500)
@given(
    kind=st.sampled_from(["int", "negative", "big", "str", "float", "null", "bool"]),
    text=texts(surrogates=True, max_size=10),
    request=st.sampled_from(["good", "unknown", "bad-params"]),
)
def test_request_ids_of_every_kind(live: Live, kind: str, text: str, request: str) -> None:
    """Whatever the id, exactly one response: with that id, or id null for one
    JSON-RPC does not allow (floats with a fraction, booleans)."""
    msg_id = _id_for(kind, live.get().next_id() + 1_000_000, text)
    method, params, check = {
        "good": ("agent/setEffort", {"effort": "high"}, None),
        "unknown": ("agent/noSuchMethod", {}, expect_method_not_found),
        "bad-params": ("agent/setEffort", {"effort": 5}, expect_error(-32602, names=["effort"])),
    }[request]
    message = {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}
    assume(known_defect(message) is None)
    if kind == "bool":
        check = expect_error(-32600)  # whatever the method: the id itself is invalid
    with live.case("request ids of every kind") as case:
        sent = case.request(message, check, also_null=kind in ("float", "bool"))
    response = case.response(sent)
    assert response["id"] in (msg_id, None) and id_key(response["id"]) in sent.keys
    if kind == "bool":
        # Not an id JSON-RPC allows: an invalid request, answered with id null.
        assert response["id"] is None and response["error"]["code"] == -32600, response
    elif request == "good":
        assert response.get("result") == {"pane": "main", "effort": "high"}, response


notification_calls = st.one_of(
    agent_calls(),
    st.builds(Call, unknown_method_names, st.one_of(st.just(OMIT), json_values())),
    st.builds(
        Call,
        st.sampled_from(
            [
                "initialized",
                "$/cancelRequest",
                "$/setTrace",
                "$/progress",
                "window/workDoneProgress/cancel",
                "textDocument/didOpen",
                "textDocument/didChange",
                "textDocument/didClose",
                "textDocument/didSave",
                "workspace/didChangeWatchedFiles",
                "workspace/didChangeWorkspaceFolders",
                "workspace/didChangeConfiguration",
            ]
        ),
        st.one_of(st.just(OMIT), json_values()),
    ),
)


@fuzz(small=30, long=500)
@given(calls=st.lists(notification_calls, min_size=1, max_size=4))
def test_notifications_get_no_response(live: Live, calls: list[Call]) -> None:
    """Notifications (no id) — agent/* ones included, valid or not — get no
    response, and the server goes on serving."""
    messages = []
    for call in calls:
        call.notification = True
        messages.append(call.message(None))
        assume(known_defect(messages[-1]) is None)
    with live.case("notifications") as case:
        for message in messages:
            case.notify(message)
    if any(c.method == "workspace/didChangeConfiguration" for c in calls):
        _restore_settings(live)


@fuzz(small=20, long=300)
@given(method=st.sampled_from(AGENT_METHODS), data=st.data())
def test_agent_requests_answer_in_order_of_their_kind(
    live: Live, method: str, data: st.DataObject
) -> None:
    """A burst of the same agent/* request (one kind, many params): each is
    answered once, whatever the interleaving of turns, panes and cancels."""
    params = data.draw(st.lists(agent_params(method), min_size=2, max_size=6))
    messages = [Call(method, p).message(unique_id(live, "int")) for p in params]
    for message in messages:
        assume(known_defect(message) is None)
    with live.case("bursts of one agent/* method") as case:
        for p, message in zip(params, messages, strict=True):
            sent = case.request(message)
            sent.check = expect_agent(method, p, sent)
