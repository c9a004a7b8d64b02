"""Hypothesis strategies for the JSON-RPC surface, and the oracle that says
what the server must answer to each generated request.

The oracle is written from docs/protocol.md, not from the server's code:
``check_params`` decides whether params are valid and which fields are bad.

``KNOWN_DEFECTS`` lists inputs that currently break the server. The broad
fuzz tests ``assume()`` them away so they stay green and keep guarding
everything else; each defect has its own strict-xfail test that generates
exactly that class. When a defect is fixed: unmark its test and delete its
entry here, so the broad tests cover that ground again.
"""

from __future__ import annotations

import functools
import re
import urllib.parse
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

# --- the protocol, as documented -------------------------------------------------------

AGENT_METHODS = (
    "agent/submit",
    "agent/steer",
    "agent/cancel",
    "agent/fork",
    "agent/closePane",
    "agent/setEffort",
    "agent/setFastMode",
    "agent/auxiliary",
    "agent/newSession",
)
LIFECYCLE = ("initialize", "initialized", "shutdown", "exit")
EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh")

# Error codes a request with *valid* params may end with (docs/protocol.md "Errors").
ALLOWED_ERRORS: dict[str, set[int]] = {
    "agent/submit": {-32001},
    "agent/steer": {-32001, -32600},  # -32600: 8 steers already pending
    "agent/cancel": {-32001},
    "agent/fork": {-32001, -32002},
    "agent/closePane": {-32001},
    "agent/setEffort": {-32001},
    "agent/setFastMode": {-32001},
    # -32800: cancelled by agent/cancel or closePane on its pane (or $/cancelRequest).
    "agent/auxiliary": {-32001, -32800},
    "agent/newSession": {-32001, -32004},
}

OMIT = object()  # "leave the params member out" (as opposed to "params": null)


def is_str(v: Any) -> bool:
    return isinstance(v, str)


def is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def is_bool(v: Any) -> bool:
    return isinstance(v, bool)


def is_token(v: Any) -> bool:
    return v is None or is_str(v) or is_int(v)


def is_position(v: Any) -> bool:
    return (
        isinstance(v, dict)
        and is_int(v.get("line", "missing"))
        and is_int(v.get("character", "missing"))
    )


def is_selection(v: Any) -> bool:
    if v is None:
        return True
    if not isinstance(v, dict) or not is_str(v.get("uri")) or not is_str(v.get("text")):
        return False
    r = v.get("range")
    return isinstance(r, dict) and is_position(r.get("start")) and is_position(r.get("end"))


def is_context(v: Any) -> bool:
    if v is None:
        return True
    if not isinstance(v, dict):
        return False
    docs = v.get("documents")
    docs_ok = docs is None or (isinstance(docs, list) and all(is_str(d) for d in docs))
    return is_selection(v.get("selection")) and docs_ok


def one_of_values(*values: str) -> Callable[[Any], bool]:
    return lambda v: isinstance(v, str) and v in values


@dataclass(frozen=True)
class Field:
    check: Callable[[Any], bool]
    required: bool = False


def _prompt() -> Field:
    return Field(is_str, required=True)


PANE = Field(is_str)
SPECS: dict[str, dict[str, Field]] = {
    "agent/submit": {
        "prompt": _prompt(),
        "pane": PANE,
        "context": Field(is_context),
        "workDoneToken": Field(is_token),
    },
    "agent/steer": {
        "prompt": _prompt(),
        "pane": PANE,
        "expectedTurnId": Field(lambda v: v is None or is_int(v)),
    },
    "agent/cancel": {"pane": PANE, "turnId": Field(lambda v: v is None or is_int(v))},
    "agent/fork": {"pane": PANE},
    "agent/closePane": {"pane": Field(is_str, required=True)},
    "agent/setEffort": {"effort": Field(one_of_values(*EFFORTS), required=True), "pane": PANE},
    "agent/setFastMode": {"enabled": Field(is_bool, required=True), "pane": PANE},
    "agent/auxiliary": {
        "prompt": _prompt(),
        "pane": PANE,
        "context": Field(one_of_values("clean", "conversation")),
    },
    "agent/newSession": {"pane": PANE},
}


def check_params(method: str, params: Any) -> list[str]:
    """The wire names of the bad fields (``["params"]`` if params is not an
    object); empty when the params are valid."""
    if params is OMIT or params is None:
        params = {}
    if not isinstance(params, dict):
        return ["params"]
    bad = []
    for name, spec in SPECS[method].items():
        if name not in params:
            if spec.required:
                bad.append(name)
        elif not spec.check(params[name]):
            bad.append(name)
        elif name == "prompt" and not params[name].strip():
            bad.append(name)  # an empty prompt is -32602 too
    return bad


# --- JSON values -----------------------------------------------------------------------

SURROGATE = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
INTERESTING = [
    "",
    " ",
    "\t\r\n",
    "main",
    "fork-1",
    "fork-2",
    "low",
    "clean",
    "true",
    "false",
    "null",
    "0",
    "-1",
    "1e400",
    "\x00",
    "\u2028\u2029",
    "\ufeff",
    "\u202e",
    "😀",
    "é",
    "Content-Length: 5\r\n\r\n",
    "\r\n\r\n",
    '{"jsonrpc":"2.0"}',
    "agent/submit",
    "file:///etc/passwd",
    "../../../../etc/passwd",
    "%s%n%x",
    "a" * 1000,
]


@functools.cache  # built once: hypothesis caches work per strategy object
def texts(*, surrogates: bool = False, max_size: int = 40) -> st.SearchStrategy[str]:
    chars = st.characters(codec=None)
    if surrogates:
        chars = st.one_of(chars, SURROGATE)
    return st.one_of(st.text(chars, max_size=max_size), st.sampled_from(INTERESTING))


@functools.cache  # built once: hypothesis caches work per strategy object
def huge_strings() -> st.SearchStrategy[str]:
    """~0.1 to 1 MB, of one repeated character (ASCII, 2-, 3- or 4-byte UTF-8, NUL, space)."""
    return st.builds(
        lambda n, c: (c * n)[:n],
        st.integers(100_000, 1_000_000),
        st.sampled_from(["x", "é", "\u2028", "😀", "\x00", " ", "ab cd "]),
    )


@functools.cache  # built once: hypothesis caches work per strategy object
def numbers() -> st.SearchStrategy[int | float]:
    return st.one_of(
        st.integers(-(2**64), 2**64),
        st.sampled_from([0, -1, 1, 2**31, 2**53 + 1, 2**63, -(2**63) - 1, 10**300]),
        st.floats(allow_nan=False, allow_infinity=False),
        st.sampled_from([0.0, -0.0, 1.0, 1.5, 1e308, 5e-324]),
    )


@functools.cache  # built once: hypothesis caches work per strategy object
def leaves(*, surrogates: bool = True) -> st.SearchStrategy[Any]:
    return st.one_of(st.none(), st.booleans(), numbers(), texts(surrogates=surrogates))


@functools.cache  # built once: hypothesis caches work per strategy object
def json_values(
    *, surrogates: bool = True, max_leaves: int = 20, keys: st.SearchStrategy[str] | None = None
) -> st.SearchStrategy[Any]:
    """Any JSON value: every shape, nested a little."""
    keys = keys if keys is not None else texts(surrogates=surrogates, max_size=12)
    return st.recursive(
        leaves(surrogates=surrogates),
        lambda inner: st.one_of(
            st.lists(inner, max_size=5), st.dictionaries(keys, inner, max_size=5)
        ),
        max_leaves=max_leaves,
    )


def nest(depth: int, kind: str, leaf: Any = 1) -> Any:
    value = leaf
    for _ in range(depth):
        value = [value] if kind == "list" else {"a": value}
    return value


@functools.cache  # built once: hypothesis caches work per strategy object
def deep_values(max_depth: int) -> st.SearchStrategy[Any]:
    return st.builds(nest, st.integers(1, max_depth), st.sampled_from(["list", "dict"]))


@functools.cache  # built once: hypothesis caches work per strategy object
def anything(*, surrogates: bool = True) -> st.SearchStrategy[Any]:
    """Values for a field: any shape, deep nesting, and now and then a huge string."""
    return st.one_of(
        json_values(surrogates=surrogates),
        deep_values(max_depth=900),
        huge_strings(),
    )


# --- agent/* params ----------------------------------------------------------------------

PANES = st.one_of(
    st.sampled_from(["main", "main", "main", "fork-1", "fork-2", "fork-3"]),
    texts(surrogates=True, max_size=20),
)


@functools.cache  # built once: hypothesis caches work per strategy object
def prompts() -> st.SearchStrategy[str]:
    return st.one_of(
        st.sampled_from(["hi", "ok?", "  ", "", "Why does test_median fail?"]),
        texts(surrogates=True, max_size=60),
        huge_strings(),
    )


@functools.cache  # built once: hypothesis caches work per strategy object
def uris() -> st.SearchStrategy[str]:
    return st.one_of(
        st.sampled_from(
            ["file:///repo/stats.py", "file:///", "untitled:Untitled-1", "file://host/x", ""]
        ),
        st.builds(lambda t: "file:///" + urllib.parse.quote(t), texts()),
        texts(surrogates=True),
    )


@functools.cache  # built once: hypothesis caches work per strategy object
def positions() -> st.SearchStrategy[dict[str, Any]]:
    ints = st.one_of(st.integers(0, 10**6), st.integers(-(2**63), 2**63))
    return st.fixed_dictionaries({"line": ints, "character": ints})


@functools.cache  # built once: hypothesis caches work per strategy object
def contexts() -> st.SearchStrategy[dict[str, Any]]:
    selection = st.fixed_dictionaries(
        {
            "uri": uris(),
            "range": st.fixed_dictionaries({"start": positions(), "end": positions()}),
            "text": st.one_of(texts(surrogates=True, max_size=200), huge_strings()),
        }
    )
    return st.fixed_dictionaries(
        {},
        optional={
            "selection": st.one_of(st.none(), selection),
            "documents": st.one_of(st.none(), st.lists(uris(), max_size=4)),
        },
    )


VALID_FIELDS: dict[str, dict[str, st.SearchStrategy[Any]]] = {
    "agent/submit": {
        "prompt": prompts(),
        "pane": PANES,
        "context": st.one_of(st.none(), contexts()),
        "workDoneToken": st.one_of(st.none(), st.integers(-(2**63), 2**63), texts(surrogates=True)),
    },
    "agent/steer": {
        "prompt": prompts(),
        "pane": PANES,
        "expectedTurnId": st.one_of(st.none(), st.integers(-5, 50), st.integers()),
    },
    "agent/cancel": {
        "pane": PANES,
        "turnId": st.one_of(st.none(), st.integers(-5, 50), st.integers()),
    },
    "agent/fork": {"pane": PANES},
    "agent/closePane": {"pane": PANES},
    "agent/setEffort": {"effort": st.sampled_from(EFFORTS), "pane": PANES},
    "agent/setFastMode": {"enabled": st.booleans(), "pane": PANES},
    "agent/auxiliary": {
        "prompt": prompts(),
        "pane": PANES,
        "context": st.sampled_from(["clean", "conversation"]),
    },
    "agent/newSession": {"pane": PANES},
}

# Unknown fields, including near-misses of real ones (snake_case, wrong case).
EXTRA_KEYS = st.one_of(
    st.sampled_from(
        [
            "turn_id",
            "Prompt",
            "PANE",
            "work_done_token",
            "expected_turn_id",
            "__proto__",
            "constructor",
            "id",
            "method",
            "params",
            "result",
            "error",
            "",
        ]
    ),
    texts(surrogates=True, max_size=15),
)


@st.composite
def agent_params(draw: st.DrawFn, method: str) -> Any:
    """Params for ``method``: valid, valid plus unknown fields, one or two fields of a
    wrong shape, a required field missing, or no object at all."""
    shape = draw(
        st.sampled_from(["valid", "valid", "extra", "wrong", "wrong", "missing", "not-object"])
    )
    if shape == "not-object":
        return draw(
            st.one_of(
                st.just(OMIT),
                st.none(),
                json_values().filter(lambda v: not isinstance(v, dict)),
                huge_strings(),
            )
        )
    fields = VALID_FIELDS[method]
    params: dict[str, Any] = {}
    for name, strategy in fields.items():
        if SPECS[method][name].required or draw(st.booleans()):
            params[name] = draw(strategy)
    if shape == "extra":
        extra = draw(st.dictionaries(EXTRA_KEYS, anything(), min_size=1, max_size=3))
        params.update({k: v for k, v in extra.items() if k not in fields})
    elif shape == "wrong":
        for name in draw(st.lists(st.sampled_from(sorted(fields)), min_size=1, max_size=2)):
            params[name] = draw(anything())
    elif shape == "missing":
        required = [n for n, spec in SPECS[method].items() if spec.required]
        if required:
            params.pop(draw(st.sampled_from(required)), None)
    return params


@dataclass
class Call:
    """One request (or notification) a test sends."""

    method: Any
    params: Any = OMIT
    notification: bool = False
    extra_members: dict[str, Any] = field(default_factory=dict)

    def message(self, msg_id: Any) -> dict[str, Any]:
        message: dict[str, Any] = {"jsonrpc": "2.0"}
        if not self.notification:
            message["id"] = msg_id
        message["method"] = self.method
        if self.params is not OMIT:
            message["params"] = self.params
        message.update(self.extra_members)
        return message


@st.composite
def agent_calls(draw: st.DrawFn) -> Call:
    method = draw(st.sampled_from(AGENT_METHODS))
    return Call(method, draw(agent_params(method)))


# --- methods that are not agent/* ----------------------------------------------------------


def _lsp_methods() -> list[str]:
    from lsprotocol.types import METHOD_TO_TYPES

    return sorted(m for m in METHOD_TO_TYPES if m not in LIFECYCLE)


LSP_METHODS = _lsp_methods()
KNOWN_METHODS = set(LSP_METHODS) | set(LIFECYCLE) | set(AGENT_METHODS)

unknown_method_names = st.one_of(
    texts(surrogates=True, max_size=60),
    st.builds(lambda t: "agent/" + t, texts(max_size=20)),
    st.sampled_from(
        [
            "",
            "agent/",
            "agent/Submit",
            "agent/submit ",
            " agent/submit",
            "agent/event",
            "agent/requestApproval",
            "AGENT/SUBMIT",
            "$/unknown",
            "rpc.discover",
            "agentls/invalidMessage",
            "textDocument/",
            "agent/submit\x00",
        ]
    ),
).filter(lambda m: m not in KNOWN_METHODS)


# --- ids ---------------------------------------------------------------------------------

ID_KINDS = ("int", "str", "null", "float", "bool", "object", "array")


# --- known defects (see the module docstring) --------------------------------------------


def _walk(value: Any, depth: int = 0) -> Iterator[tuple[int, Any]]:
    """Yield (depth, value) for every value inside ``value``."""
    stack: list[tuple[int, Any]] = [(depth, value)]
    while stack:
        d, v = stack.pop()
        yield d, v
        if isinstance(v, dict):
            stack.extend((d + 1, x) for x in v.values())
        elif isinstance(v, list):
            stack.extend((d + 1, x) for x in v)


def _strings(value: Any) -> Any:
    for _, v in _walk(value):
        if isinstance(v, str):
            yield v
        elif isinstance(v, dict):
            yield from (k for k in v if isinstance(k, str))


def nested_jsonrpc_key(message: Any) -> bool:
    """D1: an object below the top level with a "jsonrpc" member."""
    return any(d > 0 and isinstance(v, dict) and "jsonrpc" in v for d, v in _walk(message))


def nesting_depth(message: Any) -> int:
    return max(depth for depth, _ in _walk(message))


def too_deep(message: Any) -> bool:
    """D2: nested deeper than the server's JSON decoder can take (~980)."""
    return nesting_depth(message) > 950


_SURROGATES = re.compile("[\ud800-\udfff]")


def has_surrogate(text: str) -> bool:
    return _SURROGATES.search(text) is not None


def _prompt_strings(message: dict[str, Any]) -> list[Any]:
    """Every string that ends up in a conversation: prompts and submitted context."""
    params = message.get("params")
    if message.get("method") not in ("agent/submit", "agent/steer", "agent/auxiliary"):
        return []
    if not isinstance(params, dict):
        return []
    found = [params.get("prompt")]
    if message.get("method") == "agent/submit":
        found.extend(_strings(params.get("context")))
    return found


def surrogate_in_prompt(message: Any) -> bool:
    """D10: a lone surrogate in a prompt or its context."""
    if not isinstance(message, dict):
        return False
    return any(isinstance(s, str) and has_surrogate(s) for s in _prompt_strings(message))


def _uri_breaks_urlparse(uri: Any) -> bool:
    if not isinstance(uri, str) or not uri.startswith("file:"):
        return False
    try:
        urllib.parse.urlparse(uri)
    except ValueError:
        return True
    return False


def unparsable_file_uri(message: Any) -> bool:
    """D9: a context uri that urllib cannot parse ("file://[")."""
    if not isinstance(message, dict) or message.get("method") != "agent/submit":
        return False
    params = message.get("params")
    context = params.get("context") if isinstance(params, dict) else None
    if not isinstance(context, dict):
        return False
    uris_ = []
    if isinstance(context.get("selection"), dict):
        uris_.append(context["selection"].get("uri"))
    docs = context.get("documents")
    if isinstance(docs, list):
        uris_.extend(docs)
    return any(_uri_breaks_urlparse(u) for u in uris_)


LONG_LOGGED = 5000


def long_string_in_error(message: Any) -> bool:
    """D11: a long string the server echoes into an error message (and so into its
    log, whose key redaction is quadratic): the method name or a pane name."""
    if not isinstance(message, dict):
        return False
    method = message.get("method")
    if isinstance(method, str) and len(method) > LONG_LOGGED:
        return True
    params = message.get("params")
    pane = params.get("pane") if isinstance(params, dict) else None
    return isinstance(pane, str) and len(pane) > LONG_LOGGED


def huge_integer(message: Any) -> bool:
    """D14: an integer with more digits than Python's int parser allows (4300)."""
    return any(
        isinstance(v, int) and not isinstance(v, bool) and len(str(abs(v))) > 4300
        for _, v in _walk(message)
    )


def documents_not_a_list(message: Any) -> bool:
    """D15: context.documents given as a string or an object (accepted, converted)."""
    if not isinstance(message, dict) or message.get("method") != "agent/submit":
        return False
    params = message.get("params")
    context = params.get("context") if isinstance(params, dict) else None
    return isinstance(context, dict) and isinstance(context.get("documents"), str | dict)


def unknown_method_without_params(message: Any) -> bool:
    """D17: a request for a method pygls has no type for, with no params member."""
    return (
        isinstance(message, dict)
        and "id" in message
        and "params" not in message
        and message.get("method") not in KNOWN_METHODS
    )


def error_for_null_id(message: Any) -> bool:
    """D18: a request with id null that ends in an error (its error response has
    no id member at all). Only a request certain to succeed is let through."""
    if not isinstance(message, dict) or "id" not in message or message["id"] is not None:
        return False
    params = message.get("params", OMIT)
    certain = (
        message.get("method") == "agent/setEffort"
        and not check_params("agent/setEffort", params)
        and _pane_of(params) == "main"
    )
    return not certain


def _pane_of(params: Any) -> Any:
    return params.get("pane", "main") if isinstance(params, dict) else "main"


INTERNAL_METHOD = "agentls/invalidMessage"


def internal_method(message: Any) -> bool:
    """D20: the server's internal pseudo-method, reachable from the wire."""
    return isinstance(message, dict) and message.get("method") == INTERNAL_METHOD


# Empty: every defect the fuzzer found (D1-D21, tests/fuzz/test_defects.py) is
# fixed. A new one goes here, with a strict-xfail test of its own, until fixed.
KNOWN_DEFECTS: dict[str, Callable[[Any], bool]] = {}


def known_defect(message: Any) -> str | None:
    """The known defect ``message`` would trigger, if any."""
    for name, predicate in KNOWN_DEFECTS.items():
        if predicate(message):
            return name
    return None
