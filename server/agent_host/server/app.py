"""The language server: pygls plumbing for protocol v1.

``AgentProtocol`` fixes what pygls gets wrong for custom methods (a request
whose params fail to parse gets an error response instead of none; our params
arrive raw so they are parsed strictly in the handler), advertises
``experimental.agentHost`` and owns the LSP life cycle. ``AgentServer`` holds
the session and registers the handlers.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Awaitable, Callable, Generator
from typing import Any, TypeVar

import anyio
import attrs
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol, default_converter
from pygls.protocol.language_server import lsp_method

from agent_host import __version__
from agent_host.config import ConfigError
from agent_host.protocol import errors, methods
from agent_host.protocol.converter import parse
from agent_host.protocol.types import InitializationOptions
from agent_host.server.approval import EditorApprover
from agent_host.server.session import ServerOptions, Session, workspace_from

log = logging.getLogger(__name__)

P = TypeVar("P")

_INVALID = "agentHost/invalidMessage"


@attrs.define
class RawRequest:
    """A request whose params we parse ourselves (so bad params get -32602)."""

    id: int | str
    method: str
    jsonrpc: str
    params: Any = None


@attrs.define
class RawResponse:
    id: int | str
    jsonrpc: str
    result: Any = None


@attrs.define
class RawNotification:
    method: str
    jsonrpc: str
    params: Any = None


class SoftCancel:
    """``$/cancelRequest`` for a submit: cancels the turn, not the handler task,
    so the request is answered with the turn's (cancelled) result."""

    __slots__ = ("_callback", "requested")

    def __init__(self) -> None:
        self.requested = False
        self._callback: Callable[[], None] | None = None

    def request(self) -> None:
        self.requested = True
        if self._callback is not None:
            self._callback()

    def on_request(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` when cancellation is requested (now, if it already was)."""
        self._callback = callback
        if self.requested:
            callback()


class AgentProtocol(LanguageServerProtocol):
    _server: AgentServer

    def get_message_type(self, method: str) -> type[Any] | None:  # type: ignore[override]
        if method in methods.CLIENT_REQUESTS or method == _INVALID:
            return RawRequest
        return super().get_message_type(method)

    def get_result_type(self, method: str) -> type[Any] | None:  # type: ignore[override]
        if method == methods.REQUEST_APPROVAL:
            return RawResponse  # the editor's answer, as plain JSON
        return super().get_result_type(method)

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            # pygls drops a request it cannot structure without answering it;
            # every request deserves exactly one response.
            if isinstance(data.get("id"), int | str) and not isinstance(data.get("id"), bool):
                detail = _cause(exc)
                return RawRequest(
                    id=data["id"],
                    method=_INVALID,
                    jsonrpc="2.0",
                    params={"method": str(data.get("method", "")), "error": detail},
                )
            raise

    def _handle_request(self, msg_id: Any, method_name: str, params: Any) -> None:
        if method_name == lsp.SHUTDOWN:
            # Known at once, so an ``exit`` right behind it still exits with 0.
            self._server.shutdown_requested = True
        if method_name == methods.SUBMIT:
            # Registered before the handler task exists: a cancel that arrives
            # before it starts must still end in a normal TurnResult.
            self._server.soft_cancels[msg_id] = SoftCancel()
        super()._handle_request(msg_id, method_name, params)

    def _handle_cancel_notification(self, msg_id: Any) -> None:
        soft = self._server.soft_cancels.get(msg_id)
        if soft is not None:
            soft.request()
            return
        super()._handle_cancel_notification(msg_id)

    @lsp_method(lsp.INITIALIZE)
    def lsp_initialize(
        self, params: lsp.InitializeParams
    ) -> Generator[Any, Any, lsp.InitializeResult]:
        session = self._server.session
        if session.started:
            raise errors.InvalidRequest("initialize was already received")
        options = parse(
            params.initialization_options, InitializationOptions, what="initializationOptions"
        )
        expected = session.options.token
        if expected is not None and options.token != expected:
            raise errors.InvalidRequest(
                "this server requires a token: pass initializationOptions.token"
            )
        result: lsp.InitializeResult = yield from super().lsp_initialize(params)
        folders = [folder.uri for folder in params.workspace_folders or ()]
        root = workspace_from(options, params.root_uri, params.root_path, folders)
        if not root.is_dir():
            raise JsonRpcInvalidParams(f"the workspace {str(root)!r} is not a directory")
        try:
            session.start(options, root)
        except ConfigError as exc:
            raise JsonRpcInvalidParams(str(exc)) from None
        result.capabilities.experimental = {"agentHost": methods.capabilities()}
        log.info("serving workspace %s", root)
        return result

    @lsp_method(lsp.EXIT)
    def lsp_exit(self, *args: Any) -> Generator[Any, Any, None]:
        # Standard LSP: exit code 0 after shutdown, 1 without it. The transport
        # stops the session in order and exits with that code.
        shut_down = self._shutdown or self._server.shutdown_requested
        self._server.request_exit(0 if shut_down else 1)
        yield from ()


def _cause(exc: BaseException) -> str:
    inner = exc.__cause__
    if inner is not None:
        text = str(inner).splitlines()[0] if str(inner) else type(inner).__name__
        return f"invalid params: {text}"
    return str(exc) or "invalid message"


class AgentServer(LanguageServer):
    def __init__(self, options: ServerOptions | None = None) -> None:
        super().__init__(
            "agent-host",
            __version__,
            protocol_cls=AgentProtocol,
            converter_factory=default_converter,
            max_workers=4,
        )
        self.session = Session(self._notify_event, options or ServerOptions())
        self.session.approver = EditorApprover(self)
        self.exit_requested = anyio.Event()
        self.exit_code = 0
        self.shutdown_requested = False
        self._inflight: set[asyncio.Task[Any]] = set()
        self.soft_cancels: dict[Any, SoftCancel] = {}
        self._register()

    def _notify_event(self, params: dict[str, Any]) -> None:
        # A plain dict goes straight to json.dumps: the cheapest notification pygls can send.
        self.protocol._send_data({"jsonrpc": "2.0", "method": methods.EVENT, "params": params})

    def request_exit(self, code: int) -> None:
        if not self.exit_requested.is_set():
            self.exit_code = code
            self.exit_requested.set()

    def soft_cancel(self) -> SoftCancel:
        """The soft cancel of the request being handled (a fresh one if it has none)."""
        msg_id = self.protocol.msg_id
        return self.soft_cancels.get(msg_id) or SoftCancel()

    def forget_request(self) -> None:
        self.soft_cancels.pop(self.protocol.msg_id, None)

    @property
    def supports_progress(self) -> bool:
        window = self.client_capabilities.window if self.protocol._workspace else None
        return bool(window and window.work_done_progress)

    def agent_method(
        self, name: str, params_type: type[P]
    ) -> Callable[[Callable[[AgentServer, P], Awaitable[Any]]], None]:
        """Register a handler that gets typed params and is tracked until it answers."""

        def register(handler: Callable[[AgentServer, P], Awaitable[Any]]) -> None:
            @functools.wraps(handler)
            async def wrapper(raw: Any) -> Any:
                task = asyncio.current_task()
                assert task is not None
                self._inflight.add(task)
                try:
                    return await handler(self, parse(raw, params_type))
                finally:
                    self._inflight.discard(task)

            self.feature(name)(wrapper)

        return register

    async def wait_for_requests(self, timeout: float = 10.0) -> None:
        """Wait until every tracked request has been answered (at shutdown)."""
        with anyio.move_on_after(timeout):
            while self._inflight:
                await asyncio.wait(set(self._inflight))

    def _register(self) -> None:
        from agent_host.server.handlers import auxiliary, panes, settings, turns

        for module in (turns, panes, settings, auxiliary):
            module.register(self)

        @self.feature(_INVALID)
        async def invalid(raw: Any) -> None:
            raise JsonRpcInvalidParams(str((raw or {}).get("error") or "invalid params"))

        @self.feature(lsp.SHUTDOWN)
        async def shutdown(*_: Any) -> None:
            await self.session.stop()
            await self.wait_for_requests()

        @self.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
        async def did_change_configuration(params: lsp.DidChangeConfigurationParams) -> None:
            await settings.apply_configuration(self, params.settings)

    def report_server_error(self, error: Exception, source: Any) -> None:
        # Errors are answered to the request that caused them; never pop up a
        # window for them (pygls's default sends window/showMessage).
        log.error("%s: %s", getattr(source, "__name__", source), error)
