"""Defects the fuzzer found (D1-D21), one property test each — all fixed now,
kept as regression tests.

Each test starts with the minimal reproduction (``@example``), then generates
the whole class of inputs. A new defect gets a test here marked
``xfail(strict=True)`` with its reproduction in the reason, and an entry in
strategies.KNOWN_DEFECTS so the broad tests assume it away, until it is fixed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from agentls.testing.fake_model import FakeModelThread

from .framing import desync_garbage
from .harness import (
    START_WAIT,
    Live,
    RawServer,
    Uninitialized,
    count_case,
    encode,
    frame,
    id_key,
    initialize,
    initialize_params,
    running_server,
)
from .oracle import check_result, expect_error, no_traceback
from .profile import TIMEOUT, fuzz
from .strategies import (
    AGENT_METHODS,
    OMIT,
    json_values,
    nest,
    texts,
    unknown_method_names,
)

pytestmark = pytest.mark.timeout(TIMEOUT)

SETTLE = 0.5  # seconds an in-order request may trail the probe
HANG = 4.0  # seconds without an answer to a request a healthy server answers in milliseconds
ID = "<id>"  # replaced by a fresh id when sent


def with_id(live: Live, message: dict[str, Any]) -> dict[str, Any]:
    if message.get("id") == ID:
        return {**message, "id": live.get().next_id() + 2_000_000}
    return message


def set_effort(**params: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": ID,
        "method": "agent/setEffort",
        "params": {"effort": "low", **params},
    }


def expect_low(response: dict[str, Any]) -> None:
    no_traceback(response)
    assert response.get("result") == {"pane": "main", "effort": "low"}, response


def any_answer(response: dict[str, Any]) -> None:
    """A result, or an error without a Python traceback."""
    no_traceback(response)


# --- D1 -------------------------------------------------------------------------------------


def _with_jsonrpc_member(value: Any) -> dict[str, Any]:
    found = dict(value) if isinstance(value, dict) else {}
    found["jsonrpc"] = "2.0"
    return found


nested_jsonrpc = st.builds(
    lambda inner, depth, kind: nest(depth, kind, inner),
    st.builds(
        _with_jsonrpc_member,
        st.dictionaries(
            st.sampled_from(["id", "method", "params", "result", "error", "x"]),
            json_values(max_leaves=4),
            max_size=3,
        ),
    ),
    st.integers(0, 3),
    st.sampled_from(["list", "dict"]),
)


@fuzz(small=10, long=100, shrink=False)
@example(value={"jsonrpc": "2.0"})
@given(value=nested_jsonrpc)
def test_d1_nested_jsonrpc_member_is_just_an_unknown_field(live: Live, value: Any) -> None:
    with live.case("D1 nested jsonrpc member", settle=SETTLE) as case:
        case.request(with_id(live, set_effort(x=value)), expect_low)


# --- D2 -------------------------------------------------------------------------------------


@fuzz(small=10, long=100, shrink=False)
@example(depth=1000, kind="list")
@given(depth=st.integers(990, 20_000), kind=st.sampled_from(["list", "dict"]))
def test_d2_deep_nesting_gets_an_answer(live: Live, depth: int, kind: str) -> None:
    message = with_id(live, set_effort(x=nest(depth, kind)))
    raw = frame(_deep_json(message, depth, kind))
    with live.case("D2 deep nesting", settle=SETTLE) as case:
        case.request(message, any_answer, also_null=True, raw=raw)


def _deep_json(message: dict[str, Any], depth: int, kind: str) -> bytes:
    """The message's JSON, written without recursion (json.dumps cannot go that deep)."""
    inner = (
        b"[" * depth + b"1" + b"]" * depth
        if kind == "list"
        else (b'{"a":' * depth + b"1" + b"}" * depth)
    )
    shallow = {**message, "params": {**message["params"], "x": "@@X@@"}}
    return json.dumps(shallow).encode().replace(b'"@@X@@"', inner)


# --- D3 -------------------------------------------------------------------------------------


@fuzz(small=10, long=100, shrink=False)
@example(method=5)
@given(method=json_values(max_leaves=4).filter(lambda v: not isinstance(v, str)))
def test_d3_non_string_method_is_an_invalid_request(live: Live, method: Any) -> None:
    message = with_id(live, {"jsonrpc": "2.0", "id": ID, "method": method, "params": {}})
    with live.case("D3 non-string method", settle=SETTLE) as case:
        case.request(message, expect_error(-32600), also_null=True)


# --- D4 -------------------------------------------------------------------------------------


@fuzz(small=10, long=100, shrink=False)
@example(msg_id={}, method="agent/setEffort")
@example(msg_id=[], method="agent/submit")
@given(
    msg_id=st.one_of(
        st.dictionaries(texts(max_size=5), json_values(max_leaves=3), max_size=3),
        st.lists(json_values(max_leaves=3), max_size=3),
    ),
    method=st.sampled_from(AGENT_METHODS),
)
def test_d4_object_or_array_id_is_an_invalid_request(live: Live, msg_id: Any, method: str) -> None:
    params = {"effort": "low", "prompt": "hi", "enabled": True, "pane": "no-such-pane"}
    message = {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}
    with live.case("D4 object or array id", settle=SETTLE) as case:
        case.request(message, expect_error(-32600), also_null=True)


# --- D5 -------------------------------------------------------------------------------------


@fuzz(small=10, long=100, shrink=False)
@example(version=OMIT)
@given(
    version=st.one_of(st.just(OMIT), json_values(max_leaves=3).filter(lambda v: str(v) != "2.0"))
)
def test_d5_wrong_jsonrpc_version_is_an_invalid_request(live: Live, version: Any) -> None:
    message = with_id(live, set_effort())
    del message["jsonrpc"]
    if version is not OMIT:
        message["jsonrpc"] = version
    with live.case("D5 wrong jsonrpc version", settle=SETTLE) as case:
        case.request(message, expect_error(-32600), also_null=True)


# --- D6 -------------------------------------------------------------------------------------


@fuzz(small=10, long=100, shrink=False)
@example(body=[set_effort()])
@given(
    body=st.one_of(
        st.lists(st.just(set_effort()), min_size=1, max_size=3),
        json_values(max_leaves=4).filter(lambda v: not isinstance(v, dict)),
    )
)
def test_d6_non_object_body_gets_an_answer(live: Live, body: Any) -> None:
    if isinstance(body, list):
        body = [with_id(live, m) if m == set_effort() else m for m in body]
    requests = (
        [m for m in body if isinstance(m, dict) and "id" in m] if isinstance(body, list) else []
    )
    with live.case("D6 non-object body", finish=False) as case:
        for request in requests:
            case.allow(request["id"])
        case.allow(None)
        case.send_raw(frame(encode(body)))
        case.finish(settle=SETTLE)
        nulls = case.new_responses("null")
        answered = [case.new_responses(id_key(r["id"])) for r in requests]
        if requests and all(len(a) == 1 for a in answered):
            for a in answered:
                expect_low(a[0])
        else:
            assert len(nulls) == 1, f"no answer to the body {str(body)[:200]}"
            expect_error(-32600)(nulls[0])


# --- D7 -------------------------------------------------------------------------------------

_GOOD = json.dumps(set_effort() | {"id": 1}).encode()


@fuzz(small=10, long=100, shrink=False)
@example(body=_GOOD.replace(b'"low"', b'"\xfflow"'))
@given(
    body=st.one_of(
        st.builds(
            lambda at, bad: _GOOD[:at] + bad + _GOOD[at:],
            st.integers(0, len(_GOOD)),
            # Not \xed\xa0\x80 (an encoded surrogate): json.loads lets it through.
            st.sampled_from([b"\xff", b"\xc3", b"\xc0\xaf", b"\x80\x80"]),
        ),
        st.builds(lambda at: _GOOD[:at], st.integers(1, len(_GOOD) - 1)),
    )
)
def test_d7_unparsable_body_gets_a_parse_error(live: Live, body: bytes) -> None:
    with live.case("D7 unparsable body", finish=False) as case:
        case.allow(None)
        case.allow(1)
        case.send_raw(frame(body))
        case.finish(settle=SETTLE)
        answers = case.new_responses("null") + case.new_responses("1")
        assert len(answers) == 1, f"{len(answers)} answers to the body {body[:120]!r}"
        no_traceback(answers[0])
        assert answers[0].get("error", {}).get("code") in (-32700, -32600, -32602), answers


# --- D8 -------------------------------------------------------------------------------------


@fuzz(small=10, long=100, shrink=False)
@example(params=OMIT)
@given(params=st.one_of(st.just(OMIT), json_values(max_leaves=4)))
def test_d8_request_without_method_is_an_invalid_request(live: Live, params: Any) -> None:
    message: dict[str, Any] = with_id(live, {"jsonrpc": "2.0", "id": ID})
    if params is not OMIT:
        message["params"] = params
    with live.case("D8 no method", settle=SETTLE) as case:
        case.request(message, expect_error(-32600))


# --- D9 -------------------------------------------------------------------------------------

BROKEN_URIS = st.one_of(
    st.sampled_from(["file://[", "file://]", "file://[::1", "file://a]b", "file:[//["]),
    st.builds(lambda a, b: f"file://{a}[{b}", texts(max_size=5), texts(max_size=5)),
)


def submit_ok_or_names_context(response: dict[str, Any]) -> None:
    no_traceback(response)
    if "error" in response:
        expect_error(-32602, names=["context"])(response)
    else:
        check_result("agent/submit", {}, response["result"])


@fuzz(small=10, long=100, shrink=False)
@example(uri="file://[", where="documents")
@given(uri=BROKEN_URIS, where=st.sampled_from(["documents", "selection"]))
def test_d9_unparsable_uri_in_context(live: Live, uri: str, where: str) -> None:
    if where == "documents":
        context: dict[str, Any] = {"documents": [uri]}
    else:
        position = {"line": 0, "character": 0}
        context = {
            "selection": {"uri": uri, "text": "x", "range": {"start": position, "end": position}}
        }
    message = with_id(
        live,
        {
            "jsonrpc": "2.0",
            "id": ID,
            "method": "agent/submit",
            "params": {"prompt": "hi", "context": context},
        },
    )
    with live.case("D9 unparsable uri") as case:
        case.request(message, submit_ok_or_names_context)


# --- D10 ------------------------------------------------------------------------------------


def surrogate_text() -> st.SearchStrategy[str]:
    return st.builds(
        lambda a, s, b: a + s + b,
        texts(max_size=10),
        st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),
        texts(max_size=10),
    )


@fuzz(small=5, long=50, shrink=False)
@example(text="\ud800", where="prompt")
@given(text=surrogate_text(), where=st.sampled_from(["prompt", "selection", "documents", "steer"]))
def test_d10_lone_surrogate_does_not_poison_the_pane(live: Live, text: str, where: str) -> None:
    params: dict[str, Any]
    if where == "steer":
        method, params = "agent/steer", {"prompt": text}
    else:
        method, params = "agent/submit", {"prompt": text if where == "prompt" else "hi"}
    if where == "selection":
        position = {"line": 0, "character": 0}
        params["context"] = {
            "selection": {
                "uri": "file:///a",
                "text": text,
                "range": {"start": position, "end": position},
            }
        }
    elif where == "documents":
        params["context"] = {"documents": [text]}
    first = with_id(live, {"jsonrpc": "2.0", "id": ID, "method": method, "params": params})
    then = with_id(
        live,
        {"jsonrpc": "2.0", "id": ID, "method": "agent/submit", "params": {"prompt": "hi"}},
    )

    def first_ok(response: dict[str, Any]) -> None:
        no_traceback(response)
        if "error" in response:
            expect_error(-32602, names=["prompt", "context"])(response)
        elif method == "agent/submit":
            check_result(method, params, response["result"])

    def then_ok(response: dict[str, Any]) -> None:
        no_traceback(response)
        check_result("agent/submit", {}, response.get("result"))

    try:
        with live.case("D10 lone surrogate in a prompt") as case:
            case.request(first, first_ok)
            case.request(then, then_ok)
    finally:
        live.reset()  # a poisoned main would fail every later example


# --- D11 ------------------------------------------------------------------------------------


@fuzz(small=3, long=20, shrink=False)
@example(size=100_000, char="x", where="pane")
@given(
    size=st.integers(100_000, 1_000_000),
    char=st.sampled_from(["x", "é", "😀"]),
    where=st.sampled_from(["pane", "method"]),
)
def test_d11_long_strings_in_errors_do_not_hang(
    live: Live, size: int, char: str, where: str
) -> None:
    if where == "pane":
        message = with_id(live, set_effort(pane=char * size))
        check = expect_error(-32001)
    else:
        message = with_id(
            live, {"jsonrpc": "2.0", "id": ID, "method": "agent/" + char * size, "params": {}}
        )
        check = expect_error(-32601)
    with live.case("D11 long string in an error", settle=SETTLE, timeout=HANG) as case:
        case.request(message, check)


# --- D12 ------------------------------------------------------------------------------------


@fuzz(small=3, long=30, shrink=False)
@example(method="agent/setEffort", params={"effort": "low"})
@given(
    method=st.one_of(
        st.sampled_from([*AGENT_METHODS, "shutdown", "initialize", "textDocument/hover"]),
        unknown_method_names,
    ),
    params=st.one_of(st.just({"effort": "low", "prompt": "hi"}), json_values(max_leaves=4)),
)
def test_d12_requests_after_shutdown_are_refused(
    fuzz_fake: FakeModelThread, fuzz_workspace: Path, method: str, params: Any
) -> None:
    count_case("D12 requests after shutdown")
    with running_server(fuzz_fake.base_url, fuzz_workspace) as server:
        assert server.call("shutdown").get("result", "missing") is None
        response = server.wait_response(server.request(method, params, "after"), HANG)
        expect_error(-32600)(response)
        server.notify("exit")
        assert server.wait_exit() == 0


# --- D13 ------------------------------------------------------------------------------------


@fuzz(small=3, long=50, shrink=False)
@example(garbage=b"x")
@given(garbage=desync_garbage())
def test_d13_broken_framing_is_survived_or_ends_the_server(
    fuzz_fake: FakeModelThread, fuzz_workspace: Path, garbage: bytes
) -> None:
    count_case("D13 broken framing")
    with running_server(fuzz_fake.base_url, fuzz_workspace) as server:
        server.send_raw(garbage)
        for n in range(3):
            server.request("agent/setEffort", {"effort": "low"}, f"after-{n}")
        done = server.wait_for(lambda: bool(server.responses("after-2")) or server.got.eof, HANG)
        assert done, "the server went deaf: no answer and no exit"
        if server.responses("after-2"):
            expect_low(server.responses("after-2")[0])
        else:
            assert server.wait_exit() in (0, 1)
        assert not server.got.violations, server.got.violations


# --- D14 ------------------------------------------------------------------------------------


@fuzz(small=5, long=50, shrink=False)
@example(digits=4301)
@given(digits=st.integers(4301, 100_000))
def test_d14_huge_integers_get_an_answer(live: Live, digits: int) -> None:
    message = with_id(live, set_effort(x="@@N@@"))
    raw = frame(json.dumps(message).encode().replace(b'"@@N@@"', b"1" + b"0" * (digits - 1)))
    with live.case("D14 huge integer", settle=SETTLE) as case:
        case.request(message, any_answer, also_null=True, raw=raw)


# --- D15 ------------------------------------------------------------------------------------


@fuzz(small=5, long=50, shrink=False)
@example(documents="file:///a")
@given(
    documents=st.one_of(
        texts(max_size=10), st.dictionaries(texts(max_size=5), json_values(max_leaves=2))
    )
)
def test_d15_documents_must_be_a_list(live: Live, documents: Any) -> None:
    message = with_id(
        live,
        {
            "jsonrpc": "2.0",
            "id": ID,
            "method": "agent/submit",
            "params": {"prompt": "hi", "context": {"documents": documents}},
        },
    )
    with live.case("D15 documents not a list") as case:
        case.request(message, expect_error(-32602, names=["documents"]))


# --- D16 ------------------------------------------------------------------------------------


@fuzz(small=5, long=50, shrink=False)
@example(name="processId", value="x")
@given(
    name=st.sampled_from(
        ["processId", "capabilities", "rootUri", "clientInfo", "workspaceFolders"]
    ),
    value=st.one_of(st.sampled_from(["x", 5, True, [1]]), json_values(max_leaves=3)),
)
def test_d16_initialize_errors_name_the_field(
    uninitialized: Uninitialized, name: str, value: Any
) -> None:
    count_case("D16 initialize structure")
    server = uninitialized.get()
    params: dict[str, Any] = {"processId": None, "capabilities": {}, name: value}
    response = server.call("initialize", params)
    if "result" in response:
        uninitialized.discard()  # a shape lsprotocol accepts: nothing to name
        return
    expect_error(-32602, names=[name])(response)


# --- D17 ------------------------------------------------------------------------------------


@fuzz(small=10, long=100, shrink=False)
@example(method="foo/bar")
@given(method=unknown_method_names)
def test_d17_unknown_method_without_params_is_method_not_found(live: Live, method: str) -> None:
    message = with_id(live, {"jsonrpc": "2.0", "id": ID, "method": method})
    with live.case("D17 unknown method without params", settle=SETTLE) as case:
        case.request(message, expect_error(-32601))


# --- D18 ------------------------------------------------------------------------------------


@fuzz(small=5, long=50, shrink=False)
@example(method="foo/bar", params={})
@given(
    method=st.one_of(unknown_method_names, st.sampled_from(AGENT_METHODS)),
    params=st.one_of(st.just({"pane": "no-such-pane"}), json_values(max_leaves=3)),
)
def test_d18_error_to_a_null_id_carries_id_null(live: Live, method: str, params: Any) -> None:
    message = {"jsonrpc": "2.0", "id": None, "method": method, "params": params}
    with live.case("D18 error for id null", settle=SETTLE) as case:
        case.request(message, any_answer)


# --- D19 ------------------------------------------------------------------------------------


@fuzz(small=3, long=30, shrink=False)
@example(end="end-of-input")
@given(end=st.sampled_from(["end-of-input", "exit", "shutdown"]))
def test_d19_pending_submit_at_stop_gets_a_cancelled_result(
    fuzz_fake: FakeModelThread, fuzz_workspace: Path, end: str
) -> None:
    count_case("D19 pending submit at stop")
    server = RawServer(fuzz_fake.base_url, fuzz_workspace)
    try:
        initialize(server)
        server.request("agent/submit", {"prompt": "hi"}, "pending")
        if end == "end-of-input":
            server.close_input()
        elif end == "exit":
            server.notify("exit")
        else:
            server.request("shutdown", None, "stop")
            server.notify("exit")
        server.wait_exit()
        server._reader.join(5)
        responses = server.responses("pending")
        assert len(responses) == 1, responses
        no_traceback(responses[0])
        assert "result" in responses[0], responses[0]
        check_result("agent/submit", {}, responses[0]["result"])
    finally:
        server.stop(kill=True)


# --- D20 ------------------------------------------------------------------------------------


@fuzz(small=5, long=50, shrink=False)
@example(params=OMIT)
@given(params=st.one_of(st.just(OMIT), json_values(max_leaves=4)))
def test_d20_internal_method_is_not_reachable(live: Live, params: Any) -> None:
    message: dict[str, Any] = with_id(
        live, {"jsonrpc": "2.0", "id": ID, "method": "agentls/invalidMessage"}
    )
    if params is not OMIT:
        message["params"] = params
    with live.case("D20 internal method", settle=SETTLE) as case:
        case.request(message, expect_error(-32601))


# --- D21 ------------------------------------------------------------------------------------


@fuzz(small=2, long=20, shrink=False)
@example(method="agent/setEffort")
@given(method=st.sampled_from(AGENT_METHODS))
def test_d21_requests_before_initialize_are_refused_even_when_pipelined(
    fuzz_fake: FakeModelThread, fuzz_workspace: Path, method: str
) -> None:
    count_case("D21 request pipelined before initialize")
    server = RawServer(fuzz_fake.base_url, fuzz_workspace)
    try:
        params = {"effort": "low", "prompt": "hi", "enabled": True, "pane": "main"}
        early = {"jsonrpc": "2.0", "id": "early", "method": method, "params": params}
        init = {
            "jsonrpc": "2.0",
            "id": "init",
            "method": "initialize",
            "params": initialize_params(server),
        }
        server.send_raw(frame(encode(early)) + frame(encode(init)))
        expect_error(-32600)(server.wait_response("early", START_WAIT))
    finally:
        server.stop(kill=True)
