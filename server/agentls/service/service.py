"""The connection: everything one editor connection has — configuration, the
model client, the pane worker, turn ids, progress, and the event relay.

Handlers talk to the connection; the connection talks to the worker and turns
its events into what the handlers and the editor need.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import threading
from collections.abc import Callable, Coroutine
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import anyio
import anyio.abc

from agentls.agent import events as ev
from agentls.agent.agent import Agent
from agentls.agent.approval import Approver
from agentls.agent.history import History
from agentls.agent.interrupt import CancelToken
from agentls.agent.settings import Settings
from agentls.config import AgentConfig, ModelConfig, SandboxPolicy, ToolConfig, parse_effort
from agentls.lsp.progress import TurnProgress, describe, end_message
from agentls.lsp.relay import EventRelay
from agentls.mcp.consent import ConsentAsker
from agentls.mcp.manager import STOP_GRACE, McpManager
from agentls.model.client import ResponsesClient
from agentls.protocol import errors
from agentls.protocol.options import InitializationOptions
from agentls.sessions import entries
from agentls.sessions.paths import workspace_folder
from agentls.sessions.recorder import SessionRecorder
from agentls.sessions.store import Resumed, SessionBusy, SessionNotFound, SessionStore
from agentls.tools.files import Files
from agentls.tools.registry import ToolBox, ToolSource, ToolSources
from agentls.tools.sandbox import availability as sandbox_availability
from agentls.tools.shell import sweep_leftovers
from agentls.worker import messages as wm
from agentls.worker.worker import PaneWorker

log = logging.getLogger(__name__)

R = TypeVar("R")

# The longest (ms) a new fork's pane.opened waits for the agent/fork answer to go out.
ANSWER_FIRST_MS = 20


def session_entries(agent: Agent) -> list[entries.Entry]:
    """The pane's conversation as displayable entries."""
    recorder = agent.recorder
    if isinstance(recorder, SessionRecorder):
        return recorder.entries(agent.tool_title)
    return entries.build(agent.history.items(), {}, agent.tool_title)


def store_error(exc: SessionNotFound | SessionBusy, session_id: str) -> errors.ProtocolError:
    kind: errors.ErrorKind = (
        "session_not_found" if isinstance(exc, SessionNotFound) else "pane_busy"
    )
    return errors.ProtocolError(kind, str(exc), {"sessionId": session_id})


class Connection:
    def __init__(
        self,
        notify: Callable[[dict[str, Any]], None],
        approver: Approver,
        next_turn_id: Callable[[], int],
        warn: Callable[[str], None] | None = None,
        consent: ConsentAsker | None = None,
        unsent: Callable[[], int] = lambda: 0,
        files: Files | None = None,
        editor_tools: ToolSource | None = None,
    ) -> None:
        self.relay = EventRelay(notify, self._observe)
        self.approver = approver
        # Tells the user something they must know (window/showMessage).
        self._warn = warn
        self._consent = consent
        # The editor's documents and edits, and the tools it makes possible.
        self._files = files
        self._editor_tools = editor_tools
        self._mcp: McpManager | None = None
        self._group: anyio.abc.TaskGroup | None = None
        self.worker: PaneWorker | None = None
        self.client: ResponsesClient | None = None
        self.store: SessionStore | None = None
        self.config: AgentConfig | None = None
        self._worker_done = anyio.Event()
        self.next_turn_id = next_turn_id
        self._fork_ids = itertools.count(1)
        self._steer_ids = itertools.count(1)
        self._waiters: dict[int, wm.Completion[wm.TurnFinished]] = {}
        self._forks: dict[str, wm.ForkOpened] = {}
        self._answered_forks: asyncio.Queue[str] = asyncio.Queue()
        # Bytes sent that the editor has not taken yet.
        self._unsent = unsent
        self._progress: dict[int, TurnProgress] = {}
        self._ended: set[int] = set()
        self._stopping = False
        self._shutdown = CancelToken()
        self._runner: asyncio.Task[None] | None = None

    # --- life cycle ------------------------------------------------------------------

    def spawn(self, function: Callable[..., Coroutine[Any, Any, Any]], *args: Any) -> None:
        """Run a background job for as long as the connection lives."""
        assert self._group is not None
        self._group.start_soon(function, *args)

    async def start(self, options: InitializationOptions, root: Path) -> None:
        """Create the main agent and the worker, in a task group of their own."""
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._runner = asyncio.ensure_future(self._run(options, root, ready))
        await ready

    async def _run(
        self, options: InitializationOptions, root: Path, ready: asyncio.Future[None]
    ) -> None:
        try:
            async with anyio.create_task_group() as group:
                self._group = group
                self.relay.bind(group)
                self._create(options, root)
                ready.set_result(None)
                await self._worker_done.wait()
                # Every turn has ended (its MCP calls too): stop the MCP servers,
                # then cancel what is left (relay pumps, progress jobs).
                self.mcp.stop()
                with anyio.move_on_after(STOP_GRACE):
                    await self.mcp.finished()  # past the grace, cancelled (and killed)
                group.cancel_scope.cancel()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc if isinstance(exc, Exception) else RuntimeError(exc))
            raise

    def _create(self, options: InitializationOptions, root: Path) -> None:
        model = ModelConfig.from_env(model=options.model, base_url=options.base_url)
        if options.idle_timeout is not None:
            model = replace(model, idle_timeout=float(options.idle_timeout))
        sandbox = SandboxPolicy(mode=options.sandbox, network=options.network)
        limits: dict[str, Any] = {
            "context_window": options.context_window,
            "auto_compact": options.auto_compact,
            "max_requests_per_turn": options.max_requests_per_turn,
        }
        self.config = AgentConfig(
            workspace=root,
            model=model,
            tools=ToolConfig(),
            sandbox=sandbox,
            **{key: value for key, value in limits.items() if value is not None},
        )
        log.info(
            "workspace %s; model %s at %s", root, model.model, model.base_url or "api.openai.com"
        )
        self.client = ResponsesClient(model)
        settings = Settings(
            effort=parse_effort(options.effort) if options.effort else "medium",
            fast_mode=bool(options.fast_mode),
            approval=options.approval,
            web_search=bool(options.web_search),
            review=bool(options.review),
        )
        assert self._group is not None
        # MCP servers start in the background; their tools join the tool box
        # as each becomes ready.
        self._mcp = McpManager(root, options.mcp_servers, self._consent)
        self.store = SessionStore(
            workspace_folder(root),
            workspace=root,
            model=model.model,
            retention=options.session_retention,
            secret=model.api_key,
        )
        agent = self._agent(settings, History(), self.store.recorder())
        self.worker = PaneWorker(agent)
        self.relay.attach(wm.MAIN, agent.events)
        self._group.start_soon(self._run_worker)
        self._group.start_soon(self._pump_worker_events)
        self._group.start_soon(self._announce_forks)
        # Import the SDK and build its client now, off the loop, so the first
        # turn does not wait for them; the MCP servers start once that is done
        # (on a 2-core machine their start-up would slow the first turn down).
        warm_up = threading.Thread(target=self.client.prepare, name="warm-up", daemon=True)
        warm_up.start()
        self._group.start_soon(self.mcp.run, partial(anyio.to_thread.run_sync, warm_up.join))
        # Kill what a server that died before us left behind (off the loop).
        threading.Thread(target=sweep_leftovers, name="sweep", daemon=True).start()
        self._group.start_soon(self._announce_sandbox, sandbox, settings.approval)

    async def _announce_sandbox(self, policy: SandboxPolicy, approval: str) -> None:
        """Say once, to the user, when commands cannot be sandboxed as asked."""
        if policy.mode == "off":
            log.info(
                "the shell sandbox is off: commands run as the user, under the approval policy"
            )
            return
        available = await sandbox_availability()
        if available.ok:
            log.info("commands run in the sandbox (%s, network %s)", policy.mode, policy.network)
        elif self._warn is not None:
            asks = (
                "nothing asks first (approval: never)"
                if approval == "never"
                else f"you are asked before every command and patch (approval: {approval})"
            )
            self._warn(
                f"agentls: commands cannot be sandboxed ({available.reason}); "
                f"they run as you, unsandboxed, and {asks}."
            )

    def _agent(
        self, settings: Settings, history: History, recorder: SessionRecorder, turns: int = 0
    ) -> Agent:
        """A pane's agent, on this connection's model client and task group."""
        assert self._group is not None and self.client is not None and self.config is not None
        return Agent(
            self._group,
            self.client,
            self.config,
            settings=settings,
            history=history,
            approver=self.approver,
            tools=ToolBox.default(self._tool_source()),
            recorder=recorder,
            turns=turns,
            files=self._files,
        )

    def _tool_source(self) -> ToolSource:
        if self._editor_tools is None:
            return self.mcp
        return ToolSources(self.mcp, self._editor_tools)

    async def _run_worker(self) -> None:
        assert self.worker is not None
        try:
            await self.worker.run(self._shutdown)
        finally:
            self._worker_done.set()

    async def stop(self) -> None:
        """Cancel every turn, answer every request, kill every process. Idempotent."""
        self._stopping = True
        if self.worker is None:
            return
        self._shutdown.cancel()
        await self._worker_done.wait()
        self.relay.drain_all()
        if self.client is not None:
            await self.client.aclose()
        if self._runner is not None:
            await asyncio.wait([self._runner])

    @property
    def stopping(self) -> bool:
        return self._stopping

    @property
    def mcp(self) -> McpManager:
        """The MCP servers (there from ``start`` on)."""
        assert self._mcp is not None
        return self._mcp

    def check_ready(self) -> PaneWorker:
        if self._stopping or self.worker is None or self.worker.stopping:
            raise errors.stopping()
        return self.worker

    def check_pane(self, pane: str) -> Agent:
        agent = self.check_ready().agent(pane)
        if agent is None:
            raise errors.pane_unavailable(pane)
        return agent

    # --- ids ---------------------------------------------------------------------------

    def next_fork_pane(self) -> str:
        return f"fork-{next(self._fork_ids)}"

    def pane_of(self, turn_id: int) -> str:
        worker = self.worker
        return (worker.pane_of(turn_id) if worker is not None else None) or wm.MAIN

    def next_steer_id(self) -> int:
        return next(self._steer_ids)

    # --- turns ---------------------------------------------------------------------------

    def expect_turn(self, turn_id: int) -> wm.Completion[wm.TurnFinished]:
        """Register interest in a turn's end before submitting it."""
        completion: wm.Completion[wm.TurnFinished] = wm.Completion()
        self._waiters[turn_id] = completion
        return completion

    def forget_turn(self, turn_id: int) -> None:
        """A turn that was cancelled before it was ever submitted."""
        self._waiters.pop(turn_id, None)
        self._ended.add(turn_id)
        progress = self._progress.pop(turn_id, None)
        if progress is not None:
            progress.end(end_message("cancelled", None))

    def track_progress(self, turn_id: int, progress: TurnProgress) -> bool:
        """Report the turn's work on ``progress``; False if the turn has already ended."""
        if turn_id in self._ended:
            return False
        self._progress[turn_id] = progress
        return True

    def end_turn(self, finished: wm.TurnFinished) -> None:
        """Everything of the turn has been sent: drain its events, end its progress."""
        self.relay.drain(finished.pane)
        self._ended.add(finished.id)
        progress = self._progress.pop(finished.id, None)
        if progress is not None:
            progress.end(end_message(finished.status, finished.error))

    async def command(self, command: wm.Command, reply: wm.Completion[R]) -> R:
        """Send a command to the worker and wait for its answer."""
        self.check_ready().send(command)
        with anyio.CancelScope(shield=True):
            result = await reply.wait()
        return result

    def send(self, command: wm.Command) -> None:
        self.check_ready().send(command)

    # --- worker events -----------------------------------------------------------------

    async def _pump_worker_events(self) -> None:
        assert self.worker is not None
        async for event in self.worker.events:
            try:
                self._on_worker_event(event)
            except Exception:
                log.exception("failed to handle worker event %r", event)

    def _on_worker_event(self, event: wm.WorkerEvent) -> None:
        match event:
            case wm.TurnFinished():
                waiter = self._waiters.pop(event.id, None)
                if waiter is not None:
                    waiter.set(event)  # the submit handler ends the turn itself
                else:
                    self.end_turn(event)  # a promoted steer: nobody waits on a request
            case wm.ForkOpened():
                # Announced once agent/fork is answered (``announce_fork``).
                self._forks[event.pane] = event
            case wm.SessionStarted():
                self.relay.attach(event.pane, event.events)
                if event.resumed is not None:
                    self._resumed(event.pane, event.agent, event.resumed)
                else:
                    self._opened(event.pane, event.agent, items=len(event.agent.history))
            case wm.ForkPromoted():
                self.relay.pane_event(event.fork, "pane.closed", promotedTo=event.pane)
                self.relay.promote(event.fork, event.pane)
                main = self.worker.agent(event.pane) if self.worker is not None else None
                self._opened(event.pane, main, promotedFrom=event.fork)
            case wm.PaneClosed():
                if event.promoted is None and event.pane != wm.MAIN:
                    self.relay.drain(event.pane)
                    self.relay.pane_event(event.pane, "pane.closed")
            case _:
                pass

    # --- sessions ----------------------------------------------------------------------

    def _opened(self, pane: str, agent: Agent | None, **fields: Any) -> None:
        """``pane.opened``: a session starts in the pane, with what it holds already."""
        if agent is not None:
            fields["sessionId"] = agent.session_id
            fields["entries"] = session_entries(agent)
        self.relay.pane_event(pane, "pane.opened", start=True, **fields)

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
            self._announce_fork(pane)

    def _announce_fork(self, pane: str) -> None:
        opened = self._forks.pop(pane, None)
        if opened is None or self._stopping:
            return
        self.relay.attach(pane, opened.events)
        fork = self.worker.agent(pane) if self.worker is not None else None
        self._opened(pane, fork, items=opened.items)

    def _resumed(self, pane: str, agent: Agent, resumed: Resumed) -> None:
        fields: dict[str, Any] = {
            "sessionId": agent.session_id,
            "title": resumed.title,
            "turns": resumed.turns,
            "entries": session_entries(agent),
            "interrupted": resumed.repair.interrupted,
            "unsent": resumed.repair.unsent,
        }
        if resumed.notice is not None:
            fields["notice"] = resumed.notice
        self.relay.pane_event(pane, "session.resumed", start=True, **fields)

    def panes(self) -> dict[str, Agent]:
        worker = self.worker
        if worker is None:
            return {}
        names = [wm.MAIN, *([worker.fork_pane] if worker.fork_pane else [])]
        return {name: agent for name in names if (agent := worker.agent(name)) is not None}

    def pane_of_session(self, session_id: str) -> str | None:
        return next((p for p, a in self.panes().items() if a.session_id == session_id), None)

    def check_closed(self, session_id: str) -> None:
        """A session open in a pane cannot be resumed elsewhere or deleted."""
        pane = self.pane_of_session(session_id)
        if pane is not None:
            raise errors.ProtocolError(
                "pane_busy", f"session {session_id} is open in pane {pane!r}", {"pane": pane}
            )

    async def delete_session(self, session_id: str) -> None:
        self.check_ready()
        self.check_closed(session_id)
        assert self.store is not None
        try:
            await anyio.to_thread.run_sync(self.store.delete, session_id)
        except (SessionNotFound, SessionBusy) as exc:
            raise store_error(exc, session_id) from None

    async def resume(self, pane: str, session_id: str) -> wm.SessionStarted:
        """Continue a stored session in ``pane`` (which must be idle)."""
        current = self.check_pane(pane)
        assert self.store is not None and self.client is not None and self.config is not None
        self.check_closed(session_id)
        if current.busy:
            raise errors.ProtocolError(
                "pane_busy", f"pane {pane!r} has turns in flight", {"pane": pane}
            )
        try:
            resumed = await anyio.to_thread.run_sync(
                self.store.resume, session_id, current.tool_title
            )
        except (SessionNotFound, SessionBusy) as exc:
            raise store_error(exc, session_id) from None
        settings = resumed.settings
        # Effort and fast mode are the session's; the approval policy stays
        # what the user has now, so resuming never loosens it.
        approval_changed = settings.approval != current.settings.approval
        settings.approval = current.settings.approval
        settings.review = current.settings.review
        agent = self._agent(settings, History(resumed.items), resumed.recorder, resumed.turns)
        if approval_changed:
            resumed.recorder.settings_changed()
        reply: wm.Completion[wm.SessionStarted | wm.Failure] = wm.Completion()
        result = await self.command(wm.NewSession(pane, agent, reply, resumed), reply)
        if isinstance(result, wm.Failure):
            raise errors.from_failure(result)
        return result

    def _observe(self, pane: str, event: ev.AgentEvent) -> None:
        """Every agent event passes here on its way out: progress follows it."""
        if event.turn_id is None:
            return
        progress = self._progress.get(event.turn_id)
        if progress is not None:
            message = describe(event)
            if message is not None:
                progress.report(message)
