"""The fake Responses API server: routing, strict checks, recording, answering."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import itertools
import json
import logging
import time
import traceback
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from typing import Any, Self, TypeAlias, TypedDict

from .http import (
    BATCH_BYTES,
    LAST_CHUNK,
    BadRequest,
    Batch,
    ClientGone,
    Connection,
    Head,
    chunk,
    error_body,
    json_response,
    sse_head,
)
from .models import MODELS_PATHS, models_answer
from .recorder import RecordedRequest
from .script import HttpErrorSpec, Reply
from .sse import (
    JSON,
    Event,
    Ids,
    ResponseContext,
    failure_events,
    item_events,
    response_events,
    split_events,
)
from .strict import Refusal, check_request
from .waiting import Gate, Notifier

log = logging.getLogger("agentls.testing.fake_model")

RESPONSES_PATHS = frozenset({"/v1/responses", "/responses"})

ReplyHandler: TypeAlias = Callable[[RecordedRequest], Reply | Awaitable[Reply]]


class FakeModelOptions(TypedDict, total=False):
    """:class:`FakeModel`'s keyword arguments (for whoever passes them on)."""

    host: str
    port: int
    on_request: ReplyHandler | None
    strict: bool
    context_window: int | None
    reject_stored_item_ids: bool


class _ScriptError(Exception):
    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code


class FakeModel:
    """The fake Responses API server. Use ``async with FakeModel() as fake:``.

    ``replies`` (and ``on_request``) may be given here too; ``host``/``port``
    choose where to listen (port 0: any free port).

    Strict mode: with ``strict`` (the default) the fake refuses, as the real
    API does, a request with an unknown top-level parameter or with a
    client-side tool call and its output not both in ``input``.
    ``reject_stored_item_ids`` (the default; input items carrying an ``id``
    while ``store`` is false) and ``context_window`` (tokens, as
    :func:`estimate_input_tokens` counts them; None: no limit) add the real
    API's refusals of those; they apply whenever set, ``strict`` or not. A
    refused request is recorded (``request.refusal``) and takes no scripted reply.
    """

    def __init__(
        self,
        *replies: Reply,
        host: str = "127.0.0.1",
        port: int = 0,
        on_request: ReplyHandler | None = None,
        strict: bool = True,
        context_window: int | None = None,
        reject_stored_item_ids: bool = True,
    ) -> None:
        if context_window is not None and context_window < 0:
            raise ValueError("context_window counts tokens: it must be >= 0")
        self.host = host
        self.strict = strict
        self.context_window = context_window
        self.reject_stored_item_ids = reject_stored_item_ids
        self._requested_port = port
        self._script: deque[Reply] = deque(replies)
        self._handler: ReplyHandler | None = on_request
        self.requests: list[RecordedRequest] = []
        """Every request received, in arrival order."""
        self.errors: list[str] = []
        """Tracebacks of unexpected errors inside the fake (should stay empty)."""
        self._notifier = Notifier()
        self._changes = 0  # bumped whenever a request arrives or ends
        self._ids = Ids()
        self._server: asyncio.Server | None = None
        self._port: int | None = None
        self._connections: set[Connection] = set()
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
        conn = Connection(reader, writer, self._connection_count + 1)
        self._connection_count += 1
        self._connections.add(conn)
        try:
            while not self._stopping:
                try:
                    head = await conn.read_head()
                    if head is None:
                        break
                    body = await conn.read_body(head.headers)
                except BadRequest as exc:
                    message = f"Fake model could not parse the request: {exc}"
                    await conn.write(
                        json_response(
                            400, error_body(message, "invalid_request_error", None), {}, False
                        )
                    )
                    break
                if not await self._handle(conn, head, body):
                    break
        except ClientGone:
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

    async def _handle(self, conn: Connection, head: Head, raw_body: bytes) -> bool:
        """Answer one request; return whether the connection stays open."""
        path, _, query = head.target.partition("?")
        keep_alive = head.keep_alive
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
            if head.method == "GET" and path in MODELS_PATHS:
                status, answer = models_answer(head.headers)
                headers = {"x-request-id": request_id}
                await conn.write(json_response(status, answer, headers, keep_alive))
                record.status = status
                record.completed = True
                return keep_alive
            if head.method != "POST" or path not in RESPONSES_PATHS:
                message = (
                    f"Invalid URL ({head.method} {path}); the fake model serves POST /v1/responses"
                    " and GET /v1/models"
                )
                return await self._send_error(
                    conn, record, 404, message, None, request_id, keep_alive
                )
            if parse_error is not None:
                return await self._send_error(
                    conn, record, 400, parse_error, None, request_id, keep_alive
                )
            refusal = check_request(
                body,
                strict=self.strict,
                context_window=self.context_window,
                reject_stored_item_ids=self.reject_stored_item_ids,
            )
            if refusal is not None:
                record.refusal = refusal
                log.info("request #%d refused: %s", record.index, refusal.message)
                return await self._refuse(conn, record, refusal, request_id, keep_alive)
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
            if reply.raw is not None:
                return await self._send_raw(conn, record, reply.raw, request_id, keep_alive)
            if reply.http is not None:
                return await self._send_http_error(conn, record, reply.http, request_id, keep_alive)
            if record.stream:
                return await self._stream(conn, record, reply, request_id, keep_alive)
            return await self._send_whole(conn, record, reply, request_id, keep_alive)
        except ClientGone:
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
        conn: Connection,
        record: RecordedRequest,
        status: int,
        message: str,
        code: str | None,
        request_id: str,
        keep_alive: bool,
        *,
        type_: str = "invalid_request_error",
    ) -> bool:
        body = error_body(message, type_, code)
        await conn.write(json_response(status, body, {"x-request-id": request_id}, keep_alive))
        record.status = status
        record.completed = True
        return keep_alive

    async def _send_http_error(
        self,
        conn: Connection,
        record: RecordedRequest,
        spec: HttpErrorSpec,
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
        body = error_body(spec.message, spec.type, spec.code, spec.param)
        await conn.write(json_response(spec.status, body, headers, keep_alive))
        record.status = spec.status
        record.completed = True
        return keep_alive

    async def _refuse(
        self,
        conn: Connection,
        record: RecordedRequest,
        refusal: Refusal,
        request_id: str,
        keep_alive: bool,
    ) -> bool:
        if not (refusal.in_stream and record.stream):
            body = error_body(refusal.message, refusal.type, refusal.code, refusal.param)
            headers = {"x-request-id": request_id}
            await conn.write(json_response(refusal.status, body, headers, keep_alive))
            record.status = refusal.status
            record.completed = True
            return keep_alive
        record.status = 200
        events = failure_events(self._context(record), refusal.error())
        payload = b"".join(event.encode(n) for n, event in enumerate(events))
        await conn.write(sse_head(request_id, keep_alive) + chunk(payload) + LAST_CHUNK)
        record.completed = True
        return keep_alive

    async def _send_raw(
        self,
        conn: Connection,
        record: RecordedRequest,
        data: bytes,
        request_id: str,
        keep_alive: bool,
    ) -> bool:
        """A recorded body, byte for byte, one HTTP chunk per SSE event."""
        record.status = 200
        await conn.write(sse_head(request_id, keep_alive))
        for event in split_events(data):
            if record.t_first_delta_ns is None and b"response.output_text.delta" in event:
                record.t_first_delta_ns = time.perf_counter_ns()
            await conn.write(chunk(event))
        await conn.write(LAST_CHUNK)
        record.completed = True
        return keep_alive

    def _context(self, record: RecordedRequest) -> ResponseContext:
        return ResponseContext(self._ids.next("resp"), int(time.time()), record.body)

    async def _hold(self, conn: Connection, batch: Batch, gate: Gate) -> None:
        await batch.flush(drain=True)
        gate.mark_reached()
        if gate.released:
            return
        released = asyncio.ensure_future(gate.wait_released())
        gone = asyncio.ensure_future(conn.lost.wait())
        try:
            await asyncio.wait({released, gone}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            released.cancel()
            gone.cancel()
        if conn.gone:
            raise ClientGone

    async def _stream(
        self,
        conn: Connection,
        record: RecordedRequest,
        reply: Reply,
        request_id: str,
        keep_alive: bool,
    ) -> bool:
        ctx = self._context(record)
        ending = reply.ending
        events: Iterator[Event]
        if ending in ("error_event", "failed"):
            events = itertools.islice(
                response_events(reply, ctx, self._ids, terminal=False), reply.after
            )
        elif ending in ("cut", "stall", "malformed"):
            events = itertools.islice(
                response_events(reply, ctx, self._ids, terminal=True), reply.after
            )
        else:
            events = response_events(reply, ctx, self._ids, terminal=True)

        record.status = 200
        await conn.write(sse_head(request_id, keep_alive))
        batch = Batch(conn)
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
            elif batch.size >= BATCH_BYTES:
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
            batch.add(Event("error", error).encode(sent))
        elif ending == "failed":
            error = {"code": reply.error_code, "message": reply.error_message}
            usage = reply.usage_for(record.body).to_api()
            response = ctx.response("failed", done_items, usage=usage, error=error)
            batch.add(Event("response.failed", {"response": response}).encode(sent))
        await batch.flush()
        await conn.write(LAST_CHUNK)
        record.completed = True
        return keep_alive

    async def _send_whole(
        self,
        conn: Connection,
        record: RecordedRequest,
        reply: Reply,
        request_id: str,
        keep_alive: bool,
    ) -> bool:
        """The answer to a request without ``"stream": true``."""
        if reply.hold is not None:
            await self._hold(conn, Batch(conn), reply.hold)
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
            await conn.write(json_response(200, b"{not json", headers, keep_alive))
        else:
            ctx = self._context(record)
            output = [ev.done_item for ev in item_events(reply, self._ids) if ev.done_item]
            usage = reply.usage_for(record.body).to_api()
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
                json_response(200, JSON.encode(response).encode(), headers, keep_alive)
            )
        record.status = 200
        record.completed = True
        return keep_alive
