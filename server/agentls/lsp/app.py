"""The language server: pygls plumbing for protocol v1.

``AgentProtocol`` fixes what pygls gets wrong for custom methods (a request
whose params fail to parse gets an error response instead of none; our params
arrive raw so they are parsed strictly in the handler), advertises
``experimental.agentls`` and owns the LSP life cycle. ``AgentServer`` holds
the connection and registers the handlers.
"""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import os
import threading
import uuid
from collections.abc import Awaitable, Callable, Generator
from concurrent.futures import Future as ConcurrentFuture
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import cattrs
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol, default_converter
from pygls.protocol.language_server import lsp_method

from agentls import __version__
from agentls.config import ModelConfig
from agentls.domain import DEFAULT_MODEL
from agentls.lsp.cancel import SoftCancel
from agentls.lsp.paths import outside_client_folders, workspace_from
from agentls.protocol import errors, methods
from agentls.protocol.converter import camel, parse
from agentls.protocol.options import InitializationOptions

if TYPE_CHECKING:
    from agentls.lsp.attachment import Attachment
    from agentls.lsp.face import LspFace

log = logging.getLogger(__name__)

# Larger integers are refused by int() (CPython's guard against quadratic
# parsing); they are never meaningful here, so they become infinity instead.
_MAX_INT_DIGITS = 4000


def _parse_int(digits: str) -> int | float:
    if len(digits) > _MAX_INT_DIGITS:
        return float("-inf") if digits.startswith("-") else float("inf")
    return int(digits)


def _valid_id(value: Any) -> bool:
    # JSON-RPC 2.0: a string, a number or null (discouraged, but allowed).
    return value is None or (isinstance(value, str | int | float) and not isinstance(value, bool))


def _first_line(exc: BaseException) -> str:
    return (str(exc).splitlines() or [type(exc).__name__])[0][:200]


def _structuring_error(exc: JsonRpcException, method: str) -> str:
    """``invalid params: processId: expected …`` for a standard LSP request."""
    cause = exc.__cause__
    if isinstance(cause, cattrs.BaseValidationError):
        details = []
        for message in cattrs.transform_error(cause):
            text, _, path = message.rpartition(" @ ")
            where = ".".join(camel(p) for p in path.removeprefix("$.").split(".") if p)
            details.append(f"{where.removeprefix('params.') or 'params'}: {text}")
        return f"invalid params of {method}: " + "; ".join(details)
    return f"invalid params of {method}: {_first_line(cause or exc)}"


def _own_client(capabilities: lsp.ClientCapabilities) -> bool:
    """agentls's own editor clients (they advertise ``experimental.agentls``)."""
    experimental = capabilities.experimental
    return isinstance(experimental, dict) and isinstance(experimental.get("agentls"), dict)


def _token_matches(given: object, expected: str) -> bool:
    # Imported here: answering initialize on stdio need not pay for it.
    from agentls.lsp.tokens import matches

    return matches(given, expected)


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


@dataclass(frozen=True)
class ServerOptions:
    """Set on the command line, before any client connects."""

    log_level: str = "WARNING"
    # Required in ``initializationOptions.token`` when set (always, on --tcp and --ws).
    token: str | None = None
    # Where a generated token is written once the port is known (None: the
    # user gave the token).
    publish_token: bool = False
    # Browser origins a --ws client may come from (others are refused).
    allowed_origins: tuple[str, ...] = ()


def _credentials(options: InitializationOptions) -> dict[str, object]:
    """``missingCredentials`` for the capabilities when no model can be reached:
    an editor says so at start-up rather than at the first prompt."""
    missing = ModelConfig.from_env(base_url=options.base_url).missing_credentials()
    return {} if missing is None else {"missingCredentials": missing}


class AgentProtocol(LanguageServerProtocol):
    _server: AgentServer

    def get_message_type(self, method: str) -> type[Any] | None:  # type: ignore[override]
        if method in methods.CLIENT_REQUESTS:
            return RawRequest
        return super().get_message_type(method)

    def get_result_type(self, method: str) -> type[Any] | None:  # type: ignore[override]
        if method in (methods.REQUEST_APPROVAL, methods.DIAGNOSTICS):
            return RawResponse  # the editor's answer, as plain JSON
        return super().get_result_type(method)

    # --- intake: every message passes here first -------------------------------------

    def receive(self, body: bytes | str) -> None:
        """One message off the wire. Malformed messages are answered here, with
        the code JSON-RPC gives them, before pygls sees them: pygls drops some
        silently and answers others with a traceback."""
        try:
            text = body.decode("utf-8") if isinstance(body, bytes) else body
            data = json.loads(text, parse_int=_parse_int)
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            self.reply_error(None, "parse_error", f"Parse error: {_first_line(exc)}")
            return
        self.receive_object(data)

    def receive_object(self, data: Any) -> None:
        if not isinstance(data, dict):
            self.reply_error(
                None, "invalid_request", "Invalid Request: a message must be one JSON object"
            )
            return
        has_id = "id" in data
        msg_id = data.get("id")
        reply_id = msg_id if _valid_id(msg_id) else None
        if data.get("jsonrpc") != "2.0":
            self.reply_error(
                reply_id, "invalid_request", 'Invalid Request: "jsonrpc" must be "2.0"'
            )
            return
        if "method" not in data:
            if has_id and ("result" in data or "error" in data):
                self._dispatch(data)  # the answer to one of our own requests
            else:
                self.reply_error(reply_id, "invalid_request", "Invalid Request: no method")
            return
        method = data["method"]
        if not isinstance(method, str):
            self.reply_error(
                reply_id, "invalid_request", "Invalid Request: method must be a string"
            )
            return
        if has_id and not _valid_id(msg_id):
            self.reply_error(
                None, "invalid_request", "Invalid Request: id must be a string or a number"
            )
            return
        server = self._server
        if has_id and (self._shutdown or server.shutdown_requested) and method != lsp.EXIT:
            self.reply_error(
                msg_id, "invalid_request", "Invalid Request: the server is shutting down"
            )
            return
        if has_id and method in methods.CLIENT_REQUESTS and not server.client_ready:
            # Checked now, not when the handler starts: an initialize right
            # behind this request must not let it through.
            self.reply_error(
                msg_id,
                "invalid_request",
                "the server is not initialized yet: send initialize first",
            )
            return
        data.setdefault("params", None)
        attachment = server.attachment
        if attachment is not None and has_id:
            # Ids are the editor's own: each connection's are kept apart.
            data["id"] = attachment.inbound(msg_id)
        self._dispatch(data, method if has_id else None)

    def _dispatch(self, data: dict[str, Any], request: str | None = None) -> None:
        try:
            message = self.structure_message(data)
        except JsonRpcException as exc:
            if request is not None:
                self.reply_error(data["id"], "invalid_params", _structuring_error(exc, request))
            else:
                log.warning(
                    "ignoring a malformed %s message: %s", data.get("method", "response"), exc
                )
            return
        if request is not None and not hasattr(message, "id"):
            # LSP defines this method as a notification: pygls would take the
            # request for one and never answer it.
            self.reply_error(
                data["id"],
                "method_not_found",
                f"Method Not Found: {request} is a notification, not a request",
            )
            return
        self.handle_message(message)

    def _send_response(
        self, msg_id: Any, result: Any | None = None, error: Any | None = None
    ) -> None:
        # As a plain dict, so that every response carries its id — null
        # included, which pygls's response classes would leave out.
        self._result_types.pop(msg_id, None)
        attachment = self._server.attachment
        if attachment is not None:
            msg_id = attachment.outbound(msg_id)
            if msg_id is None:
                return  # asked by an editor that has left
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id}
        if error is not None:
            message["error"] = error
        else:
            message["result"] = result
        self._send_data(message)

    def reply_error(self, msg_id: Any, kind: errors.ErrorKind, message: str) -> None:
        # A plain dict, so that an id of null is sent as null (pygls omits it).
        error = {"code": errors.CODES[kind], "message": message}
        self._send_data({"jsonrpc": "2.0", "id": msg_id, "error": error})

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
        attachment = self._server.attachment
        if attachment is not None:
            msg_id = attachment.inbound(msg_id)
        log.info("$/cancelRequest for request %s", msg_id)
        soft = self._server.soft_cancels.get(msg_id)
        if soft is not None:
            soft.request()
            return
        super()._handle_cancel_notification(msg_id)

    def send_request(
        self,
        method: str,
        params: Any | None = None,
        callback: Callable[[Any], None] | None = None,
        msg_id: Any = None,
    ) -> ConcurrentFuture[Any]:
        attachment = self._server.attachment
        if attachment is None:
            return super().send_request(method, params, callback, msg_id)
        if not attachment.attached:
            # Nobody to ask: the question fails now (an approval is denied).
            failed: ConcurrentFuture[Any] = ConcurrentFuture()
            failed.set_exception(ConnectionError("no editor is attached"))
            return failed
        msg_id = msg_id if msg_id is not None else str(uuid.uuid4())
        attachment.asked.add(msg_id)
        return super().send_request(method, params, callback, msg_id)

    def notify(self, method: str, params: Any | None = None) -> None:
        attachment = self._server.attachment
        if (
            attachment is not None
            and method == lsp.PROGRESS
            and getattr(params, "token", None) in attachment.stale_tokens
        ):
            return  # progress on a token of an editor that has left
        super().notify(method, params)

    @lsp_method(lsp.INITIALIZE)
    def lsp_initialize(
        self, params: lsp.InitializeParams
    ) -> Generator[Any, Any, lsp.InitializeResult]:
        server = self._server
        if server.configured is not None:
            reattached: lsp.InitializeResult = yield from self._reattach(params)
            return reattached
        options = parse(
            params.initialization_options, InitializationOptions, what="initializationOptions"
        )
        if options.session_retention < 0:
            raise errors.invalid_params(
                "initializationOptions: sessionRetention: must not be negative"
            )
        expected = server.options.token
        if expected is not None and not _token_matches(options.token, expected):
            raise errors.invalid_request(
                "this server requires a token: pass initializationOptions.token "
                "(the one in the file named when the server started)"
            )
        result: lsp.InitializeResult = yield from super().lsp_initialize(params)
        self._documents_as_lsp_splits_them(params, result)
        folders = [folder.uri for folder in params.workspace_folders or ()]
        root, source = workspace_from(options, params.root_uri, params.root_path, folders)
        if not root.is_dir():
            raise errors.invalid_params(f"{source}: the workspace {str(root)!r} is not a directory")
        outside = outside_client_folders(root, params.root_uri, params.root_path, folders)
        if source == "initializationOptions.workspace" and outside is not None:
            raise errors.invalid_params(
                f"initializationOptions.workspace: {str(root)!r} is outside the client's "
                f"workspace folders ({outside})"
            )
        # The service (agents, worker, model client) starts once the client
        # has this answer (``initialized``), so that answering initialize pays
        # only for pygls itself.
        server.configured = (options, root)
        if server.attachment is not None:
            server.attachment.ready = True
        model = options.model or os.environ.get("AGENTLS_MODEL") or DEFAULT_MODEL
        result.capabilities.experimental = {
            "agentls": {
                **methods.capabilities(model, options.context_window),
                **_credentials(options),
            }
        }
        return result

    def _reattach(self, params: lsp.InitializeParams) -> Generator[Any, Any, lsp.InitializeResult]:
        """``initialize`` from an editor that connects to a server already
        running (``--listen``): it is attached to what runs there."""
        server = self._server
        attachment = server.attachment
        if attachment is None or attachment.ready:
            raise errors.invalid_request("initialize was already received")
        assert server.configured is not None
        options = parse(
            params.initialization_options, InitializationOptions, what="initializationOptions"
        )
        expected = server.options.token
        if expected is not None and options.token != expected:
            raise errors.invalid_request(
                "this server requires a token: pass initializationOptions.token"
            )
        folders = [folder.uri for folder in params.workspace_folders or ()]
        root, _ = workspace_from(options, params.root_uri, params.root_path, folders)
        running = server.configured[1]
        if root.resolve() != running.resolve():
            raise errors.invalid_params(
                f"this server works in {str(running)!r}, not in {str(root)!r}"
            )
        result: lsp.InitializeResult = yield from super().lsp_initialize(params)
        self._documents_as_lsp_splits_them(params, result)
        attachment.ready = True
        panes = sorted(server.face.panes()) if server.face_made else []
        result.capabilities.experimental = {
            "agentls": {
                **methods.capabilities(),
                **_credentials(server.configured[0]),
                "attached": True,
                "panes": panes,
            }
        }
        return result

    def _documents_as_lsp_splits_them(
        self, params: lsp.InitializeParams, result: lsp.InitializeResult
    ) -> None:
        """What every initialize does besides pygls's: open documents split
        into lines as LSP does; agentls's own clients, which have an Ask of
        their own, are not offered the ``agentls.ask`` command."""
        from agentls.lsp.documents import replacing

        if self._workspace is not None:
            self._workspace = replacing(self._workspace)
        self._server.initializations += 1
        if _own_client(params.capabilities):
            result.capabilities.execute_command_provider = None

    @lsp_method(lsp.EXIT)
    def lsp_exit(self, *args: Any) -> Generator[Any, Any, None]:
        # Standard LSP: exit code 0 after shutdown, 1 without it. The transport
        # stops the connection in order and exits with that code.
        shut_down = self._shutdown or self._server.shutdown_requested
        self._server.request_exit(0 if shut_down else 1)
        yield from ()


def load_connection_code() -> None:
    """Import the LSP face, the service and the agent stack (off the loop)."""
    import agentls.lsp.face
    import agentls.lsp.handlers  # noqa: F401


def preload() -> None:
    """Import what the service and the first turn need (on a background thread)."""
    load_connection_code()
    from agentls.model.client import warm_up

    warm_up()
    # What is loaded by now (modules, classes, the SDK: most of the heap) lives
    # as long as the process: leave it out of every full garbage collection,
    # which then costs what the conversations hold, not what the code does.
    gc.freeze()


class AgentServer(LanguageServer):
    def __init__(self, options: ServerOptions | None = None) -> None:
        super().__init__(
            "agentls",
            __version__,
            protocol_cls=AgentProtocol,
            converter_factory=default_converter,
            max_workers=4,
        )
        self.options = options or ServerOptions()
        # Set by initialize; the service starts from it.
        self.configured: tuple[InitializationOptions, Path] | None = None
        self._face: LspFace | None = None
        self.exit_requested = asyncio.Event()
        self.exit_code = 0
        self.shutdown_requested = False
        self._inflight: set[asyncio.Task[Any]] = set()
        self.soft_cancels: dict[Any, SoftCancel] = {}
        # Set when serving editors one after another (``serve --listen``).
        self.attachment: Attachment | None = None
        # Editors that have sent initialize (more than one: windows that reattach).
        self.initializations = 0
        self._register()

    @property
    def face(self) -> LspFace:
        """The LSP face of the service (made on first use, after initialize:
        answering initialize does not pay for it)."""
        if self._face is None:
            from agentls.lsp.editor import LspEditor
            from agentls.lsp.face import LspFace

            editor = LspEditor(self, lambda: self.client_ready, lambda: self.initializations)
            self._face = LspFace(
                self,
                editor,
                self._notify_event,
                self._unsent,
                lambda: self.shutdown_requested or self.exit_requested.is_set(),
                lambda: self.configured,
                self.soft_cancels,
            )
        return self._face

    @property
    def face_made(self) -> bool:
        return self._face is not None

    @property
    def intake(self) -> Callable[[bytes | str], None]:
        """Where the transports hand every message they read."""
        protocol = self.protocol
        assert isinstance(protocol, AgentProtocol)
        return protocol.receive

    @property
    def started(self) -> bool:
        """The service runs."""
        return self._face is not None and self._face.started

    @property
    def client_ready(self) -> bool:
        """The current editor has sent ``initialize``."""
        if self.configured is None:
            return False
        return self.attachment is None or self.attachment.ready

    async def stop_connection(self) -> None:
        """Cancel every turn, answer every request, kill every process."""
        if self._face is not None:
            await self._face.stop()
        await self.wait_for_requests()

    def _notify_event(self, params: dict[str, Any]) -> None:
        # A plain dict goes straight to json.dumps: the cheapest notification pygls can send.
        self.protocol._send_data({"jsonrpc": "2.0", "method": methods.EVENT, "params": params})

    def _unsent(self) -> int:
        """Bytes the editor has not taken yet (0 when the writer cannot tell)."""
        unsent = getattr(self.protocol.writer, "unsent", None)
        return int(unsent()) if callable(unsent) else 0

    def request_exit(self, code: int) -> None:
        if not self.exit_requested.is_set():
            self.exit_code = code
            self.exit_requested.set()

    # --- handlers -----------------------------------------------------------------------

    def _dispatcher(self, name: str) -> Callable[[Any], Awaitable[Any]]:
        """The pygls handler of one ``agent/*`` method: parse, then delegate;
        a ServiceError is answered with the code of its kind.

        Handler modules are imported on the first request, not at start-up.
        """

        async def dispatch(raw: Any) -> Any:
            from agentls.lsp.handlers import HANDLERS
            from agentls.service.errors import ServiceError

            handler, params_type = HANDLERS[name], methods.params_type(name)
            task = asyncio.current_task()
            assert task is not None
            self._inflight.add(task)
            face = self.face
            try:
                return await handler(face, parse(raw, params_type))
            except ServiceError as exc:
                raise errors.ProtocolError(exc.kind, exc.message, exc.data) from None
            finally:
                self._inflight.discard(task)
                face.forget_request()

        return dispatch

    async def wait_for_requests(self, timeout: float = 10.0) -> None:
        """Wait until every tracked request has been answered (at shutdown)."""
        current = asyncio.current_task()
        pending = {task for task in self._inflight if task is not current}
        if pending:
            await asyncio.wait(pending, timeout=timeout)

    def _register(self) -> None:
        for name in methods.CLIENT_REQUESTS:
            self.feature(name)(self._dispatcher(name))

        @self.feature(lsp.INITIALIZED)
        async def initialized(*_: Any) -> None:
            # Load the SDK on a thread of its own meanwhile, and start the
            # service now: the first submit finds everything ready.
            threading.Thread(target=preload, name="preload", daemon=True).start()
            await asyncio.to_thread(load_connection_code)  # done already if preload won
            await self.face.service()

        @self.feature(lsp.SHUTDOWN)
        async def shutdown(*_: Any) -> None:
            await self.stop_connection()

        @self.command(methods.ASK_COMMAND)
        async def ask(*arguments: Any) -> dict[str, Any]:
            from agentls.lsp.plain import run_ask

            return await run_ask(self.face, list(arguments))

        @self.feature(
            lsp.TEXT_DOCUMENT_CODE_ACTION,
            lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix]),
        )
        def code_actions(params: lsp.CodeActionParams) -> list[lsp.CodeAction] | None:
            from agentls.lsp.plain import actions_for

            root = self.configured[1] if self.configured is not None else None
            return actions_for(root, params) or None

        @self.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
        async def did_change_configuration(params: lsp.DidChangeConfigurationParams) -> None:
            from agentls.lsp.handlers.settings import apply_configuration

            if self.configured is not None:  # before initialize there is nothing to change
                await apply_configuration(self.face, params.settings)

    def report_server_error(self, error: Exception, source: Any) -> None:
        # Errors are answered to the request that caused them; never pop up a
        # window for them (pygls's default sends window/showMessage).
        log.error("%s: %s", getattr(source, "__name__", source), error)
