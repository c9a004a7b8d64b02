"""The scripting DSL: :class:`Reply` (what the fake answers one request with) and
JSON scripts (``--script`` files)."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeAlias

from .http import phrase
from .tokens import TokenUsage, UsageArg, estimate_input_tokens, estimate_tokens, to_usage
from .waiting import Gate

DEFAULT_TEXT = "The quick brown fox jumps over the lazy dog."
DEFAULT_ENCRYPTED = "gAAAAA-fake-encrypted-reasoning-content"
_WORDS = re.compile(r"\s*\S+|\s+")


@dataclass(frozen=True, slots=True)
class MessageSpec:
    text: str
    chunks: tuple[str, ...] = field(repr=False)
    delay: float
    phase: str | None

    @property
    def output_tokens(self) -> int:
        return estimate_tokens(self.text)


@dataclass(frozen=True, slots=True)
class ReasoningSpec:
    parts: tuple[tuple[str, ...], ...]  # the deltas of each summary part
    encrypted_content: str | None
    delay: float

    @property
    def output_tokens(self) -> int:
        return estimate_tokens("".join(chunk for part in self.parts for chunk in part))


@dataclass(frozen=True, slots=True)
class FunctionCallSpec:
    name: str
    arguments: str
    call_id: str | None
    chunks: tuple[str, ...] = field(repr=False)
    delay: float

    @property
    def output_tokens(self) -> int:
        return estimate_tokens(self.arguments)


ItemSpec: TypeAlias = MessageSpec | ReasoningSpec | FunctionCallSpec
Ending: TypeAlias = Literal[
    "completed", "incomplete", "cut", "stall", "malformed", "error_event", "failed"
]


@dataclass(frozen=True, slots=True)
class HttpErrorSpec:
    status: int
    message: str
    type: str
    code: str | None
    param: str | None
    retry_after: float | None
    retry_after_ms: int | None
    headers: tuple[tuple[str, str], ...]


def _split(text: str, chunks: int | Sequence[str] | None, what: str) -> tuple[str, ...]:
    if chunks is None:
        return tuple(_WORDS.findall(text))
    if isinstance(chunks, int):
        if chunks < 1:
            raise ValueError(f"{what}: chunks must be at least 1")
        if not text:
            return ()
        if chunks > len(text):
            raise ValueError(f"{what}: cannot split {len(text)} characters into {chunks} deltas")
        size, extra = divmod(len(text), chunks)
        pieces: list[str] = []
        start = 0
        for i in range(chunks):
            end = start + size + (1 if i < extra else 0)
            pieces.append(text[start:end])
            start = end
        return tuple(pieces)
    pieces = [str(piece) for piece in chunks]
    if "".join(pieces) != text:
        raise ValueError(f"{what}: the chunks do not add up to the text")
    return tuple(piece for piece in pieces if piece)


@dataclass(frozen=True, kw_only=True)
class Reply:
    """How the fake answers one request. Build replies with the class methods.

    Streamed replies can be combined into one response with
    ``Reply.items(a, b)`` or ``a + b``.
    """

    output: tuple[ItemSpec, ...] = ()
    usage: TokenUsage | None = None
    delay_first: float = 0.0
    hold: Gate | None = None
    hold_after: int = 0
    ending: Ending = "completed"
    after: int | None = None
    error_message: str = ""
    error_code: str | None = None
    error_param: str | None = None
    incomplete_reason: str = "max_output_tokens"
    http: HttpErrorSpec | None = None
    raw: bytes | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.hold_after < 0 or (self.after is not None and self.after < 0):
            raise ValueError("hold_after and after count events: they must be >= 0")
        if self.delay_first < 0:
            raise ValueError("delay_first must be >= 0")
        if self.raw is not None and (
            self.output
            or self.http is not None
            or self.ending != "completed"
            or self.hold is not None
            or self.delay_first
            or self.usage is not None
        ):
            raise ValueError("a raw SSE reply is served as it is: it takes no other option")

    def usage_for(self, body: Mapping[str, Any]) -> TokenUsage:
        """The usage this reply reports to the request ``body``: the scripted one,
        or else the estimate (``input_tokens`` from
        :func:`~agentls.testing.fake_model.estimate_input_tokens`, ``output_tokens``
        from the text, summaries and arguments the reply writes; reasoning
        tokens, part of the output tokens as in the real API, from the summaries)."""
        if self.usage is not None:
            return self.usage
        reasoning = sum(s.output_tokens for s in self.output if isinstance(s, ReasoningSpec))
        return TokenUsage(
            input_tokens=estimate_input_tokens(body),
            output_tokens=sum(spec.output_tokens for spec in self.output),
            reasoning_tokens=reasoning,
            cached_tokens=0,
        )

    # -- items ---------------------------------------------------------------

    @classmethod
    def text(
        cls,
        text: str,
        *,
        chunks: int | Sequence[str] | None = None,
        delay: float = 0.0,
        phase: str | None = None,
        usage: UsageArg = None,
        delay_first: float = 0.0,
        hold: Gate | None = None,
        hold_after: int = 0,
    ) -> Reply:
        """An assistant message streamed as ``response.output_text.delta`` events.

        ``chunks``: None splits on words (``"Hello world"`` -> ``"Hello"``,
        ``" world"``), an int splits into that many even pieces, a list is used
        as is. ``delay``: seconds between deltas. ``phase``: the message's
        optional ``phase`` (``"commentary"`` / ``"final_answer"``).
        """
        spec = MessageSpec(text, _split(text, chunks, "Reply.text"), delay, phase)
        return cls(
            output=(spec,),
            usage=to_usage(usage),
            delay_first=delay_first,
            hold=hold,
            hold_after=hold_after,
        )

    @classmethod
    def many_deltas(
        cls,
        n: int,
        text: str = "x",
        *,
        usage: UsageArg = None,
        hold: Gate | None = None,
        hold_after: int = 0,
    ) -> Reply:
        """A message of ``n`` deltas, each ``text``, written as fast as possible."""
        if n < 1 or not text:
            raise ValueError("Reply.many_deltas needs n >= 1 and a non-empty text")
        spec = MessageSpec(text * n, (text,) * n, 0.0, None)
        return cls(output=(spec,), usage=to_usage(usage), hold=hold, hold_after=hold_after)

    @classmethod
    def reasoning(
        cls,
        summary_text: str | Sequence[str],
        *,
        encrypted_content: str | None = DEFAULT_ENCRYPTED,
        chunks: int | None = None,
        delay: float = 0.0,
        usage: UsageArg = None,
        delay_first: float = 0.0,
        hold: Gate | None = None,
        hold_after: int = 0,
    ) -> Reply:
        """A reasoning item; its summary streams as ``reasoning_summary_text`` deltas.

        ``summary_text`` may be a list for several summary parts; an empty
        string gives an item with no summary. ``encrypted_content`` (None to
        omit) is carried on the item as the real API does with
        ``include=["reasoning.encrypted_content"]``.
        """
        texts = [summary_text] if isinstance(summary_text, str) else list(summary_text)
        parts = tuple(_split(t, chunks, "Reply.reasoning") for t in texts if t)
        spec = ReasoningSpec(parts, encrypted_content, delay)
        return cls(
            output=(spec,),
            usage=to_usage(usage),
            delay_first=delay_first,
            hold=hold,
            hold_after=hold_after,
        )

    @classmethod
    def tool_call(
        cls,
        name: str,
        arguments: Mapping[str, Any] | str,
        *,
        call_id: str | None = None,
        chunks: int | Sequence[str] | None = None,
        delay: float = 0.0,
        usage: UsageArg = None,
        delay_first: float = 0.0,
        hold: Gate | None = None,
        hold_after: int = 0,
    ) -> Reply:
        """A ``function_call`` item streamed as ``function_call_arguments`` deltas.

        ``arguments``: a dict (sent as ``json.dumps(arguments)``) or a string
        sent verbatim (so invalid JSON can be tested). ``call_id`` defaults to
        ``call_N``, numbered per fake in streaming order.
        """
        args = arguments if isinstance(arguments, str) else json.dumps(dict(arguments))
        spec = FunctionCallSpec(name, args, call_id, _split(args, chunks, "Reply.tool_call"), delay)
        return cls(
            output=(spec,),
            usage=to_usage(usage),
            delay_first=delay_first,
            hold=hold,
            hold_after=hold_after,
        )

    @classmethod
    def items(
        cls,
        *parts: Reply,
        usage: UsageArg = None,
        delay_first: float | None = None,
        hold: Gate | None = None,
        hold_after: int = 0,
    ) -> Reply:
        """One response holding the output items of several replies, in order.

        Options not given here are taken from the first part that has them.
        """
        for part in parts:
            if part.http is not None or part.raw is not None or part.ending != "completed":
                raise ValueError("Reply.items combines plain replies (text, reasoning, tool calls)")
        first_hold = next((p for p in parts if p.hold is not None), None)
        return cls(
            output=tuple(item for part in parts for item in part.output),
            usage=to_usage(usage) or next((p.usage for p in parts if p.usage), None),
            delay_first=(
                delay_first
                if delay_first is not None
                else next((p.delay_first for p in parts if p.delay_first), 0.0)
            ),
            hold=hold if hold is not None else (first_hold.hold if first_hold else None),
            hold_after=hold_after
            if hold is not None or first_hold is None
            else first_hold.hold_after,
        )

    def __add__(self, other: Reply) -> Reply:
        return Reply.items(self, other)

    def with_usage(self, usage: UsageArg) -> Reply:
        """This reply with other token usage."""
        return dataclasses.replace(self, usage=to_usage(usage))

    def with_hold(self, gate: Gate, *, after: int = 0) -> Reply:
        """This reply, held at ``gate`` after ``response.created`` and ``after`` more events."""
        return dataclasses.replace(self, hold=gate, hold_after=after)

    # -- failures ------------------------------------------------------------

    @classmethod
    def http_error(
        cls,
        status: int,
        *,
        retry_after: float | None = None,
        retry_after_ms: int | None = None,
        message: str | None = None,
        code: str | None = None,
        type: str | None = None,
        param: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Reply:
        """A non-streamed JSON error, ``{"error": {"message", "type", "param", "code"}}``.

        ``retry_after`` / ``retry_after_ms`` set the ``retry-after`` /
        ``retry-after-ms`` headers. ``type`` and ``code`` default to what
        OpenAI sends for the status (e.g. 429 -> ``requests`` /
        ``rate_limit_exceeded``).
        """
        default_type, default_code = _ERROR_DEFAULTS.get(
            status, ("server_error", None) if status >= 500 else ("invalid_request_error", None)
        )
        if message is None:
            message = f"Fake model: HTTP {status} {phrase(status)}."
        spec = HttpErrorSpec(
            status=status,
            message=message,
            type=type or default_type,
            code=code if code is not None else default_code,
            param=param,
            retry_after=retry_after,
            retry_after_ms=retry_after_ms,
            headers=tuple((k.lower(), v) for k, v in (headers or {}).items()),
        )
        return cls(http=spec)

    @classmethod
    def cut(cls, after: int = 6, *, of: Reply | None = None) -> Reply:
        """Send ``after`` events of ``of`` (default: a short text), then close the connection.

        No ``response.completed`` and no final chunk: the client sees the body
        end early (httpx: ``RemoteProtocolError``).
        """
        return dataclasses.replace(of or cls.text(DEFAULT_TEXT), ending="cut", after=after)

    @classmethod
    def stall(cls, after: int = 6, *, of: Reply | None = None) -> Reply:
        """Send ``after`` events, then nothing more while keeping the connection open."""
        return dataclasses.replace(of or cls.text(DEFAULT_TEXT), ending="stall", after=after)

    @classmethod
    def hang(cls) -> Reply:
        """Send the headers and ``response.created``, then nothing more."""
        return cls.stall(after=1)

    @classmethod
    def malformed(cls, after: int = 6, *, of: Reply | None = None) -> Reply:
        """Send ``after`` events, then a ``data:`` line that is not JSON, then end the body."""
        return dataclasses.replace(of or cls.text(DEFAULT_TEXT), ending="malformed", after=after)

    @classmethod
    def error_event(
        cls,
        message: str = "The server had an error while processing your request.",
        *,
        code: str | None = "server_error",
        param: str | None = None,
        after: int = 2,
        of: Reply | None = None,
    ) -> Reply:
        """``after`` events (default: created, in_progress), an SSE ``error`` event, the end."""
        base = of or cls.text(DEFAULT_TEXT)
        return dataclasses.replace(
            base,
            ending="error_event",
            after=after,
            error_message=message,
            error_code=code,
            error_param=param,
        )

    @classmethod
    def failed(
        cls,
        message: str = "The server had an error while processing your request.",
        *,
        code: str = "server_error",
        after: int = 2,
        of: Reply | None = None,
    ) -> Reply:
        """``after`` events, then ``response.failed`` with ``response.error`` set.

        The failed response's ``output`` holds the items finished within those
        events.
        """
        base = of or cls.text(DEFAULT_TEXT)
        return dataclasses.replace(
            base, ending="failed", after=after, error_message=message, error_code=code
        )

    @classmethod
    def incomplete(cls, reason: str = "max_output_tokens", *, of: Reply | None = None) -> Reply:
        """A whole stream that ends with ``response.incomplete`` instead of completed."""
        base = of or cls.text(DEFAULT_TEXT)
        return dataclasses.replace(base, ending="incomplete", incomplete_reason=reason)

    # -- replay --------------------------------------------------------------

    @classmethod
    def raw_sse(cls, data: bytes) -> Reply:
        """Serve ``data`` as the body, byte for byte: ``200``, ``content-type:
        text/event-stream``, one HTTP chunk per SSE event (the bytes are not
        parsed, renumbered or checked), whatever the request asked for.

        For replaying a stream recorded from a real server, e.g.
        ``Reply.raw_sse(Path("0.sse").read_bytes())``.
        """
        if not isinstance(data, bytes | bytearray | memoryview):
            raise TypeError(f"Reply.raw_sse takes bytes, not {type(data).__name__}")
        return cls(raw=bytes(data))

    # -- JSON scripts --------------------------------------------------------

    @classmethod
    def from_json(cls, spec: Any) -> Reply:
        """A reply from its JSON form (used by ``--script`` files).

        A string is a text reply. Otherwise an object with one kind key:
        ``{"text": "hi", "chunks": 3, "delay": 0.01}``,
        ``{"reasoning": "summary", "encrypted_content": "..."}``,
        ``{"tool_call": {"name": "f", "arguments": {...}, "call_id": "c1"}}``,
        ``{"items": [reply, reply]}``, ``{"many_deltas": 1000, "delta": "x"}``,
        ``{"http_error": 429, "retry_after": 1, "message": "...", "code": "..."}``,
        ``{"cut": 5}``, ``{"stall": 3}``, ``{"malformed": 4}`` (optionally with
        ``"of": reply``), ``{"error_event": "message", "code": "..."}``,
        ``{"failed": "message", "code": "..."}``, ``{"incomplete": "reason"}``,
        ``{"hang": true}``. Streamed kinds also take ``"usage": {...}`` and
        ``"delay_first"``.
        """
        if isinstance(spec, str):
            return cls.text(spec)
        if not isinstance(spec, dict):
            raise ValueError(f"a reply must be a string or an object, not {spec!r}")
        kinds = [key for key in spec if key in _JSON_KINDS]
        if len(kinds) != 1:
            raise ValueError(f"a reply needs exactly one of {sorted(_JSON_KINDS)}: {spec!r}")
        kind = kinds[0]
        allowed = _JSON_KINDS[kind] | {kind}
        if kind != "http_error":
            allowed |= {"usage", "delay_first"}
        unknown = set(spec) - allowed
        if unknown:
            raise ValueError(f"unknown keys {sorted(unknown)} in {kind} reply {spec!r}")
        value = spec[kind]
        of = cls.from_json(spec["of"]) if "of" in spec else None
        reply: Reply
        if kind == "text":
            reply = cls.text(
                str(value),
                chunks=spec.get("chunks"),
                delay=float(spec.get("delay", 0.0)),
                phase=spec.get("phase"),
            )
        elif kind == "reasoning":
            if isinstance(value, dict):
                reply = cls.reasoning(
                    value.get("summary", ""),
                    encrypted_content=value.get("encrypted_content", DEFAULT_ENCRYPTED),
                )
            else:
                reply = cls.reasoning(
                    value, encrypted_content=spec.get("encrypted_content", DEFAULT_ENCRYPTED)
                )
        elif kind == "tool_call":
            if not isinstance(value, dict) or "name" not in value:
                raise ValueError(f"tool_call needs an object with a name: {spec!r}")
            reply = cls.tool_call(
                str(value["name"]), value.get("arguments", {}), call_id=value.get("call_id")
            )
        elif kind == "items":
            reply = cls.items(*(cls.from_json(part) for part in value))
        elif kind == "many_deltas":
            reply = cls.many_deltas(int(value), str(spec.get("delta", "x")))
        elif kind == "http_error":
            reply = cls.http_error(
                int(value),
                retry_after=spec.get("retry_after"),
                retry_after_ms=spec.get("retry_after_ms"),
                message=spec.get("message"),
                code=spec.get("code"),
                type=spec.get("type"),
            )
            return reply
        elif kind in ("cut", "stall", "malformed"):
            after = 6 if value is True else int(value)
            reply = {"cut": cls.cut, "stall": cls.stall, "malformed": cls.malformed}[kind](
                after, of=of
            )
        elif kind == "error_event":
            reply = cls.error_event(
                str(value),
                code=spec.get("code", "server_error"),
                after=int(spec.get("after", 2)),
                of=of,
            )
        elif kind == "failed":
            reply = cls.failed(
                str(value),
                code=spec.get("code", "server_error"),
                after=int(spec.get("after", 2)),
                of=of,
            )
        elif kind == "incomplete":
            reply = cls.incomplete(str(value) if value is not True else "max_output_tokens", of=of)
        else:  # hang
            reply = cls.hang()
        if "usage" in spec:
            reply = reply.with_usage(spec["usage"])
        if "delay_first" in spec:
            reply = dataclasses.replace(reply, delay_first=float(spec["delay_first"]))
        return reply


_JSON_KINDS: dict[str, frozenset[str]] = {
    "text": frozenset({"chunks", "delay", "phase"}),
    "reasoning": frozenset({"encrypted_content"}),
    "tool_call": frozenset(),
    "items": frozenset(),
    "many_deltas": frozenset({"delta"}),
    "http_error": frozenset({"retry_after", "retry_after_ms", "message", "code", "type"}),
    "cut": frozenset({"of"}),
    "stall": frozenset({"of"}),
    "malformed": frozenset({"of"}),
    "error_event": frozenset({"code", "after", "of"}),
    "failed": frozenset({"code", "after", "of"}),
    "incomplete": frozenset({"of"}),
    "hang": frozenset(),
}

_ERROR_DEFAULTS: dict[int, tuple[str, str | None]] = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("invalid_request_error", "unsupported_country_region_territory"),
    404: ("invalid_request_error", None),
    429: ("requests", "rate_limit_exceeded"),
}


def load_script(path: str | Path) -> list[Reply]:
    """Read a JSON list of replies (see :meth:`Reply.from_json`)."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, list):
        raise ValueError(f"{path}: a script is a JSON list of replies")
    return [Reply.from_json(item) for item in data]
