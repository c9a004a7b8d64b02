"""A scriptable fake of OpenAI's Responses API, served over real HTTP on 127.0.0.1.

The fake model is how agentls is exercised without a network or an API key:
the test suite, the ``make demo`` scripted session and the benchmarks all point
the real ``openai`` SDK at it. It is a small HTTP/1.1 server (asyncio and the
standard library only) that answers ``POST /v1/responses`` (and ``/responses``)
with Server-Sent Events in the exact wire format OpenAI uses::

    event: response.output_text.delta
    data: {"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1",...}

so the SDK's typed stream parser, raw line readers and our own parser all see
what they would see from the real service -- including the failures that are
hard to provoke on demand: HTTP errors with ``retry-after``, streams cut in the
middle, streams that stall, malformed events, ``error`` events and failed
responses. Every request is recorded for assertions.

Scripting
---------
Each request takes the next :class:`Reply` from a FIFO queue::

    from agentls.testing.fake_model import FakeModel, Reply

    async with FakeModel() as fake:          # listens on 127.0.0.1, a free port
        fake.script(
            Reply.text("Hello world"),
            Reply.tool_call("exec_command", {"cmd": "ls"}, call_id="call_ls"),
            Reply.reasoning("Listing first.") + Reply.tool_call("read_file", {"path": "a"}),
            Reply.http_error(429, retry_after=1),
        )
        client = openai.AsyncOpenAI(api_key="test", base_url=fake.base_url)
        ...
        await fake.wait_for_requests(2)
        assert fake.requests[1].body["input"][-1]["type"] == "function_call_output"

When the queue is empty, the function given to ``fake.on_request(fn)`` (also
usable as a decorator) decides: ``fn(request) -> Reply`` or an awaitable of
one. With neither, the request gets a 500 JSON error saying the script is
exhausted, so a test that sends one request too many fails readably.

Replies (all constructors are on :class:`Reply`):

* ``Reply.text(text, chunks=None|n|[...], delay=0.0)`` -- an assistant message;
  the text is streamed as ``response.output_text.delta`` events, split on words
  by default, into ``n`` even pieces, or exactly as the list given.
* ``Reply.reasoning(summary, encrypted_content=...)`` -- a reasoning item
  (summary streamed with ``response.reasoning_summary_text.delta``).
* ``Reply.tool_call(name, arguments, call_id=None)`` -- a ``function_call`` item
  (``arguments`` a dict, encoded as JSON, or a string sent verbatim); call ids
  default to ``call_1``, ``call_2``, ... in the order the fake streams them.
* Several items in one response: ``Reply.items(a, b, ...)`` or ``a + b``.
* ``Reply.many_deltas(n, text="x")`` -- a message of ``n`` tiny deltas, written
  as fast as the socket takes them (benchmarks).
* Failures: ``Reply.http_error(status, retry_after=...)`` (a JSON error body in
  OpenAI's shape), ``Reply.cut(after=k)`` (k events, then the connection is
  closed mid-body), ``Reply.stall(after=k)`` (k events, then silence with the
  connection open), ``Reply.hang()`` (headers and ``response.created`` only),
  ``Reply.malformed(after=k)`` (k events, then a ``data:`` line that is not
  JSON), ``Reply.error_event(message)`` (an SSE ``error`` event),
  ``Reply.failed(message)`` (``response.failed``) and
  ``Reply.incomplete(reason)`` (``response.incomplete``). ``cut``, ``stall``,
  ``malformed``, ``error_event``, ``failed`` and ``incomplete`` take ``of=`` to
  fail some other reply than their default text; k counts every event from
  ``response.created`` (sequence number 0) on.

Options accepted by every streamed constructor: ``usage=`` (a :class:`TokenUsage`,
anything with ``input_tokens``/``output_tokens``/``reasoning_tokens``/
``cached_tokens`` attributes, or a dict of those keys; the default is
:data:`DEFAULT_USAGE`), ``delay_first=`` (seconds before the first delta),
``hold=gate`` and ``hold_after=k``.

Holding a stream at a point
---------------------------
``gate = fake.gate()`` then ``Reply.text("...", hold=gate, hold_after=k)``:
the fake sends the headers, ``response.created`` and ``k`` further events, then
waits for ``gate.release()`` (callable from any thread) before the rest.
``await gate.wait_reached()`` returns once a stream has got there, which lets a
test act "while the model is streaming" without sleeping. A client that
disconnects while held is recorded with ``aborted=True``.

What a stream looks like
------------------------
``response.created``, ``response.in_progress``, then per output item
``response.output_item.added``, its part/summary ``added`` event, the deltas,
the ``done`` events and ``response.output_item.done``, and finally
``response.completed`` whose ``response.output`` holds every item and whose
``usage`` is in OpenAI's shape. Ids are ``resp_N``, ``msg_N``, ``rs_N`` and
``fc_N``, counted per fake. A request without ``"stream": true`` gets the final
response object as plain JSON.

Recorded requests
-----------------
``fake.requests`` lists a :class:`RecordedRequest` per request, in arrival
order: ``path``, ``headers`` (lower-case names), ``body`` (parsed JSON),
``t_arrival_ns`` and ``t_first_delta_ns`` (``time.perf_counter_ns()`` when the
request had arrived and when the first ``response.output_text.delta`` was
written), ``aborted`` (the client went away mid-reply), ``completed`` (the fake
sent the whole reply as scripted, through the end of the HTTP body) and
``status``. ``await request.wait_done()`` waits until the fake has finished with
it (completed, cut, aborted...). ``await fake.wait_for_requests(n)`` waits
until ``n`` requests have arrived, ``await fake.wait_until(predicate)`` until a
condition on them holds (``lambda: fake.requests[0].aborted``): the fake
detects a disconnect asynchronously, so wait for it rather than assert at once.
Every wait takes ``timeout=`` (default 5 s) and raises ``TimeoutError``.
``fake.errors`` collects tracebacks of anything that went wrong inside the fake
itself; it should stay empty.

Other ways to run it
--------------------
``run_in_thread()`` runs a fake in a background thread with its own event loop,
for synchronous code (the demo, benchmarks); its handle's methods are
thread-safe. From a shell::

    python -m agentls.testing.fake_model --port 0 --script replies.json

prints ``listening http://127.0.0.1:PORT/v1`` and serves until SIGTERM/SIGINT.
``replies.json`` is a JSON list of replies in the form :meth:`Reply.from_json`
reads, e.g. ``[{"text": "hi"}, {"tool_call": {"name": "exec_command",
"arguments": {"cmd": "ls"}}}, {"http_error": 429, "retry_after": 1}]``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import functools
import inspect
import itertools
import json
import logging
import re
import signal
import sys
import threading
import time
import traceback
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http import HTTPStatus
from pathlib import Path
from typing import Any, Literal, Protocol, Self, TypeAlias

__all__ = [
    "DEFAULT_USAGE",
    "FakeModel",
    "FakeModelThread",
    "Gate",
    "RecordedRequest",
    "Reply",
    "ReplyHandler",
    "TokenUsage",
    "UsageLike",
    "load_script",
    "main",
    "run_in_thread",
]

log = logging.getLogger("agentls.testing.fake_model")

RESPONSES_PATHS = frozenset({"/v1/responses", "/responses"})
_MAX_HEAD_BYTES = 64 * 1024
_BATCH_BYTES = 32 * 1024  # events are written in chunks of about this size
_DRAIN_ABOVE = 64 * 1024  # await drain() only when the transport buffer is larger
_DEFAULT_TEXT = "The quick brown fox jumps over the lazy dog."
_DEFAULT_ENCRYPTED = "gAAAAA-fake-encrypted-reasoning-content"
_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_WORDS = re.compile(r"\s*\S+|\s+")


# --------------------------------------------------------------------------- usage


@dataclass(frozen=True, slots=True)
class TokenUsage:
    """Token counts for ``response.completed``; ``total_tokens`` is input + output."""

    input_tokens: int = 10
    output_tokens: int = 5
    reasoning_tokens: int = 0
    cached_tokens: int = 0

    def to_api(self) -> dict[str, Any]:
        """The ``usage`` object in OpenAI's shape."""
        return {
            "input_tokens": self.input_tokens,
            "input_tokens_details": {"cached_tokens": self.cached_tokens, "cache_write_tokens": 0},
            "output_tokens": self.output_tokens,
            "output_tokens_details": {"reasoning_tokens": self.reasoning_tokens},
            "total_tokens": self.input_tokens + self.output_tokens,
        }


DEFAULT_USAGE = TokenUsage()


class UsageLike(Protocol):
    """Anything with the four token counts (e.g. ``agentls.model.types.Usage``)."""

    @property
    def input_tokens(self) -> int: ...
    @property
    def output_tokens(self) -> int: ...
    @property
    def reasoning_tokens(self) -> int: ...
    @property
    def cached_tokens(self) -> int: ...


UsageArg: TypeAlias = TokenUsage | UsageLike | Mapping[str, int] | None


def _to_usage(usage: UsageArg) -> TokenUsage | None:
    if usage is None or isinstance(usage, TokenUsage):
        return usage
    if isinstance(usage, Mapping):
        known = {f.name for f in dataclasses.fields(TokenUsage)}
        unknown = set(usage) - known
        if unknown:
            raise ValueError(
                f"unknown usage keys {sorted(unknown)}; expected some of {sorted(known)}"
            )
        return TokenUsage(**{key: int(value) for key, value in usage.items()})
    return TokenUsage(
        input_tokens=int(usage.input_tokens),
        output_tokens=int(usage.output_tokens),
        reasoning_tokens=int(usage.reasoning_tokens),
        cached_tokens=int(usage.cached_tokens),
    )


# ------------------------------------------------------------------ notifications


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class _Notifier:
    """A change signal that code on any event loop, or any thread, can wait on.

    State lives elsewhere; whoever changes it calls :meth:`notify`, and waiters
    re-check their predicate.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []

    def notify(self) -> None:
        with self._cond:
            self._cond.notify_all()
            waiters, self._waiters = self._waiters, []
        for loop, future in waiters:
            with contextlib.suppress(RuntimeError):  # that loop is closed: nobody waits
                loop.call_soon_threadsafe(_wake, future)

    async def wait_for(
        self,
        predicate: Callable[[], bool],
        seconds: float | None,
        what: str,
    ) -> None:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(seconds):
                while True:
                    with self._cond:
                        if predicate():
                            return
                        future: asyncio.Future[None] = loop.create_future()
                        self._waiters.append((loop, future))
                    await future
        except TimeoutError:
            raise TimeoutError(f"timed out after {seconds}s waiting for {what}") from None

    def wait_for_blocking(
        self,
        predicate: Callable[[], bool],
        timeout: float | None,
        what: str,
    ) -> None:
        with self._cond:
            if not self._cond.wait_for(predicate, timeout):
                raise TimeoutError(f"timed out after {timeout}s waiting for {what}")


class Gate:
    """A point where held streams wait until :meth:`release` is called.

    Create one with ``fake.gate()`` (or ``Gate()``), pass it as ``hold=`` to a
    reply. Thread-safe: ``release()`` may be called from any thread, and
    ``wait_reached()`` awaited on any event loop.
    """

    def __init__(self, name: str = "gate") -> None:
        self.name = name
        self._notifier = _Notifier()
        self._released = False
        self._reached = 0

    def __repr__(self) -> str:
        return f"<Gate {self.name} reached={self._reached} released={self._released}>"

    def release(self) -> None:
        """Let every stream held here (now or later) continue."""
        self._released = True
        self._notifier.notify()

    @property
    def released(self) -> bool:
        return self._released

    @property
    def reached(self) -> bool:
        """Whether a stream has reached this gate (its events so far are written)."""
        return self._reached > 0

    @property
    def reached_count(self) -> int:
        """How many streams have reached this gate."""
        return self._reached

    async def wait_reached(self, timeout: float | None = 5.0, *, count: int = 1) -> None:
        """Return once ``count`` streams have reached the gate; TimeoutError otherwise."""
        await self._notifier.wait_for(
            lambda: self._reached >= count, timeout, f"{count} stream(s) to reach {self.name}"
        )

    def wait_reached_blocking(self, timeout: float | None = 5.0, *, count: int = 1) -> None:
        """:meth:`wait_reached` for synchronous code (e.g. with :func:`run_in_thread`)."""
        self._notifier.wait_for_blocking(
            lambda: self._reached >= count, timeout, f"{count} stream(s) to reach {self.name}"
        )

    def _mark_reached(self) -> None:
        self._reached += 1
        self._notifier.notify()

    async def _wait_released(self) -> None:
        await self._notifier.wait_for(lambda: self._released, None, f"{self.name} release")


# ------------------------------------------------------------------------ requests


@dataclass(eq=False)
class RecordedRequest:
    """One HTTP request the fake received, and what became of it.

    ``index`` counts requests from 0; ``path`` has no query string (that is
    ``query``); ``headers`` has lower-case names; ``body`` is the parsed JSON
    object (``{}`` if there was none or it did not parse; ``raw_body`` has the
    bytes). Times are ``time.perf_counter_ns()``: ``t_arrival_ns`` when the
    request head had arrived, ``t_first_delta_ns`` when the first
    ``response.output_text.delta`` was written, ``t_done_ns`` when the fake
    finished with it. ``status`` is the HTTP status sent, ``reply`` the reply
    used, ``completed`` whether the whole reply was sent through the end of the
    HTTP body, ``aborted`` whether the client went away before that, and
    ``error`` why the fake could not answer (e.g. script exhausted).
    """

    index: int
    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: dict[str, Any]
    raw_body: bytes = field(repr=False)
    t_arrival_ns: int
    connection: int = 0
    """Which client connection carried the request (1, 2, ... per fake)."""
    t_first_delta_ns: int | None = None
    t_done_ns: int | None = None
    status: int | None = None
    reply: Reply | None = field(default=None, repr=False)
    aborted: bool = False
    completed: bool = False
    error: str | None = None
    _notifier: _Notifier = field(default_factory=_Notifier, repr=False)

    @property
    def stream(self) -> bool:
        """Whether the client asked for a streamed answer."""
        return self.body.get("stream") is True

    @property
    def done(self) -> bool:
        """Whether the fake has finished with this request (however it ended)."""
        return self.t_done_ns is not None

    @property
    def input(self) -> list[dict[str, Any]]:
        """The request's ``input`` items (a string input becomes one user message)."""
        value = self.body.get("input")
        if isinstance(value, str):
            return [{"role": "user", "content": value}]
        return list(value) if isinstance(value, list) else []

    async def wait_done(self, timeout: float | None = 5.0) -> Self:
        """Wait until the fake has finished with this request; TimeoutError otherwise."""
        await self._notifier.wait_for(lambda: self.done, timeout, f"request #{self.index} to end")
        return self

    def wait_done_blocking(self, timeout: float | None = 5.0) -> Self:
        self._notifier.wait_for_blocking(
            lambda: self.done, timeout, f"request #{self.index} to end"
        )
        return self


# ------------------------------------------------------------------------- replies


@dataclass(frozen=True, slots=True)
class _MessageSpec:
    text: str
    chunks: tuple[str, ...] = field(repr=False)
    delay: float
    phase: str | None


@dataclass(frozen=True, slots=True)
class _ReasoningSpec:
    parts: tuple[tuple[str, ...], ...]  # the deltas of each summary part
    encrypted_content: str | None
    delay: float


@dataclass(frozen=True, slots=True)
class _FunctionCallSpec:
    name: str
    arguments: str
    call_id: str | None
    chunks: tuple[str, ...] = field(repr=False)
    delay: float


_ItemSpec: TypeAlias = _MessageSpec | _ReasoningSpec | _FunctionCallSpec
_Ending: TypeAlias = Literal[
    "completed", "incomplete", "cut", "stall", "malformed", "error_event", "failed"
]


@dataclass(frozen=True, slots=True)
class _HttpError:
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

    output: tuple[_ItemSpec, ...] = ()
    usage: TokenUsage | None = None
    delay_first: float = 0.0
    hold: Gate | None = None
    hold_after: int = 0
    ending: _Ending = "completed"
    after: int | None = None
    error_message: str = ""
    error_code: str | None = None
    error_param: str | None = None
    incomplete_reason: str = "max_output_tokens"
    http: _HttpError | None = None

    def __post_init__(self) -> None:
        if self.hold_after < 0 or (self.after is not None and self.after < 0):
            raise ValueError("hold_after and after count events: they must be >= 0")
        if self.delay_first < 0:
            raise ValueError("delay_first must be >= 0")

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
        spec = _MessageSpec(text, _split(text, chunks, "Reply.text"), delay, phase)
        return cls(
            output=(spec,),
            usage=_to_usage(usage),
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
        spec = _MessageSpec(text * n, (text,) * n, 0.0, None)
        return cls(output=(spec,), usage=_to_usage(usage), hold=hold, hold_after=hold_after)

    @classmethod
    def reasoning(
        cls,
        summary_text: str | Sequence[str],
        *,
        encrypted_content: str | None = _DEFAULT_ENCRYPTED,
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
        spec = _ReasoningSpec(parts, encrypted_content, delay)
        return cls(
            output=(spec,),
            usage=_to_usage(usage),
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
        spec = _FunctionCallSpec(
            name, args, call_id, _split(args, chunks, "Reply.tool_call"), delay
        )
        return cls(
            output=(spec,),
            usage=_to_usage(usage),
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
            if part.http is not None or part.ending != "completed":
                raise ValueError("Reply.items combines plain replies (text, reasoning, tool calls)")
        first_hold = next((p for p in parts if p.hold is not None), None)
        return cls(
            output=tuple(item for part in parts for item in part.output),
            usage=_to_usage(usage) or next((p.usage for p in parts if p.usage), None),
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
        return dataclasses.replace(self, usage=_to_usage(usage))

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
            message = f"Fake model: HTTP {status} {_phrase(status)}."
        spec = _HttpError(
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
        return dataclasses.replace(of or cls.text(_DEFAULT_TEXT), ending="cut", after=after)

    @classmethod
    def stall(cls, after: int = 6, *, of: Reply | None = None) -> Reply:
        """Send ``after`` events, then nothing more while keeping the connection open."""
        return dataclasses.replace(of or cls.text(_DEFAULT_TEXT), ending="stall", after=after)

    @classmethod
    def hang(cls) -> Reply:
        """Send the headers and ``response.created``, then nothing more."""
        return cls.stall(after=1)

    @classmethod
    def malformed(cls, after: int = 6, *, of: Reply | None = None) -> Reply:
        """Send ``after`` events, then a ``data:`` line that is not JSON, then end the body."""
        return dataclasses.replace(of or cls.text(_DEFAULT_TEXT), ending="malformed", after=after)

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
        base = of or cls.text(_DEFAULT_TEXT)
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
        base = of or cls.text(_DEFAULT_TEXT)
        return dataclasses.replace(
            base, ending="failed", after=after, error_message=message, error_code=code
        )

    @classmethod
    def incomplete(cls, reason: str = "max_output_tokens", *, of: Reply | None = None) -> Reply:
        """A whole stream that ends with ``response.incomplete`` instead of completed."""
        base = of or cls.text(_DEFAULT_TEXT)
        return dataclasses.replace(base, ending="incomplete", incomplete_reason=reason)

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
                    encrypted_content=value.get("encrypted_content", _DEFAULT_ENCRYPTED),
                )
            else:
                reply = cls.reasoning(
                    value, encrypted_content=spec.get("encrypted_content", _DEFAULT_ENCRYPTED)
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


def _phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Unknown"


# ------------------------------------------------------------------------ rendering


@dataclass(slots=True)
class _Event:
    """One SSE event. ``data`` is encoded at write time; deltas instead carry
    ``tail``, their pre-encoded JSON after the sequence number."""

    type: str
    data: dict[str, Any] | None = None
    tail: bytes = b""
    pause: float = 0.0
    text_delta: bool = False
    done_item: dict[str, Any] | None = None  # set on response.output_item.done

    def encode(self, sequence_number: int) -> bytes:
        if self.data is None:
            return b"%b%d%b" % (_event_head(self.type), sequence_number, self.tail)
        payload = _JSON.encode({"type": self.type, "sequence_number": sequence_number, **self.data})
        return f"event: {self.type}\ndata: {payload}\n\n".encode()


@functools.cache
def _event_head(type_: str) -> bytes:
    return f'event: {type_}\ndata: {{"type":"{type_}","sequence_number":'.encode()


class _Deltas:
    """Builds the delta events of one item: ``{...where, "delta": d, ...extra}``."""

    def __init__(self, type_: str, where: dict[str, Any], extra: str = "") -> None:
        self.type = type_
        self._middle = ("," + _JSON.encode(where)[1:-1] + ',"delta":').encode()
        self._end = (extra + "}\n\n").encode()
        self._cache: dict[str, bytes] = {}

    def event(self, chunk: str, pause: float) -> _Event:
        tail = self._cache.get(chunk)
        if tail is None:
            tail = self._middle + _JSON.encode(chunk).encode() + self._end
            if len(self._cache) < 1024:
                self._cache[chunk] = tail
        return _Event(
            self.type, tail=tail, pause=pause, text_delta=self.type == "response.output_text.delta"
        )


@dataclass(slots=True)
class _Context:
    response_id: str
    created_at: int
    request: dict[str, Any]

    def response(
        self,
        status: str,
        output: list[dict[str, Any]],
        *,
        usage: dict[str, Any] | None = None,
        error: dict[str, Any] | None = None,
        incomplete_details: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        req = self.request

        def pick(key: str, kind: type | tuple[type, ...], default: Any) -> Any:
            value = req.get(key)
            return value if isinstance(value, kind) else default

        return {
            "id": self.response_id,
            "object": "response",
            "created_at": self.created_at,
            "status": status,
            "background": False,
            "completed_at": int(time.time()) if status == "completed" else None,
            "error": error,
            "incomplete_details": incomplete_details,
            "instructions": pick("instructions", str, None),
            "max_output_tokens": pick("max_output_tokens", int, None),
            "model": pick("model", str, "gpt-fake"),
            "output": output,
            "parallel_tool_calls": pick("parallel_tool_calls", bool, True),
            "previous_response_id": pick("previous_response_id", str, None),
            "reasoning": pick("reasoning", dict, None),
            "store": pick("store", bool, True),
            "temperature": 1.0,
            "text": pick("text", dict, {"format": {"type": "text"}}),
            "tool_choice": pick("tool_choice", (str, dict), "auto"),
            "tools": pick("tools", list, []),
            "top_p": 1.0,
            "truncation": "disabled",
            "usage": usage,
            "user": None,
            "metadata": pick("metadata", dict, {}),
        }


class _Ids:
    def __init__(self) -> None:
        self._counters: dict[str, Iterator[int]] = {}

    def next(self, prefix: str) -> str:
        counter = self._counters.setdefault(prefix, itertools.count(1))
        return f"{prefix}_{next(counter)}"


def _item_events(reply: Reply, ids: _Ids) -> Iterator[_Event]:
    """The events of the reply's output items, generated as they are written."""
    pauses = itertools.chain([reply.delay_first], itertools.repeat(-1.0))

    def pause(delay: float) -> float:
        first = next(pauses)
        return first if first >= 0 else delay

    for index, spec in enumerate(reply.output):
        item: dict[str, Any]
        if isinstance(spec, _MessageSpec):
            item_id = ids.next("msg")
            where = {"item_id": item_id, "output_index": index, "content_index": 0}
            added: dict[str, Any] = {
                "id": item_id,
                "type": "message",
                "status": "in_progress",
                "content": [],
                "role": "assistant",
            }
            if spec.phase is not None:
                added["phase"] = spec.phase
            part = {"type": "output_text", "annotations": [], "logprobs": [], "text": spec.text}
            item = {**added, "status": "completed", "content": [part]}
            yield _Event("response.output_item.added", {"output_index": index, "item": added})
            yield _Event("response.content_part.added", {**where, "part": {**part, "text": ""}})
            deltas = _Deltas("response.output_text.delta", where, ',"logprobs":[]')
            for chunk in spec.chunks:
                yield deltas.event(chunk, pause(spec.delay))
            yield _Event("response.output_text.done", {**where, "text": spec.text, "logprobs": []})
            yield _Event("response.content_part.done", {**where, "part": part})
        elif isinstance(spec, _ReasoningSpec):
            item_id = ids.next("rs")
            added = {"id": item_id, "type": "reasoning", "summary": []}
            if spec.encrypted_content is not None:
                added["encrypted_content"] = spec.encrypted_content
            yield _Event("response.output_item.added", {"output_index": index, "item": added})
            summary: list[dict[str, Any]] = []
            for summary_index, chunks in enumerate(spec.parts):
                text = "".join(chunks)
                where = {"item_id": item_id, "output_index": index, "summary_index": summary_index}
                yield _Event(
                    "response.reasoning_summary_part.added",
                    {**where, "part": {"type": "summary_text", "text": ""}},
                )
                deltas = _Deltas("response.reasoning_summary_text.delta", where)
                for chunk in chunks:
                    yield deltas.event(chunk, pause(spec.delay))
                yield _Event("response.reasoning_summary_text.done", {**where, "text": text})
                summary_part = {"type": "summary_text", "text": text}
                yield _Event(
                    "response.reasoning_summary_part.done", {**where, "part": summary_part}
                )
                summary.append(summary_part)
            item = {**added, "summary": summary}
        else:
            item_id = ids.next("fc")
            added = {
                "id": item_id,
                "type": "function_call",
                "status": "in_progress",
                "arguments": "",
                "call_id": spec.call_id or ids.next("call"),
                "name": spec.name,
            }
            where = {"item_id": item_id, "output_index": index}
            yield _Event("response.output_item.added", {"output_index": index, "item": added})
            deltas = _Deltas("response.function_call_arguments.delta", where)
            for chunk in spec.chunks:
                yield deltas.event(chunk, pause(spec.delay))
            yield _Event(
                "response.function_call_arguments.done", {**where, "arguments": spec.arguments}
            )
            item = {**added, "status": "completed", "arguments": spec.arguments}
        yield _Event(
            "response.output_item.done", {"output_index": index, "item": item}, done_item=item
        )


def _response_events(reply: Reply, ctx: _Context, ids: _Ids, *, terminal: bool) -> Iterator[_Event]:
    """A whole stream: created, in_progress, the items and (if ``terminal``) the end."""
    started = ctx.response("in_progress", [])
    yield _Event("response.created", {"response": started})
    yield _Event("response.in_progress", {"response": started})
    output: list[dict[str, Any]] = []
    for event in _item_events(reply, ids):
        if event.done_item is not None:
            output.append(event.done_item)
        yield event
    if terminal:
        usage = (reply.usage or DEFAULT_USAGE).to_api()
        if reply.ending == "incomplete":
            details = {"reason": reply.incomplete_reason}
            response = ctx.response("incomplete", output, usage=usage, incomplete_details=details)
            yield _Event("response.incomplete", {"response": response})
        else:
            response = ctx.response("completed", output, usage=usage)
            yield _Event("response.completed", {"response": response})


# ----------------------------------------------------------------------- the server


class _ClientGone(Exception):
    """The client disconnected; stop writing."""


class _BadRequest(Exception):
    pass


@dataclass(slots=True)
class _Head:
    method: str
    target: str
    version: str
    headers: dict[str, str]
    t_arrival_ns: int


class _Connection:
    """One client connection: a pump reading into a buffer (which also notices the
    client going away at any time) and a writer with lazy back-pressure."""

    def __init__(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, number: int
    ) -> None:
        self.number = number
        self.reader = reader
        self.writer = writer
        self.buffer = bytearray()
        self.lost = asyncio.Event()
        self._more = asyncio.Event()
        self._pump_task = asyncio.create_task(self._pump())

    async def _pump(self) -> None:
        try:
            while True:
                data = await self.reader.read(65536)
                if not data:
                    break
                self.buffer += data
                self._more.set()
        except (ConnectionError, OSError):
            pass
        finally:
            self.lost.set()
            self._more.set()

    async def _wait_more(self) -> None:
        self._more.clear()
        await self._more.wait()

    async def read_head(self) -> _Head | None:
        """The next request's head, or None if the client closed the connection."""
        while True:
            end = self.buffer.find(b"\r\n\r\n")
            if end >= 0:
                break
            if len(self.buffer) > _MAX_HEAD_BYTES:
                raise _BadRequest("request head too large")
            if self.lost.is_set():
                return None
            await self._wait_more()
        raw = bytes(self.buffer[:end])
        del self.buffer[: end + 4]
        t_arrival = time.perf_counter_ns()
        lines = raw.decode("latin-1").split("\r\n")
        try:
            method, target, version = lines[0].split(" ", 2)
        except ValueError:
            raise _BadRequest(f"bad request line {lines[0]!r}") from None
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if not sep:
                raise _BadRequest(f"bad header line {line!r}")
            key = name.strip().lower()
            value = value.strip()
            headers[key] = f"{headers[key]}, {value}" if key in headers else value
        return _Head(method, target, version, headers, t_arrival)

    async def read_exactly(self, n: int) -> bytes:
        while len(self.buffer) < n:
            if self.lost.is_set():
                raise _ClientGone
            await self._wait_more()
        data = bytes(self.buffer[:n])
        del self.buffer[:n]
        return data

    async def read_line(self) -> bytes:
        while (end := self.buffer.find(b"\r\n")) < 0:
            if self.lost.is_set():
                raise _ClientGone
            await self._wait_more()
        line = bytes(self.buffer[:end])
        del self.buffer[: end + 2]
        return line

    async def read_body(self, headers: Mapping[str, str]) -> bytes:
        if "chunked" in headers.get("transfer-encoding", "").lower():
            body = bytearray()
            while True:
                size_line = await self.read_line()
                try:
                    size = int(size_line.split(b";")[0].strip(), 16)
                except ValueError:
                    raise _BadRequest("bad chunk size") from None
                if size == 0:
                    while await self.read_line():  # trailers
                        pass
                    return bytes(body)
                body += await self.read_exactly(size)
                await self.read_exactly(2)
        length = headers.get("content-length")
        if length is None:
            return b""
        try:
            n = int(length)
        except ValueError:
            raise _BadRequest("bad content-length") from None
        return await self.read_exactly(n)

    @property
    def gone(self) -> bool:
        return self.lost.is_set() or self.writer.transport.is_closing()

    async def write(self, data: bytes, *, drain: bool = False) -> None:
        if self.gone:
            raise _ClientGone
        self.writer.write(data)
        if drain or self.writer.transport.get_write_buffer_size() > _DRAIN_ABOVE:
            try:
                await self.writer.drain()
            except (ConnectionError, OSError) as exc:
                raise _ClientGone from exc

    async def pause(self, seconds: float) -> None:
        """Sleep, unless the client goes away first."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.lost.wait(), seconds)
        if self.gone:
            raise _ClientGone

    async def until_gone(self) -> None:
        await self.lost.wait()
        raise _ClientGone

    def close(self, *, abort: bool = False) -> None:
        self._pump_task.cancel()
        if abort:
            self.writer.transport.abort()
        else:
            self.writer.close()


class _Batch:
    """SSE events collected into one HTTP chunk per write."""

    __slots__ = ("conn", "parts", "size")

    def __init__(self, conn: _Connection) -> None:
        self.conn = conn
        self.parts: list[bytes] = []
        self.size = 0

    def add(self, data: bytes) -> None:
        self.parts.append(data)
        self.size += len(data)

    async def flush(self, *, drain: bool = False) -> None:
        if self.parts:
            payload = b"".join(self.parts)
            self.parts.clear()
            self.size = 0
            await self.conn.write(b"%x\r\n%b\r\n" % (len(payload), payload), drain=drain)
        elif drain:
            await self.conn.write(b"", drain=True)
        elif self.conn.gone:
            raise _ClientGone


ReplyHandler: TypeAlias = Callable[[RecordedRequest], Reply | Awaitable[Reply]]


class _ScriptError(Exception):
    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code


def _error_body(message: str, type_: str, code: str | None, param: str | None = None) -> bytes:
    error = {"message": message, "type": type_, "param": param, "code": code}
    return json.dumps({"error": error}, indent=2).encode()


class FakeModel:
    """The fake Responses API server. Use ``async with FakeModel() as fake:``.

    ``replies`` (and ``on_request``) may be given here too; ``host``/``port``
    choose where to listen (port 0: any free port).
    """

    def __init__(
        self,
        *replies: Reply,
        host: str = "127.0.0.1",
        port: int = 0,
        on_request: ReplyHandler | None = None,
    ) -> None:
        self.host = host
        self._requested_port = port
        self._script: deque[Reply] = deque(replies)
        self._handler: ReplyHandler | None = on_request
        self.requests: list[RecordedRequest] = []
        """Every request received, in arrival order."""
        self.errors: list[str] = []
        """Tracebacks of unexpected errors inside the fake (should stay empty)."""
        self._notifier = _Notifier()
        self._changes = 0  # bumped whenever a request arrives or ends
        self._ids = _Ids()
        self._server: asyncio.Server | None = None
        self._port: int | None = None
        self._connections: set[_Connection] = set()
        self._connection_count = 0
        self._tasks: set[asyncio.Task[Any]] = set()
        self._stopping = False

    # -- lifecycle -----------------------------------------------------------

    async def start(self) -> Self:
        if self._server is not None:
            return self
        self._stopping = False
        self._server = await asyncio.start_server(
            self._on_connection, self.host, self._requested_port
        )
        self._port = int(self._server.sockets[0].getsockname()[1])
        log.info("fake model listening on %s", self.base_url)
        return self

    async def stop(self) -> None:
        """Stop listening and close every connection (held streams end abruptly)."""
        server, self._server = self._server, None
        if server is None:
            return
        self._stopping = True
        server.close()
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        for conn in list(self._connections):
            conn.close(abort=True)
        await asyncio.gather(*tasks, return_exceptions=True)
        await server.wait_closed()

    async def __aenter__(self) -> Self:
        return await self.start()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    @property
    def port(self) -> int:
        if self._port is None:
            raise RuntimeError("the fake model is not started")
        return self._port

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` (no path)."""
        return f"http://{self.host}:{self.port}"

    @property
    def base_url(self) -> str:
        """The SDK's ``base_url``: ``http://127.0.0.1:PORT/v1``."""
        return f"{self.url}/v1"

    # -- scripting -----------------------------------------------------------

    def script(self, *replies: Reply) -> Self:
        """Append replies to the queue; each request takes the next one. Thread-safe."""
        for reply in replies:
            if not isinstance(reply, Reply):
                raise TypeError(f"script() takes Reply objects, not {reply!r}")
        self._script.extend(replies)
        return self

    def on_request(self, handler: ReplyHandler | None) -> ReplyHandler | None:
        """Answer requests with ``handler(request)`` once the queue is empty.

        Returns the handler, so it works as a decorator. The handler runs on
        the fake's event loop and may be a coroutine function.
        """
        self._handler = handler
        return handler

    @property
    def pending(self) -> int:
        """How many scripted replies are still queued."""
        return len(self._script)

    def gate(self, name: str | None = None) -> Gate:
        """A new :class:`Gate` for ``hold=``."""
        return Gate(name or self._ids.next("gate"))

    async def wait_for_requests(self, n: int, timeout: float | None = 5.0) -> list[RecordedRequest]:
        """Wait until at least ``n`` requests have arrived; return all requests so far."""
        await self._notifier.wait_for(
            lambda: len(self.requests) >= n,
            timeout,
            f"{n} request(s) ({len(self.requests)} arrived)",
        )
        return list(self.requests)

    async def wait_until(
        self,
        predicate: Callable[[], bool],
        timeout: float | None = 5.0,
    ) -> None:
        """Wait until ``predicate()`` is true, re-checking whenever a request
        arrives or ends; e.g. ``await fake.wait_until(lambda: fake.requests[0].aborted)``.
        """
        await self._notifier.wait_for(predicate, timeout, "the condition")

    def wait_for_change(self, timeout: float | None = 5.0) -> Coroutine[Any, Any, None]:
        """Wait for the next time a request arrives or ends (prefer :meth:`wait_until`).

        "Next" counts from this call, not from the first ``await``.
        """
        changes = self._changes
        return self._notifier.wait_for(lambda: self._changes != changes, timeout, "a change")

    def wait_for_requests_blocking(
        self,
        n: int,
        timeout: float | None = 5.0,
    ) -> list[RecordedRequest]:
        self._notifier.wait_for_blocking(
            lambda: len(self.requests) >= n, timeout, f"{n} request(s)"
        )
        return list(self.requests)

    # -- serving -------------------------------------------------------------

    async def _on_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        conn = _Connection(reader, writer, self._connection_count + 1)
        self._connection_count += 1
        self._connections.add(conn)
        try:
            while not self._stopping:
                try:
                    head = await conn.read_head()
                    if head is None:
                        break
                    body = await conn.read_body(head.headers)
                except _BadRequest as exc:
                    message = f"Fake model could not parse the request: {exc}"
                    await conn.write(
                        self._json_response(
                            400, _error_body(message, "invalid_request_error", None), {}, False
                        )
                    )
                    break
                if not await self._handle(conn, head, body):
                    break
        except _ClientGone:
            pass
        except asyncio.CancelledError:
            # Only stop() cancels these tasks. Ending normally keeps asyncio's
            # stream callback (which calls task.exception()) quiet on 3.11.
            pass
        except Exception:
            self._unexpected()
        finally:
            self._connections.discard(conn)
            conn.close(abort=self._stopping)
            if task is not None:
                self._tasks.discard(task)

    def _changed(self) -> None:
        self._changes += 1
        self._notifier.notify()

    def _unexpected(self) -> None:
        text = traceback.format_exc()
        self.errors.append(text)
        log.error("fake model error:\n%s", text)

    def _json_response(
        self, status: int, body: bytes, headers: Mapping[str, str], keep_alive: bool
    ) -> bytes:
        lines = [f"HTTP/1.1 {status} {_phrase(status)}", "content-type: application/json"]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        lines += [
            f"content-length: {len(body)}",
            f"connection: {'keep-alive' if keep_alive else 'close'}",
        ]
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body

    async def _handle(self, conn: _Connection, head: _Head, raw_body: bytes) -> bool:
        """Answer one request; return whether the connection stays open."""
        path, _, query = head.target.partition("?")
        keep_alive = head.headers.get("connection", "").lower() != "close" and (
            head.version != "HTTP/1.0" or head.headers.get("connection", "").lower() == "keep-alive"
        )
        body: dict[str, Any] = {}
        parse_error: str | None = None
        if raw_body:
            try:
                parsed = json.loads(raw_body)
            except ValueError as exc:
                parse_error = f"We could not parse the JSON body of your request: {exc}"
            else:
                if isinstance(parsed, dict):
                    body = parsed
                else:
                    parse_error = "The request body must be a JSON object."
        record = RecordedRequest(
            index=len(self.requests),
            method=head.method,
            path=path,
            query=query,
            headers=head.headers,
            body=body,
            raw_body=raw_body,
            t_arrival_ns=head.t_arrival_ns,
            connection=conn.number,
            _notifier=self._notifier,
        )
        self.requests.append(record)
        self._changed()
        log.info("request #%d %s %s", record.index, head.method, head.target)
        request_id = f"req_{record.index + 1}"
        try:
            if head.method != "POST" or path not in RESPONSES_PATHS:
                message = (
                    f"Invalid URL ({head.method} {path}); the fake model serves POST /v1/responses"
                )
                return await self._send_error(
                    conn, record, 404, message, None, request_id, keep_alive
                )
            if parse_error is not None:
                return await self._send_error(
                    conn, record, 400, parse_error, None, request_id, keep_alive
                )
            try:
                reply = await self._next_reply(record)
            except _ScriptError as exc:
                record.error = str(exc)
                log.warning("%s", exc)
                return await self._send_error(
                    conn,
                    record,
                    500,
                    str(exc),
                    exc.code,
                    request_id,
                    keep_alive,
                    type_="server_error",
                )
            record.reply = reply
            if reply.http is not None:
                return await self._send_http_error(conn, record, reply.http, request_id, keep_alive)
            if record.stream:
                return await self._stream(conn, record, reply, request_id, keep_alive)
            return await self._send_whole(conn, record, reply, request_id, keep_alive)
        except _ClientGone:
            if not record.completed:
                record.aborted = True
            return False
        finally:
            if record.t_done_ns is None:
                record.t_done_ns = time.perf_counter_ns()
            self._changed()

    async def _next_reply(self, record: RecordedRequest) -> Reply:
        if self._script:
            with contextlib.suppress(IndexError):
                return self._script.popleft()
        handler = self._handler
        if handler is None:
            raise _ScriptError(
                f"Fake model script exhausted: request #{record.index} "
                f"({record.method} {record.path}) has no scripted reply and no on_request handler.",
                "fake_script_exhausted",
            )
        try:
            result = handler(record)
            if inspect.isawaitable(result):
                result = await result
        except Exception as exc:
            self._unexpected()
            raise _ScriptError(
                f"Fake model on_request handler raised {exc!r} for request #{record.index}",
                "fake_handler_error",
            ) from exc
        if not isinstance(result, Reply):
            raise _ScriptError(
                f"Fake model on_request handler returned {result!r}, not a Reply",
                "fake_handler_error",
            )
        return result

    async def _send_error(
        self,
        conn: _Connection,
        record: RecordedRequest,
        status: int,
        message: str,
        code: str | None,
        request_id: str,
        keep_alive: bool,
        *,
        type_: str = "invalid_request_error",
    ) -> bool:
        body = _error_body(message, type_, code)
        await conn.write(
            self._json_response(status, body, {"x-request-id": request_id}, keep_alive)
        )
        record.status = status
        record.completed = True
        return keep_alive

    async def _send_http_error(
        self,
        conn: _Connection,
        record: RecordedRequest,
        spec: _HttpError,
        request_id: str,
        keep_alive: bool,
    ) -> bool:
        headers = {"x-request-id": request_id}
        if spec.retry_after is not None:
            value = spec.retry_after
            headers["retry-after"] = str(int(value)) if float(value).is_integer() else str(value)
        if spec.retry_after_ms is not None:
            headers["retry-after-ms"] = str(spec.retry_after_ms)
        headers.update(spec.headers)
        body = _error_body(spec.message, spec.type, spec.code, spec.param)
        await conn.write(self._json_response(spec.status, body, headers, keep_alive))
        record.status = spec.status
        record.completed = True
        return keep_alive

    def _context(self, record: RecordedRequest) -> _Context:
        return _Context(self._ids.next("resp"), int(time.time()), record.body)

    async def _hold(self, conn: _Connection, batch: _Batch, gate: Gate) -> None:
        await batch.flush(drain=True)
        gate._mark_reached()
        if gate.released:
            return
        released = asyncio.ensure_future(gate._wait_released())
        gone = asyncio.ensure_future(conn.lost.wait())
        try:
            await asyncio.wait({released, gone}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            released.cancel()
            gone.cancel()
        if conn.gone:
            raise _ClientGone

    async def _stream(
        self,
        conn: _Connection,
        record: RecordedRequest,
        reply: Reply,
        request_id: str,
        keep_alive: bool,
    ) -> bool:
        ctx = self._context(record)
        ending = reply.ending
        events: Iterator[_Event]
        if ending in ("error_event", "failed"):
            events = itertools.islice(
                _response_events(reply, ctx, self._ids, terminal=False), reply.after
            )
        elif ending in ("cut", "stall", "malformed"):
            events = itertools.islice(
                _response_events(reply, ctx, self._ids, terminal=True), reply.after
            )
        else:
            events = _response_events(reply, ctx, self._ids, terminal=True)

        head = (
            "HTTP/1.1 200 OK\r\n"
            "content-type: text/event-stream; charset=utf-8\r\n"
            "transfer-encoding: chunked\r\n"
            "cache-control: no-cache\r\n"
            f"connection: {'keep-alive' if keep_alive else 'close'}\r\n"
            f"x-request-id: {request_id}\r\n"
            "\r\n"
        )
        record.status = 200
        await conn.write(head.encode("latin-1"))
        batch = _Batch(conn)
        gate = reply.hold
        hold_at = 1 + reply.hold_after if gate is not None else -1
        sent = 0  # also the next sequence number
        last_type = "response.output_text.delta"
        done_items: list[dict[str, Any]] = []
        for event in events:
            if sent == hold_at and gate is not None:
                await self._hold(conn, batch, gate)
            if event.pause > 0:
                await batch.flush()
                await conn.pause(event.pause)
            batch.add(event.encode(sent))
            sent += 1
            last_type = event.type
            if event.done_item is not None:
                done_items.append(event.done_item)
            if event.text_delta and record.t_first_delta_ns is None:
                record.t_first_delta_ns = time.perf_counter_ns()
                await batch.flush()
            elif batch.size >= _BATCH_BYTES:
                await batch.flush()
        if gate is not None and sent <= hold_at:
            await self._hold(conn, batch, gate)

        if ending == "cut":
            await batch.flush(drain=True)
            conn.close()
            return False
        if ending == "stall":
            await batch.flush(drain=True)
            await conn.until_gone()
        elif ending == "malformed":
            batch.add(f"event: {last_type}\ndata: {{not json\n\n".encode())
        elif ending == "error_event":
            error = {
                "code": reply.error_code,
                "message": reply.error_message,
                "param": reply.error_param,
            }
            batch.add(_Event("error", error).encode(sent))
        elif ending == "failed":
            error = {"code": reply.error_code, "message": reply.error_message}
            usage = (reply.usage or DEFAULT_USAGE).to_api()
            response = ctx.response("failed", done_items, usage=usage, error=error)
            batch.add(_Event("response.failed", {"response": response}).encode(sent))
        await batch.flush()
        await conn.write(b"0\r\n\r\n")
        record.completed = True
        return keep_alive

    async def _send_whole(
        self,
        conn: _Connection,
        record: RecordedRequest,
        reply: Reply,
        request_id: str,
        keep_alive: bool,
    ) -> bool:
        """The answer to a request without ``"stream": true``."""
        if reply.hold is not None:
            await self._hold(conn, _Batch(conn), reply.hold)
        if reply.delay_first > 0:
            await conn.pause(reply.delay_first)
        ending = reply.ending
        if ending == "cut":
            conn.close()
            return False
        if ending == "stall":
            await conn.until_gone()
        if ending == "error_event":
            return await self._send_error(
                conn,
                record,
                500,
                reply.error_message,
                reply.error_code,
                request_id,
                keep_alive,
                type_="server_error",
            )
        headers = {"x-request-id": request_id}
        if ending == "malformed":
            await conn.write(self._json_response(200, b"{not json", headers, keep_alive))
        else:
            ctx = self._context(record)
            output = [ev.done_item for ev in _item_events(reply, self._ids) if ev.done_item]
            usage = (reply.usage or DEFAULT_USAGE).to_api()
            if ending == "failed":
                error = {"code": reply.error_code, "message": reply.error_message}
                response = ctx.response("failed", [], usage=usage, error=error)
            elif ending == "incomplete":
                details = {"reason": reply.incomplete_reason}
                response = ctx.response(
                    "incomplete", output, usage=usage, incomplete_details=details
                )
            else:
                response = ctx.response("completed", output, usage=usage)
            await conn.write(
                self._json_response(200, _JSON.encode(response).encode(), headers, keep_alive)
            )
        record.status = 200
        record.completed = True
        return keep_alive


# ------------------------------------------------------------------- in a thread


class FakeModelThread:
    """A :class:`FakeModel` running on its own event loop in a background thread.

    Everything here is safe to call from any thread. ``on_request`` handlers
    run on the fake's loop.
    """

    def __init__(self, model: FakeModel, loop: asyncio.AbstractEventLoop) -> None:
        self.model = model
        self.loop = loop

    @property
    def base_url(self) -> str:
        return self.model.base_url

    @property
    def url(self) -> str:
        return self.model.url

    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot of the requests received so far."""
        return list(self.model.requests)

    @property
    def pending(self) -> int:
        return self.model.pending

    def script(self, *replies: Reply) -> Self:
        self.model.script(*replies)
        return self

    def on_request(self, handler: ReplyHandler | None) -> ReplyHandler | None:
        return self.model.on_request(handler)

    def gate(self, name: str | None = None) -> Gate:
        return self.model.gate(name)

    def wait_for_requests(self, n: int, timeout: float | None = 5.0) -> list[RecordedRequest]:
        """Block until ``n`` requests have arrived (TimeoutError otherwise)."""
        return self.model.wait_for_requests_blocking(n, timeout)

    async def wait_for_requests_async(
        self,
        n: int,
        timeout: float | None = 5.0,
    ) -> list[RecordedRequest]:
        """:meth:`wait_for_requests` for code running on another event loop."""
        return await self.model.wait_for_requests(n, timeout)


@contextlib.contextmanager
def run_in_thread(
    *replies: Reply,
    host: str = "127.0.0.1",
    port: int = 0,
    on_request: ReplyHandler | None = None,
    startup_timeout: float = 10.0,
) -> Iterator[FakeModelThread]:
    """Run a fake model in a background thread for the ``with`` block.

    ::

        with run_in_thread(Reply.text("hi")) as fake:
            client = openai.OpenAI(api_key="test", base_url=fake.base_url)
            ...
    """
    model = FakeModel(*replies, host=host, port=port, on_request=on_request)
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    failure: list[BaseException] = []

    def run() -> None:
        asyncio.set_event_loop(loop)
        try:
            try:
                loop.run_until_complete(model.start())
            except BaseException as exc:
                failure.append(exc)
                return
            finally:
                ready.set()
            loop.run_forever()
            loop.run_until_complete(model.stop())
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            loop.close()

    thread = threading.Thread(target=run, name="fake-model", daemon=True)
    thread.start()
    if not ready.wait(startup_timeout):
        raise TimeoutError("the fake model thread did not start")
    if failure:
        thread.join()
        raise failure[0]
    try:
        yield FakeModelThread(model, loop)
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(startup_timeout)


# --------------------------------------------------------------------- command line


async def _serve(replies: list[Reply], host: str, port: int) -> None:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    async with FakeModel(*replies, host=host, port=port) as fake:
        print(f"listening {fake.base_url}", flush=True)
        await stop.wait()
        log.info(
            "stopping; %d request(s) served, %d reply(ies) left", len(fake.requests), fake.pending
        )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m agentls.testing.fake_model",
        description="Serve a scripted fake of the OpenAI Responses API on 127.0.0.1.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", type=int, default=0, help="port (0: any free port)")
    parser.add_argument("--script", metavar="FILE.json", help="a JSON list of replies")
    parser.add_argument("-v", "--verbose", action="store_true", help="log requests to stderr")
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        stream=sys.stderr,
        format="fake-model: %(message)s",
    )
    try:
        replies = load_script(args.script) if args.script else []
    except (OSError, ValueError) as exc:
        print(f"fake-model: cannot load script: {exc}", file=sys.stderr)
        return 2
    asyncio.run(_serve(replies, args.host, args.port))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
