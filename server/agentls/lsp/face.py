"""The LSP face: what the ``agent/*`` handlers work with — the service (started
right after ``initialize``), the event relay (the service's ``EventSink``:
per-pane ``seq``, delta coalescing, ``agent/history``), work-done progress,
soft cancels — over the pygls server it was made for.

Handlers are thin translations: parse (done before them), call the service,
turn its answer into the wire's. A ``ServiceError`` they let through is
answered with the code of its kind (``app``'s dispatcher).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
from pygls.lsp.server import LanguageServer

from agentls.lsp.cancel import SoftCancel
from agentls.lsp.editor import LspEditor
from agentls.lsp.progress import TurnProgress, describe, end_message
from agentls.lsp.relay import EventRelay
from agentls.protocol.options import InitializationOptions
from agentls.schema.wire import ProgressToken
from agentls.service.errors import ServiceError, stopping
from agentls.service.events import PaneEvent, TurnEnded
from agentls.service.options import ServiceOptions
from agentls.service.service import AgentService
from agentls.worker.messages import TurnFinished

log = logging.getLogger(__name__)

# The longest (ms) a new fork's pane.opened waits for the agent/fork answer to go out.
ANSWER_FIRST_MS = 20


def service_options(options: InitializationOptions) -> ServiceOptions:
    """The service's start from ``initializationOptions``."""
    return ServiceOptions(
        model=options.model,
        base_url=options.base_url,
        effort=options.effort,
        fast_mode=options.fast_mode,
        approval=options.approval,
        sandbox=options.sandbox,
        network=options.network,
        idle_timeout=options.idle_timeout,
        mcp_servers=options.mcp_servers,
        context_window=options.context_window,
        auto_compact=options.auto_compact,
        web_search=options.web_search,
        max_requests_per_turn=options.max_requests_per_turn,
        session_retention=options.session_retention,
        review=options.review,
    )


class LspFace:
    """One language server's face onto its service."""

    def __init__(
        self,
        server: LanguageServer,
        editor: LspEditor,
        notify: Callable[[dict[str, Any]], None],
        unsent: Callable[[], int],
        closing: Callable[[], bool],
        configured: Callable[[], tuple[InitializationOptions, Path] | None],
        soft_cancels: dict[Any, SoftCancel],
    ) -> None:
        self.server = server
        # Set by initialize: the service starts from it.
        self._configured = configured
        # Shutdown has been asked for (no service starts any more).
        self._closing = closing
        self.editor = editor
        self.relay = EventRelay(notify, self._observe)
        # The service's EventSink: agent events go straight to the relay.
        self.event = self.relay.forward
        # Bytes sent that the editor has not taken yet.
        self._unsent = unsent
        self._service: AgentService | None = None
        self._starting: asyncio.Task[AgentService] | None = None
        self._runner: asyncio.Task[None] | None = None
        # Turn ids are unique for the life of the server, whatever pane or session.
        self._turn_ids = itertools.count(1)
        # $/cancelRequest of the submits in flight (the protocol registers them).
        self.soft_cancels = soft_cancels
        self._progress: dict[int, TurnProgress] = {}
        self._ended: set[int] = set()
        self._answered_forks: asyncio.Queue[str] = asyncio.Queue()
        self._announcer: asyncio.Task[None] | None = None

    def next_turn_id(self) -> int:
        return next(self._turn_ids)

    # --- the service ---------------------------------------------------------------------

    @property
    def started(self) -> bool:
        return self._service is not None

    def panes(self) -> list[str]:
        return list(self._service.panes()) if self._service is not None else []

    async def service(self) -> AgentService:
        """The running service; raises ServiceError (stopping) once it stops."""
        if self._service is not None:
            if self._service.stopping:
                raise stopping()
            return self._service
        configured = self._configured()
        if configured is None:
            raise ServiceError(
                "refused", "the server is not initialized yet: send initialize first"
            )
        if self._closing():
            raise stopping()
        if self._starting is None:
            self._starting = asyncio.ensure_future(self._start(*configured))
        return await asyncio.shield(self._starting)

    async def _start(self, options: InitializationOptions, root: Path) -> AgentService:
        self.editor.read_diagnostics_in(root)
        service = AgentService(self.editor, self, self.next_turn_id)
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def started() -> None:
            ready.set_result(None)

        async def run() -> None:
            try:
                await service.run(service_options(options), root, started)
            except BaseException as exc:
                if not ready.done():
                    ready.set_exception(exc if isinstance(exc, Exception) else RuntimeError(exc))
                raise

        self._runner = asyncio.ensure_future(run())
        await ready
        self._service = service
        self._announcer = asyncio.ensure_future(self._announce_forks())
        return service

    async def stop(self) -> None:
        """Cancel every turn, answer every request, kill every process."""
        if self._starting is not None:
            try:
                await self._starting
            except Exception:
                pass
        if self._service is not None:
            await self._service.stop()
            self.relay.flush_all()
        if self._runner is not None:
            await asyncio.wait([self._runner])
        if self._announcer is not None:
            self._announcer.cancel()

    # --- events (the service's EventSink) -------------------------------------------------

    def emit(self, pane: str, event: PaneEvent | TurnEnded) -> None:
        if isinstance(event, TurnEnded):
            self.end_turn(event.finished)  # a promoted steer: nobody waits on a request
        else:
            self.relay.pane_changed(pane, event)

    def flush(self, pane: str) -> None:
        self.relay.flush(pane)

    def _observe(self, pane: str, event: Any) -> None:
        """Every agent event passes here on its way out: progress follows it."""
        turn_id = event.turn_id
        if turn_id is None:
            return
        progress = self._progress.get(turn_id)
        if progress is not None:
            message = describe(event)
            if message is not None:
                progress.report(message)

    # --- requests ------------------------------------------------------------------------

    def soft_cancel(self) -> SoftCancel:
        """The soft cancel of the request being handled (a fresh one if it has none)."""
        msg_id = self.server.protocol.msg_id
        return self.soft_cancels.get(msg_id) or SoftCancel()

    def forget_request(self) -> None:
        self.soft_cancels.pop(self.server.protocol.msg_id, None)

    # --- turns and their progress --------------------------------------------------------

    @property
    def supports_progress(self) -> bool:
        server = self.server
        window = server.client_capabilities.window if server.protocol._workspace else None
        return bool(window and window.work_done_progress)

    async def open_progress(self, token: ProgressToken | None) -> TurnProgress | None:
        """Progress on the client's token, or on one we create if the client allows it."""
        server = self.server
        if token is None:
            if not self.supports_progress:
                return None
            token = f"agentls/{uuid.uuid4().hex}"
            try:
                with anyio.fail_after(10):
                    # Shielded: a cancelled await must not leave pygls a dead future (pygls#621).
                    await asyncio.shield(server.work_done_progress.create_async(token))
            except Exception as exc:
                log.warning("the client did not create a progress token: %s", exc)
                return None
        return TurnProgress(server.work_done_progress, token)

    def track_progress(self, turn_id: int, progress: TurnProgress) -> bool:
        """Report the turn's work on ``progress``; False if the turn has already ended."""
        if turn_id in self._ended:
            return False
        self._progress[turn_id] = progress
        return True

    def end_turn(self, finished: TurnFinished) -> None:
        """Everything of the turn has been sent: drain its events, end its progress."""
        if self._service is not None:
            self._service.drain(finished.pane)
        self._ended.add(finished.id)
        progress = self._progress.pop(finished.id, None)
        if progress is not None:
            progress.end(end_message(finished.status, finished.error))

    # --- forks ---------------------------------------------------------------------------

    def fork_answered(self, pane: str) -> None:
        """``agent/fork`` has been answered (sent): now announce the fork.

        A long conversation's entries make a long ``pane.opened``, and the
        answer must not wait for it. The fork's events wait in its agent
        until then, so ``pane.opened`` is still the first of them."""
        self._answered_forks.put_nowait(pane)

    async def _announce_forks(self) -> None:
        while True:
            pane = await self._answered_forks.get()
            # Let the answer reach the editor first: encoding a long pane.opened
            # holds the interpreter, and the thread that writes would wait.
            # (The writer's thread offers no event to wait on: polled, briefly.)
            for _ in range(ANSWER_FIRST_MS):
                if not self._unsent():
                    break
                await asyncio.sleep(0.001)
            if self._service is not None:
                self._service.announce_fork(pane)


__all__ = ["LspFace", "ServiceError", "service_options"]
