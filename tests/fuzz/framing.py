"""Hypothesis strategies for LSP base framing: garbage that keeps the stream
in sync (a message the server can answer, or skip) and garbage that breaks
it (split from ``strategies``, which generates the messages themselves)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

from .strategies import OMIT, json_values

# --- framing ------------------------------------------------------------------------------


def _json_bytes(message: Any) -> bytes:
    return json.dumps(message).encode()


def _frame(body: bytes, headers: bytes = b"") -> bytes:
    return b"Content-Length: %d\r\n%s\r\n" % (len(body), headers) + body


def junk_id(n: int) -> str:
    return f"junk-{n:012d}"  # fixed width: the draws must not depend on n


HEADER_NAMES = st.sampled_from(
    [b"Content-Type", b"content-type", b"X-Fuzz", b"Accept", b"Content-Encoding", b"Foo"]
)
HEADER_VALUES = st.one_of(
    st.sampled_from(
        [
            b"application/vscode-jsonrpc; charset=utf-8",
            b"application/vscode-jsonrpc; charset=utf8",
            b"application/json",
            b"text/plain; charset=latin-1",
            b"",
        ]
    ),
    st.binary(max_size=40).map(lambda b: b.replace(b"\r", b"").replace(b"\n", b"")),
)


def _safe_line(b: bytes) -> bytes:
    """A header-ish line that cannot be taken for Content-Length, ending in CRLF."""
    b = b.replace(b"\r", b"").replace(b"\n", b"")
    if b"content-length" in b.lower():
        b = b"X-" + b.replace(b":", b"")
    return b + b"\r\n"


def _id_if_parsed(body: bytes) -> str | None:
    try:
        message = json.loads(body)
    except ValueError:
        return None
    found = message.get("id") if isinstance(message, dict) else None
    return found if isinstance(found, str) else None


@st.composite
def in_sync_garbage(draw: st.DrawFn) -> tuple[bytes, str | None]:
    """Bad input that leaves the framing intact (the next message is found where
    it should be). Returns the bytes and the id it carries, if any."""
    n = draw(st.integers(0, 10**11))
    kind = draw(
        st.sampled_from(
            [
                "not-json",
                "invalid-utf8",
                "top-level-not-object",
                "no-jsonrpc",
                "bom",
                "utf16",
                "extra-headers",
                "junk-lines",
                "leading-zeros",
                "response-from-client",
                "empty-object",
            ]
        )
    )
    msg_id = junk_id(n)
    request: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": "agent/setEffort"}
    request["params"] = {"effort": "low"}
    if kind == "not-json":
        body = draw(
            st.one_of(
                st.binary(min_size=1, max_size=200),
                st.sampled_from([b"{", b"}", b'{"jsonrpc":"2.0","id":', b"nul", b"[1,]"]),
                st.builds(lambda t: _json_bytes(request)[:t], st.integers(1, 40)),
            )
        )
        return _frame(body), None
    if kind == "invalid-utf8":
        raw = _json_bytes(request)
        at = draw(st.integers(0, len(raw)))
        bad = draw(st.sampled_from([b"\xff", b"\xfe\xff", b"\xc3", b"\xed\xa0\x80", b"\x80"]))
        # An encoded surrogate (\xed\xa0\x80) inside a string is let through: json.loads
        # decodes bytes with "surrogatepass". So the request may be answered, and if
        # the bytes landed in the id, under another id.
        body = raw[:at] + bad + raw[at:]
        return _frame(body), _id_if_parsed(body)
    if kind == "top-level-not-object":
        value = draw(json_values(surrogates=False).filter(lambda v: not isinstance(v, dict)))
        return _frame(_json_bytes(value)), None
    if kind == "no-jsonrpc":
        version = draw(st.one_of(st.just(OMIT), st.sampled_from(["1.0", "2", "", None, 2, "2.0 "])))
        message = {k: v for k, v in request.items() if k != "jsonrpc"}
        if version is not OMIT:
            message["jsonrpc"] = version
        return _frame(_json_bytes(message)), msg_id
    if kind == "bom":
        return _frame(b"\xef\xbb\xbf" + _json_bytes(request)), msg_id
    if kind == "utf16":
        codec = draw(st.sampled_from(["utf-16-le", "utf-16-be", "utf-16", "utf-32"]))
        return _frame(json.dumps(request).encode(codec)), msg_id
    if kind == "extra-headers":
        headers = draw(st.lists(st.tuples(HEADER_NAMES, HEADER_VALUES), min_size=1, max_size=4))
        extra = b"".join(_safe_line(name + b": " + value) for name, value in headers)
        body = _json_bytes(request)
        before = draw(st.booleans())
        head = b"Content-Length: %d\r\n" % len(body)
        return ((extra + head) if before else (head + extra)) + b"\r\n" + body, msg_id
    if kind == "junk-lines":
        lines = draw(st.lists(st.binary(max_size=60), min_size=1, max_size=4))
        return b"".join(_safe_line(line) for line in lines) + _frame(_json_bytes(request)), msg_id
    if kind == "leading-zeros":
        body = _json_bytes(request)
        return b"Content-Length: 000%d\r\n\r\n" % len(body) + body, msg_id
    if kind == "response-from-client":
        # The client answering a request the server never sent: to be ignored.
        return _frame(_json_bytes({"jsonrpc": "2.0", "id": msg_id, "result": None})), None
    return _frame(b"{}"), None


@st.composite
def desync_garbage(draw: st.DrawFn, *, huge: bool = False) -> bytes:
    """Broken framing: after it, the server cannot know where the next message
    starts without resynchronizing (or giving up in an orderly way)."""
    body = _json_bytes({"jsonrpc": "2.0", "id": "lost", "method": "agent/setEffort"})
    kinds = [
        "no-content-length",
        "negative",
        "non-numeric",
        "zero",
        "plus-sign",
        "spaces",
        "lowercase",
        "lf-only",
        "cr-only",
        "shorter",
        "longer",
        "partial-line",
    ]
    if huge:
        kinds.append("huge")
    kind = draw(st.sampled_from(kinds))
    if kind == "no-content-length":
        return b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n" + body
    if kind == "negative":
        return b"Content-Length: -%d\r\n\r\n" % len(body) + body
    if kind == "non-numeric":
        value = draw(st.sampled_from([b"abc", b"12a", b"1e3", b"0x10", b"", b"\xff", b"1 2"]))
        return b"Content-Length: " + value + b"\r\n\r\n" + body
    if kind == "zero":
        return b"Content-Length: 0\r\n\r\n" + body
    if kind == "plus-sign":
        return b"Content-Length: +%d\r\n\r\n" % len(body) + body
    if kind == "spaces":
        return b"Content-Length:  %d \r\n\r\n" % len(body) + body
    if kind == "lowercase":
        return b"content-length: %d\r\n\r\n" % len(body) + body
    if kind == "lf-only":
        return b"Content-Length: %d\n\n" % len(body) + body
    if kind == "cr-only":
        return b"Content-Length: %d\r\r" % len(body) + body
    if kind == "shorter":
        cut = draw(st.integers(1, len(body) - 1))
        return b"Content-Length: %d\r\n\r\n" % (len(body) - cut) + body
    if kind == "longer":
        extra = draw(st.integers(1, 100))
        return b"Content-Length: %d\r\n\r\n" % (len(body) + extra) + body
    if kind == "partial-line":
        return draw(st.binary(min_size=1, max_size=30).filter(lambda b: b"\n" not in b))
    return b"Content-Length: %d\r\n\r\n" % draw(st.integers(10**6, 10**15)) + body
