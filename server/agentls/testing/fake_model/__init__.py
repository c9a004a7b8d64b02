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
responses. Like the real service it refuses requests it would not accept
(strict mode, below). Every request is recorded for assertions.

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
* Replay: ``Reply.raw_sse(data)`` serves ``data`` (bytes, e.g. a stream
  recorded from a real server) as the body byte for byte -- ``200``,
  ``content-type: text/event-stream``, one HTTP chunk per SSE event, nothing
  parsed, renumbered or checked -- whatever the request asked for.

Options accepted by every streamed constructor: ``usage=`` (a :class:`TokenUsage`,
anything with ``input_tokens``/``output_tokens``/``reasoning_tokens``/
``cached_tokens`` attributes, or a dict of some of those keys -- the others
then take :class:`TokenUsage`'s defaults), ``delay_first=`` (seconds before the
first delta), ``hold=gate`` and ``hold_after=k``. Without ``usage=`` a response
reports estimated usage (below).

Token usage
-----------
Unless a reply sets ``usage=``, a response's ``usage.input_tokens`` is
:func:`estimate_input_tokens` of the request, the same count the context window
is checked against, so a client that adds "the last reported ``input_tokens``
plus :func:`estimate_tokens` of each item it added since" agrees with the fake
exactly. The estimate: every unit of the request costs ``ceil(n / 4)`` tokens,
``n`` being the unit's UTF-8 size in bytes -- of the text for a string, of its
compact JSON (``separators=(",", ":")``, non-ASCII unescaped) otherwise; the
units are the ``instructions``, each ``input`` item (a string ``input`` is one)
and each tool definition. ``output_tokens`` is the same estimate of what the
reply writes (message text, reasoning summaries, call arguments), with the
summaries' share as ``reasoning_tokens``; ``cached_tokens`` is 0.

Strict mode
-----------
``FakeModel(strict=True)`` (the default; ``strict=False`` for a test that sends
odd requests on purpose) answers as the real API does, in its words:

* a top-level field that ``client.responses.create`` does not have: ``400``
  ``"Unknown parameter: 'x'."`` (``param`` ``x``, ``code`` ``unknown_parameter``);
* a client-side tool call in ``input`` without its output: ``400`` ``"No tool
  output found for function call call_1."`` (``param`` ``input``), and an output
  without its call: ``400`` ``"No tool call found for function call output with
  call_id call_1."``. Calls and outputs pair by call id: ``function_call``,
  ``custom_tool_call``, ``shell_call``, ``local_shell_call`` and
  ``apply_patch_call`` with their ``*_output`` (a ``local_shell_call_output``
  names its call by ``id``). Hosted calls (``web_search_call``,
  ``code_interpreter_call``, ``mcp_call``, ...) need no output. With
  ``previous_response_id`` or ``conversation`` an output's call may be stored
  server-side, so only unanswered calls are refused.

Two more checks apply whether ``strict`` or not: the first is on unless
``reject_stored_item_ids=False``, the second off unless asked for:

* ``context_window=N``: input of more than ``N`` estimated tokens is refused
  with ``code`` ``context_length_exceeded`` and ``"Your input exceeds the context
  window of this model. Please adjust your input and try again."`` -- for a
  request without ``stream`` a ``400``; for a streamed one, as the real API
  reports it, ``200`` with ``response.created``, ``response.in_progress``, an
  ``error`` event whose ``error`` object holds the error, and ``response.failed``;
* ``reject_stored_item_ids`` (on by default): an input item carrying an ``id`` while
  ``store`` is false gets ``404`` ``"Item with id 'rs_1' not found. Items are not
  persisted when `store` is set to false. ..."`` (``param`` ``input``).

A refused request is recorded like any other, with ``request.refusal`` (a
:class:`Refusal`: ``status``, ``message``, ``param``, ``code``) set, and takes
no scripted reply; ``on_request`` is not called for it.

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
sent the whole reply as scripted, through the end of the HTTP body),
``status`` and ``refusal``. ``await request.wait_done()`` waits until the fake
has finished with it (completed, cut, aborted...). ``await
fake.wait_for_requests(n)`` waits until ``n`` requests have arrived, ``await
fake.wait_until(predicate)`` until a condition on them holds (``lambda:
fake.requests[0].aborted``): the fake detects a disconnect asynchronously, so
wait for it rather than assert at once. Every wait takes ``timeout=`` (default
5 s) and raises ``TimeoutError``. ``fake.errors`` collects tracebacks of
anything that went wrong inside the fake itself; it should stay empty.

Listing models
--------------
``GET /v1/models`` (and ``/models``) answers like the real API: the list of
``LISTED_MODELS`` (OpenAI's model objects: ``id``, ``object``, ``created``,
``owned_by``), or, for a request without a bearer token, ``401`` with
OpenAI's "You didn't provide an API key" error. It is recorded like any
request and takes no scripted reply (see ``models``).

Other ways to run it
--------------------
``run_in_thread()`` runs a fake in a background thread with its own event loop,
for synchronous code (the demo, benchmarks); it takes :class:`FakeModel`'s
options and its handle's methods are thread-safe. From a shell::

    python -m agentls.testing.fake_model --port 0 --script replies.json

prints ``listening http://127.0.0.1:PORT/v1`` and serves until SIGTERM/SIGINT.
``replies.json`` is a JSON list of replies in the form :meth:`Reply.from_json`
reads, e.g. ``[{"text": "hi"}, {"tool_call": {"name": "exec_command",
"arguments": {"cmd": "ls"}}}, {"http_error": 429, "retry_after": 1}]``. Strict
mode is on (``--no-strict`` turns it off), so is the stored-item-id check
(``--no-reject-stored-item-ids``); ``--context-window TOKENS`` adds the window.

The package: ``script`` (replies), ``tokens`` (usage and the estimate),
``strict`` (the refusals), ``sse`` (events), ``http`` (connections),
``models`` (``GET /v1/models``),
``server`` (:class:`FakeModel`), ``recorder``, ``waiting`` (gates),
``thread`` and ``cli``.
"""

from __future__ import annotations

from .cli import main
from .recorder import RecordedRequest
from .script import Reply, load_script
from .server import RESPONSES_PATHS, FakeModel, FakeModelOptions, ReplyHandler
from .strict import RESPONSES_CREATE_PARAMS, Refusal
from .thread import FakeModelThread, run_in_thread
from .tokens import TokenUsage, UsageLike, estimate_input_tokens, estimate_tokens
from .waiting import Gate

__all__ = [
    "RESPONSES_CREATE_PARAMS",
    "RESPONSES_PATHS",
    "FakeModel",
    "FakeModelOptions",
    "FakeModelThread",
    "Gate",
    "RecordedRequest",
    "Refusal",
    "Reply",
    "ReplyHandler",
    "TokenUsage",
    "UsageLike",
    "estimate_input_tokens",
    "estimate_tokens",
    "load_script",
    "main",
    "run_in_thread",
]
