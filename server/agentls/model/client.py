"""The Responses-API client: request building, streaming, retries.

Built on ``openai.AsyncOpenAI``. The SDK's own retries are off (``max_retries=0``)
because ours must know more than it does: a response that broke half-way is
retried only because nothing of it was committed, and the user is told about
every wait. ``openai`` is imported lazily (it costs ~0.5 s): the server warms
it up in the background after start-up instead of paying for it before
``initialize``.
"""

from __future__ import annotations

import email.utils
import logging
import random
import threading
import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import anyio

from agentls.config import ModelConfig
from agentls.model import failures
from agentls.model.errors import ModelError
from agentls.model.items import without_id
from agentls.model.models import model_info, nearest_effort
from agentls.model.stream import batched, read_response, sse_lines
from agentls.model.types import ModelRequest, ModelResponse, Retry, StreamSink
from agentls.redaction import redact

if TYPE_CHECKING:
    import httpx2
    import openai

log = logging.getLogger(__name__)

_import_lock = threading.Lock()

# How long a background stream (an auxiliary job's) waits between batches: it
# costs such a job at most this much at its end, and spares the turn the user
# watches hundreds of loop wake-ups a second per job.
BACKGROUND_PAUSE = 0.03


def warm_up() -> None:
    """Import the SDK now (from a background thread) so the first turn does not wait."""
    with _import_lock:
        import openai
        import openai.resources.responses  # noqa: F401


def build_body(
    request: ModelRequest, model: str, dropped: frozenset[str] = frozenset()
) -> dict[str, Any]:
    """The request body of protocol.md's "The model side" (minus ``stream``).

    ``dropped``: parameters the server refused, left out from now on.
    """
    info = model_info(model)
    tools = list(request.tools)
    include: list[str] = []
    if any(tool.get("type") == "web_search" for tool in tools):
        include.append("web_search_call.action.sources")
    body: dict[str, Any] = {
        "model": model,
        "instructions": request.instructions,
        "input": [without_id(item) for item in request.input],
        "tools": tools,
        "tool_choice": request.tool_choice,
        "parallel_tool_calls": False,
        "store": False,
    }
    effort = nearest_effort(request.effort, info.efforts) if info.reasoning else None
    if info.reasoning:
        reasoning: dict[str, Any] = {"summary": "auto"}
        if effort is not None:
            reasoning["effort"] = effort
        body["reasoning"] = reasoning
        include.append("reasoning.encrypted_content")
    if include:
        body["include"] = include
    if request.cache_key:
        body["prompt_cache_key"] = request.cache_key
    if request.fast_mode:
        body["service_tier"] = "priority"
    for param in dropped:
        _drop(body, param)
    return body


# Parameters a request can do without: when a server refuses one of them
# (400, naming it in ``error.param``), it is left out and the request retried.
DROPPABLE = frozenset(
    {
        "reasoning",
        "reasoning.summary",
        "reasoning.effort",
        "include",
        "prompt_cache_key",
        "service_tier",
        "parallel_tool_calls",
        "tool_choice",
    }
)


def droppable(param: str | None) -> str | None:
    """The parameter to leave out for a refusal naming ``param`` (None: not ours to drop)."""
    if param is None:
        return None
    # ``include[0]`` -> ``include``: the list goes as a whole.
    name = param.split("[", 1)[0]
    return name if name in DROPPABLE else None


def _drop(body: dict[str, Any], param: str) -> None:
    head, _, rest = param.partition(".")
    if not rest:
        body.pop(head, None)
        return
    inner = body.get(head)
    if isinstance(inner, dict):
        inner.pop(rest, None)
        if not inner:
            body.pop(head, None)


class ResponsesClient:
    """One per server: agents (and their forks) share its connection pool."""

    def __init__(self, config: ModelConfig, *, http_client: httpx2.AsyncClient | None = None):
        self.config = config
        self._http_client = http_client
        self._sdk: openai.AsyncOpenAI | None = None
        # The configuration the SDK client was built for, and clients built
        # for an older one (closed in ``aclose``).
        self._built_for: ModelConfig | None = None
        self._retired: list[openai.AsyncOpenAI] = []
        self._lock = threading.Lock()
        # Parameters the server refused (by model): never sent again to it.
        self._dropped: dict[str, frozenset[str]] = {}

    def prepare(self) -> openai.AsyncOpenAI | None:
        """Import the SDK and build its client (thread-safe; a no-op once done).

        The server calls this on a background thread right after start-up, so
        the first turn finds everything ready. None without credentials.
        """
        with self._lock:
            config = self.config
            if self._sdk is not None and self._built_for is not config:
                self._retired.append(self._sdk)
                self._sdk = None
            if self._sdk is None and config.missing_credentials() is None:
                warm_up()
                import httpx2
                import openai

                http_client = self._http_client or httpx2.AsyncClient(
                    timeout=self._timeout(),
                    limits=httpx2.Limits(max_connections=64, max_keepalive_connections=16),
                )
                self._sdk = openai.AsyncOpenAI(
                    # A local Responses-compatible server needs no key; the SDK insists on one.
                    api_key=config.api_key or "no-key",
                    base_url=config.base_url,
                    max_retries=0,
                    timeout=self._timeout(),
                    http_client=http_client,
                )
                # The SDK builds its Responses resource (and imports its
                # pydantic models, ~0.2 s) on first access: do it here too.
                self._sdk.responses.with_streaming_response  # noqa: B018
                self._built_for = config
            return self._sdk

    async def _client(self) -> openai.AsyncOpenAI:
        sdk = self._sdk
        if sdk is None or self._built_for is not self.config:
            # Never import on the event loop: wait for it on a thread.
            sdk = await anyio.to_thread.run_sync(self.prepare)
            if sdk is None:
                raise ModelError("auth", self.config.missing_credentials() or "no model")
        return sdk

    def _timeout(self) -> httpx2.Timeout:
        import httpx2

        # The read timeout is the idle timeout: no byte for that long means a stalled stream.
        return httpx2.Timeout(
            connect=self.config.connect_timeout,
            read=self.config.idle_timeout,
            write=30.0,
            pool=30.0,
        )

    async def reconfigure(self, *, model: str | None = None, base_url: str | None = None) -> None:
        """Use another model or server from the next request on."""
        changes: dict[str, Any] = {}
        if model is not None:
            changes["model"] = model
        if base_url is not None:
            changes["base_url"] = base_url
        if not changes:
            return
        # The next request builds a client for the new configuration.
        self.config = replace(self.config, **changes)

    async def aclose(self) -> None:
        clients, self._retired = [*self._retired, *([self._sdk] if self._sdk else [])], []
        self._sdk = None
        for client in clients:
            await client.close()

    def dropped(self) -> frozenset[str]:
        """The parameters left out of requests to the current model."""
        return self._dropped.get(self.config.model, frozenset())

    async def stream(self, request: ModelRequest, sink: StreamSink) -> ModelResponse:
        """Stream one response, retrying transient failures with backoff.

        Nothing of a failed attempt is kept, so a retry after a broken stream
        is safe; ``sink.retrying`` tells the listener to drop what it showed.
        A parameter the server refuses (an unverified organisation's
        ``reasoning.summary``, a model that does not reason) is left out and
        the request sent again at once: once per parameter, remembered for
        the rest of the session, said to the user once.
        """
        model = self.config.model
        body = build_body(request, model, self.dropped())
        attempts = max(1, self.config.max_attempts)
        attempt = 1
        while True:
            try:
                return await self._attempt(body, sink, background=request.background)
            except ModelError as raw:
                error = self._redacted(raw)
                param = droppable(error.param) if error.kind == "unsupported" else None
                if param is not None and param not in self.dropped():
                    self._dropped[model] = self.dropped() | {param}
                    log.warning(
                        "the model server refused the %s parameter (%s); agentls leaves it "
                        "out of every request to %s from now on",
                        param,
                        error,
                        model,
                    )
                    body = build_body(request, model, self.dropped())
                    continue
                if not error.retryable or attempt >= attempts:
                    if attempt > 1:
                        raise ModelError(
                            error.kind,
                            f"{error} (gave up after {attempt} attempts)",
                            param=error.param,
                        ) from None
                    raise error from None
                delay = self._backoff(attempt, error.retry_after)
                sink.retrying(Retry(attempt, attempts, delay, str(error), error.kind))
                await anyio.sleep(delay)
                attempt += 1

    def _redacted(self, error: ModelError) -> ModelError:
        # Servers quote (masked parts of) a rejected key back; none of it may reach the user.
        text = redact(str(error), self.config.api_key)
        if text == str(error):
            return error
        return ModelError(error.kind, text, retry_after=error.retry_after, param=error.param)

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.config.retry_max_delay)
        delay: float = self.config.retry_base_delay * 2.0 ** (attempt - 1)
        return min(delay * (1 + random.random() * 0.1), self.config.retry_max_delay)

    async def _attempt(
        self, body: dict[str, Any], sink: StreamSink, *, background: bool = False
    ) -> ModelResponse:
        client = await self._client()
        import httpx2
        import openai

        # Everything but the model goes in ``extra_body``: the SDK then sends our
        # JSON as is instead of walking every conversation item through its
        # TypedDict transform (~1 ms per item: 1.2 s for a 1,000-item request).
        model = body["model"]
        rest = {key: value for key, value in body.items() if key != "model"}
        try:
            async with client.responses.with_streaming_response.create(
                model=model, stream=True, extra_body=rest
            ) as response:
                lines = sse_lines(response.http_response.aiter_bytes())
                if background:
                    lines = batched(lines, BACKGROUND_PAUSE)
                result = await read_response(lines, sink)
                # Read to the end of the body (the chunked terminator): only a
                # fully read response gives its connection back to the pool.
                async for _ in lines:
                    pass
                return result
        except openai.APIStatusError as exc:
            raise self._status_error(exc) from None
        except openai.APITimeoutError:
            raise self._timeout_error() from None
        except openai.APIConnectionError as exc:
            raise ModelError(
                "connection", f"cannot reach the model at {self._where()}: {_cause(exc)}"
            ) from None
        except httpx2.TimeoutException:
            raise self._timeout_error() from None
        except httpx2.TransportError as exc:
            raise ModelError(
                "stream", f"the connection to the model broke: {_cause(exc)}"
            ) from None

    def _where(self) -> str:
        return self.config.base_url or "api.openai.com"

    def _timeout_error(self) -> ModelError:
        return ModelError(
            "timeout",
            f"the model sent nothing for {self.config.idle_timeout:g} s (idle timeout)",
        )

    def _status_error(self, exc: openai.APIStatusError) -> ModelError:
        status = exc.status_code
        detail = _api_message(exc)
        error = _api_error(exc)
        known = failures.classify(error.get("code"), detail, error.get("param"))
        if known is not None and known.kind not in ("quota", "context_length", "unsupported"):
            known = None  # the status decides the others (and carries retry-after)
        if known is not None:
            if known.kind == "unsupported":
                return ModelError(
                    "unsupported",
                    f"the model server refused the request ({status}): {known}",
                    param=known.param,
                )
            if known.kind == "context_length":
                return ModelError(
                    "context_length", f"the model server refused the request ({status}): {known}"
                )
            return known
        if status in (401, 403):
            return ModelError(
                "auth",
                f"the model server rejected our credentials ({status}): {detail}. "
                "Check OPENAI_API_KEY (and OPENAI_BASE_URL if you use another server).",
            )
        if status == 429:
            return failures.rate_limited(
                f"rate limited by the model server (429): {detail}", detail, _retry_after(exc)
            )
        if status >= 500 or status in (408, 409):
            return ModelError(
                "server",
                f"the model server failed ({status}): {detail}",
                retry_after=_retry_after(exc),
            )
        if status == 404:
            return ModelError(
                "invalid_request",
                f"the model server has no Responses endpoint or model here (404): {detail}. "
                f"Check the model name ({self.config.model!r}) and the base URL.",
            )
        return ModelError(
            "invalid_request",
            f"the model server refused the request ({status}): {detail}",
            param=error.get("param") if isinstance(error.get("param"), str) else None,
        )


def _api_error(exc: Any) -> dict[str, Any]:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict):
            return error
    return {}


def _api_message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])
    message = getattr(exc, "message", None) or str(exc)
    return str(message)


def _cause(exc: BaseException) -> str:
    inner = exc.__cause__ or exc.__context__
    return str(inner or exc) or type(inner or exc).__name__


def _retry_after(exc: Any) -> float | None:
    headers = getattr(getattr(exc, "response", None), "headers", None)
    if headers is None:
        return None
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return float(str(millis)) / 1000
        except ValueError:
            pass
    value = str(headers.get("retry-after") or "")
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        parsed = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, parsed.timestamp() - time.time())
