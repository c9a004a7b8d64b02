"""Driving the real server process under pytest-lsp, as an editor would.

The client gets ``agent/event`` params and our results as plain dicts (not
pygls's namedtuples), records every event and progress value, and offers
waits that always time out.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.protocol import default_converter
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features
from pytest_lsp.protocol import LanguageClientProtocol

from agentls.lsp.app import RawNotification, RawRequest, RawResponse

from .editor_support import Editor
from .support import WAIT, until_set
from .wire_check import event_problems, result_problems

API_KEY = "sk-test-DISTINCTIVE-key-6f1e2d3c4b5a"
SERVER = [sys.executable, "-m", "agentls", "serve"]


class AgentTestProtocol(LanguageClientProtocol):
    def _handle_cancel_notification(self, msg_id: Any) -> None:
        # Record what the server withdrew (e.g. an approval question).
        self._server.withdrawn.append(msg_id)  # type: ignore[attr-defined]
        super()._handle_cancel_notification(msg_id)

    # pygls caches these per method (lru_cache); a plain method overrides that.
    def get_message_type(self, method: str) -> type[Any] | None:  # type: ignore[override]
        if method == "agent/event":
            return RawNotification
        if method == "agent/requestApproval":
            return RawRequest
        return super().get_message_type(method)

    def get_result_type(self, method: str) -> type[Any] | None:  # type: ignore[override]
        if method.startswith("agent/"):
            return RawResponse
        if method == lsp.TEXT_DOCUMENT_CODE_ACTION:
            # lsprotocol reads any code action that has a command as a Command.
            return RawResponse
        return super().get_result_type(method)


class AgentClient(LanguageClient):
    """A pytest-lsp client that knows protocol v1."""

    def __init__(self) -> None:
        super().__init__(protocol_cls=AgentTestProtocol, converter_factory=default_converter)
        self.events: list[dict[str, Any]] = []
        self.init_result: lsp.InitializeResult | None = None
        self.withdrawn: list[Any] = []
        # While set and not released, window/workDoneProgress/create is not answered.
        self.hold_progress: asyncio.Event | None = None
        self.progress_asked = 0
        self._changed = asyncio.Event()
        self._ids = 0
        # Its open documents and what it does with workspace/applyEdit.
        self.editor = Editor(self)
        # What the server sent that the wire schema does not describe.
        self.wire_problems: list[str] = []

    # --- recording -------------------------------------------------------------------

    def record(self, params: dict[str, Any]) -> None:
        self.wire_problems += event_problems(params)
        self.events.append(params)
        self._changed.set()

    def poke(self) -> None:
        self._changed.set()

    async def until(self, predicate: Callable[[], Any], timeout: float = WAIT) -> Any:
        """Wait until ``predicate()`` is truthy; re-checked whenever a message arrives."""
        return await until_set(self._changed, predicate, timeout)

    def of(self, kind: str, pane: str | None = None) -> list[dict[str, Any]]:
        return [e for e in self.events if e["kind"] == kind and (pane is None or e["pane"] == pane)]

    async def event(
        self,
        kind: str,
        where: Callable[[dict[str, Any]], bool] = lambda _: True,
        timeout: float = WAIT,
    ) -> dict[str, Any]:
        def find() -> dict[str, Any] | None:
            return next((e for e in self.events if e["kind"] == kind and where(e)), None)

        found: dict[str, Any] = await self.until(find, timeout)
        return found

    def text(self, turn_id: int, kind: str = "message.delta") -> str:
        return "".join(
            e["text"] for e in self.events if e["kind"] == kind and e["turnId"] == turn_id
        )

    # --- requests ------------------------------------------------------------------------

    def request(self, method: str, params: dict[str, Any]) -> tuple[str, Future[Any]]:
        """Send now (not when awaited); returns the id and the response future."""
        self._ids += 1
        msg_id = f"{method}-{self._ids}"
        future = self.protocol.send_request(method, params, msg_id=msg_id)
        future.add_done_callback(lambda done: self._answered(method, done))
        return msg_id, future

    def _answered(self, method: str, future: Future[Any]) -> None:
        if not future.cancelled() and future.exception() is None:
            self.wire_problems += result_problems(method, future.result())
        self.poke()

    async def call(self, method: str, params: dict[str, Any], timeout: float = WAIT) -> Any:
        _, future = self.request(method, params)
        async with asyncio.timeout(timeout):
            response = await asyncio.wrap_future(future)
        return response

    def cancel(self, msg_id: str) -> None:
        self.protocol.notify("$/cancelRequest", lsp.CancelParams(id=msg_id))


def make_client() -> AgentClient:
    client = AgentClient()
    create = DEFAULT_CLIENT_FEATURES[lsp.WINDOW_WORK_DONE_PROGRESS_CREATE]

    async def create_progress(params: lsp.WorkDoneProgressCreateParams) -> Any:
        client.progress_asked += 1
        client.poke()
        if client.hold_progress is not None:
            await client.hold_progress.wait()
        return create(client, params)

    register_lsp_features(
        client,
        {**DEFAULT_CLIENT_FEATURES, lsp.WINDOW_WORK_DONE_PROGRESS_CREATE: create_progress},
    )
    client.feature("agent/event")(lambda params: client.record(params))
    client.feature(lsp.WORKSPACE_APPLY_EDIT)(lambda params: client.editor.apply_edit(params))
    return client


def server_config(env: dict[str, str] | None = None) -> ClientServerConfig:
    environment = {**os.environ, "OPENAI_API_KEY": API_KEY, "PYTHONUNBUFFERED": "1"}
    environment.pop("OPENAI_BASE_URL", None)
    environment.update(env or {})
    return ClientServerConfig(
        server_command=SERVER, client_factory=make_client, server_env=environment
    )


async def initialize(
    client: LanguageClient,
    workspace: Path,
    base_url: str | None,
    *,
    capabilities: str = "visual-studio-code",
    experimental: dict[str, Any] | None = None,
    **options: Any,
) -> lsp.InitializeResult:
    init_options: dict[str, Any] = {"workspace": str(workspace)}
    if base_url is not None:
        init_options["baseUrl"] = base_url
    init_options.update(options)
    client_caps = client_capabilities(capabilities)
    if experimental is not None:
        client_caps.experimental = experimental
    return await client.initialize_session(
        lsp.InitializeParams(
            capabilities=client_caps,
            root_uri=workspace.as_uri(),
            initialization_options=init_options,
        )
    )
