"""The service: everything one editor's agent has — configuration, the model
client, the pane worker, sessions, MCP — behind a transport-free API.

A face (``agentls.lsp``; ACP next) calls it and translates: the service's
methods take and return plain values and raise ``ServiceError`` (a kind and a
message); its events go to the face's ``EventSink``, typed; what it needs of
the editor it asks through the face's ``Editor``. It imports no JSON-RPC.
"""

from __future__ import annotations

import itertools
import logging
import threading
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any, Literal, TypeVar

import anyio
import anyio.abc

from agentls.agent.agent import Agent
from agentls.agent.approval import ApprovalDecision, ApprovalRequest
from agentls.agent.history import History
from agentls.agent.interrupt import CancelToken
from agentls.agent.settings import SettingChange, Settings
from agentls.config import AgentConfig, ModelConfig, SandboxPolicy, ToolConfig, parse_effort
from agentls.mcp.manager import STOP_GRACE, McpManager
from agentls.model.client import ResponsesClient
from agentls.service.editor import Editor
from agentls.service.errors import ServiceError, from_failure, pane_unavailable, stopping
from agentls.service.events import (
    EventRoutes,
    EventSink,
    PaneClosed,
    PaneOpened,
    SessionResumed,
    TurnEnded,
)
from agentls.service.options import ServiceOptions
from agentls.service.views import PaneView
from agentls.sessions import entries
from agentls.sessions.paths import workspace_folder
from agentls.sessions.recorder import SessionRecorder
from agentls.sessions.store import Resumed as StoredSession
from agentls.sessions.store import SessionBusy, SessionInfo, SessionNotFound, SessionStore
from agentls.tools.base import Tool
from agentls.tools.diagnostics import GetDiagnostics
from agentls.tools.registry import ToolBox, ToolSources
from agentls.tools.sandbox import availability as sandbox_availability
from agentls.tools.shell import sweep_leftovers
from agentls.worker import messages as wm
from agentls.worker.worker import PaneWorker

log = logging.getLogger(__name__)

R = TypeVar("R")
MAIN = wm.MAIN


def session_entries(agent: Agent) -> list[entries.Entry]:
    """The pane's conversation as displayable entries."""
    recorder = agent.recorder
    if isinstance(recorder, SessionRecorder):
        return recorder.entries(agent.tool_title)
    return entries.build(agent.history.items(), {}, agent.tool_title)


def _store_error(exc: SessionNotFound | SessionBusy, session_id: str) -> ServiceError:
    kind: Literal["session_not_found", "pane_busy"] = (
        "session_not_found" if isinstance(exc, SessionNotFound) else "pane_busy"
    )
    return ServiceError(kind, str(exc), {"sessionId": session_id})


@dataclass(frozen=True, slots=True)
class Forked:
    pane: str
    items: int


@dataclass(frozen=True, slots=True)
class Resumed:
    pane: str
    session_id: str
    turns: int
    title: str
    interrupted: bool
    unsent: list[str]


@dataclass(frozen=True, slots=True)
class JobCancelled:
    """An auxiliary job was cancelled (by ``cancel``, its pane closing, or shutdown)."""

    stopping: bool


class TurnTicket:
    """A turn about to be submitted: its id is known (a face reports progress
    on it) before ``submit`` sends it; ``finished`` resolves when it ends."""

    __slots__ = ("_service", "finished", "id", "pane")

    def __init__(self, service: AgentService, pane: str, turn_id: int) -> None:
        self._service = service
        self.pane = pane
        self.id = turn_id
        self.finished: wm.Completion[wm.TurnFinished] = wm.Completion()

    def submit(self, prompt: str, *, cancelled: bool = False) -> None:
        """Queue the turn on its pane (``cancelled``: it was cancelled before
        it was sent: it takes its place in the queue and ends there at once)."""
        self._service.send(wm.Submit(self.pane, self.id, prompt, cancelled=cancelled))

    def cancel(self) -> None:
        """Cancel the turn, if it has not ended (fire and forget)."""
        if not self.finished.done():
            self._service.cancel_soon(self.pane, self.id)

    async def result(self) -> wm.TurnFinished:
        return await self.finished.wait()


class AgentService:
    """Create with the face's editor port, event sink and turn ids, then
    ``await start(options, root)``."""

    def __init__(self, editor: Editor, sink: EventSink, next_turn_id: Callable[[], int]) -> None:
        self.editor = editor
        self._sink = sink
        self.routes = EventRoutes(sink)
        self.next_turn_id = next_turn_id
        self._mcp: McpManager | None = None
        self._group: anyio.abc.TaskGroup | None = None
        self._worker: PaneWorker | None = None
        self.client: ResponsesClient | None = None
        self.store: SessionStore | None = None
        self.config: AgentConfig | None = None
        self._editor_tools = _EditorTools(editor)
        self._worker_done = anyio.Event()
        self._fork_ids = itertools.count(1)
        self._steer_ids = itertools.count(1)
        self._tickets: dict[int, TurnTicket] = {}
        self._forks: dict[str, wm.ForkOpened] = {}
        self._stopping = False
        self._shutdown = CancelToken()
        self._stopped = anyio.Event()

    # --- life cycle ------------------------------------------------------------------

    def spawn(self, function: Callable[..., Coroutine[Any, Any, Any]], *args: Any) -> None:
        """Run a background job for as long as the service lives."""
        assert self._group is not None
        self._group.start_soon(function, *args)

    async def run(self, options: ServiceOptions, root: Path, ready: Callable[[], None]) -> None:
        """Create the main pane and the worker and serve until ``stop``; call
        ``ready`` once the service takes requests."""
        try:
            async with anyio.create_task_group() as group:
                self._group = group
                self.routes.bind(group)
                self._create(options, root)
                ready()
                await self._worker_done.wait()
                # Every turn has ended (its MCP calls too): stop the MCP servers,
                # then cancel what is left (event pumps).
                self.mcp.stop()
                with anyio.move_on_after(STOP_GRACE):
                    await self.mcp.finished()  # past the grace, cancelled (and killed)
                group.cancel_scope.cancel()
        finally:
            self._stopped.set()

    def _create(self, options: ServiceOptions, root: Path) -> None:
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
        self._mcp = McpManager(root, options.mcp_servers, self.editor.consent)
        self.store = SessionStore(
            workspace_folder(root),
            workspace=root,
            model=model.model,
            retention=options.session_retention,
            secret=model.api_key,
        )
        agent = self._agent(settings, History(), self.store.recorder())
        self._worker = PaneWorker(agent)
        self.routes.attach(MAIN, agent.events)
        self._group.start_soon(self._run_worker)
        self._group.start_soon(self._pump_worker_events)
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
            return
        asks = (
            "nothing asks first (approval: never)"
            if approval == "never"
            else f"you are asked before every command and patch (approval: {approval})"
        )
        self.editor.show_message(
            f"agentls: commands cannot be sandboxed ({available.reason}); "
            f"they run as you, unsandboxed, and {asks}."
        )

    def _agent(
        self, settings: Settings, history: History, recorder: SessionRecorder, turns: int = 0
    ) -> Agent:
        """A pane's agent, on this service's model client and task group."""
        assert self._group is not None and self.client is not None and self.config is not None
        return Agent(
            self._group,
            self.client,
            self.config,
            settings=settings,
            history=history,
            approver=self._approve,
            tools=ToolBox.default(ToolSources(self.mcp, self._editor_tools)),
            recorder=recorder,
            turns=turns,
            files=self.editor.files,
        )

    async def _approve(self, request: ApprovalRequest) -> ApprovalDecision:
        return await self.editor.approve(self.pane_of(request.turn_id), request)

    async def _run_worker(self) -> None:
        assert self._worker is not None
        try:
            await self._worker.run(self._shutdown)
        finally:
            self._worker_done.set()

    async def stop(self) -> None:
        """Cancel every turn, answer every request, kill every process. Idempotent."""
        self._stopping = True
        if self._worker is None:
            return
        self._shutdown.cancel()
        await self._worker_done.wait()
        self.routes.drain_all()
        if self.client is not None:
            await self.client.aclose()
        await self._stopped.wait()

    @property
    def stopping(self) -> bool:
        return self._stopping

    @property
    def mcp(self) -> McpManager:
        """The MCP servers (there from ``start`` on)."""
        assert self._mcp is not None
        return self._mcp

    def _ready(self) -> PaneWorker:
        if self._stopping or self._worker is None or self._worker.stopping:
            raise stopping()
        return self._worker

    def check_ready(self) -> None:
        """Raises ServiceError (stopping) once the service is shutting down."""
        self._ready()

    def send(self, command: wm.Command) -> None:
        self._ready().send(command)

    async def _command(self, command: wm.Command, reply: wm.Completion[R]) -> R:
        """Send a command to the worker and wait for its answer."""
        self.send(command)
        with anyio.CancelScope(shield=True):
            result = await reply.wait()
        return result

    # --- panes ---------------------------------------------------------------------------

    def _agent_of(self, pane: str) -> Agent:
        agent = self._ready().agent(pane)
        if agent is None:
            raise pane_unavailable(pane)
        return agent

    def pane(self, pane: str) -> PaneView:
        """The pane as it is now; raises ServiceError if it is not open."""
        return PaneView(pane, self._agent_of(pane))

    def panes(self) -> dict[str, PaneView]:
        worker = self._worker
        if worker is None:
            return {}
        names = [MAIN, *([worker.fork_pane] if worker.fork_pane else [])]
        return {n: PaneView(n, agent) for n in names if (agent := worker.agent(n)) is not None}

    @property
    def fork_pane(self) -> str | None:
        return self._ready().fork_pane

    def pane_of(self, turn_id: int) -> str:
        """The pane a turn runs on now (main, if it is not known)."""
        worker = self._worker
        return (worker.pane_of(turn_id) if worker is not None else None) or MAIN

    def drain(self, pane: str) -> None:
        """Every event the pane's agents have emitted so far goes to the sink now."""
        self.routes.drain(pane)

    async def fork(self, pane: str) -> Forked:
        """Open a fork of ``pane``; its ``PaneOpened`` (and its other events)
        wait until ``announce_fork``."""
        self._agent_of(pane)
        open_fork = self._ready().fork_pane
        if open_fork is not None:
            # Checked before a fork name is taken: names count up without gaps.
            raise ServiceError("fork_already_open", f"a fork is already open: {open_fork}")
        reply: wm.Completion[wm.ForkOpened | wm.ForkFailed] = wm.Completion()
        name = f"fork-{next(self._fork_ids)}"
        result = await self._command(wm.OpenFork(name, pane, reply), reply)
        if isinstance(result, wm.ForkFailed):
            raise from_failure(result.failure)
        return Forked(result.pane, result.items)

    def announce_fork(self, pane: str) -> None:
        """The fork's ``PaneOpened``, then its events: a face calls it once
        it has answered ``fork``."""
        opened = self._forks.pop(pane, None)
        if opened is None or self._stopping:
            return
        self.routes.attach(pane, opened.events)
        worker = self._worker
        fork = worker.agent(pane) if worker is not None else None
        self._opened(pane, fork, items=opened.items)

    async def close_pane(self, pane: str) -> int:
        """Cancel the pane's turns and shut its agent down; how many turns
        were cancelled."""
        self._agent_of(pane)
        reply: wm.Completion[wm.PaneClosed | wm.Failure] = wm.Completion()
        result = await self._command(wm.ClosePane(pane, reply), reply)
        if isinstance(result, wm.Failure):
            raise from_failure(result)
        return result.cancelled

    async def new_session(self, pane: str) -> str:
        """A new session in the (idle) pane; its id."""
        self._agent_of(pane)
        reply: wm.Completion[wm.SessionStarted | wm.Failure] = wm.Completion()
        result = await self._command(wm.NewSession(pane, None, reply), reply)
        if isinstance(result, wm.Failure):
            raise from_failure(result)
        return result.agent.session_id

    async def resume(self, pane: str, session_id: str) -> Resumed:
        """Continue a stored session in ``pane`` (which must be idle)."""
        current = self._agent_of(pane)
        assert self.store is not None
        self._check_closed(session_id)
        if current.busy:
            raise ServiceError("pane_busy", f"pane {pane!r} has turns in flight", {"pane": pane})
        try:
            resumed = await anyio.to_thread.run_sync(
                self.store.resume, session_id, current.tool_title
            )
        except (SessionNotFound, SessionBusy) as exc:
            raise _store_error(exc, session_id) from None
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
        result = await self._command(wm.NewSession(pane, agent, reply, resumed), reply)
        if isinstance(result, wm.Failure):
            raise from_failure(result)
        return Resumed(
            result.pane,
            agent.session_id,
            resumed.turns,
            resumed.title,
            resumed.repair.interrupted,
            list(resumed.repair.unsent),
        )

    async def compact(self, pane: str, focus: str | None) -> wm.Compacted:
        self._agent_of(pane)
        reply: wm.Completion[wm.Compacted | wm.Failure] = wm.Completion()
        result = await self._command(wm.Compact(pane, focus, reply), reply)
        if isinstance(result, wm.Failure):
            raise from_failure(result)
        return result

    async def change_setting(self, pane: str, change: SettingChange) -> None:
        """From the pane's next model request or tool call on (also mid-turn)."""
        self._agent_of(pane)
        reply: wm.Completion[wm.SettingChanged] = wm.Completion()
        result = await self._command(wm.ChangeSetting(pane, change, reply), reply)
        if result.failure is not None:
            raise from_failure(result.failure)

    async def reconfigure_model(self, model: str | None, base_url: str | None) -> None:
        """Every model request from now on goes to this model / base URL."""
        if self.client is not None:
            await self.client.reconfigure(model=model, base_url=base_url)

    # --- turns ---------------------------------------------------------------------------

    def new_turn(self, pane: str) -> TurnTicket:
        """A ticket for a turn on ``pane`` (checked open now); ``submit`` it."""
        self._agent_of(pane)
        ticket = TurnTicket(self, pane, self.next_turn_id())
        self._tickets[ticket.id] = ticket
        return ticket

    def forget(self, ticket: TurnTicket) -> None:
        """A ticket that will never be submitted."""
        self._tickets.pop(ticket.id, None)

    async def steer(
        self, pane: str, prompt: str, expected_turn_id: int | None
    ) -> wm.SteerAdmitted | wm.SteerPromoted:
        """Add ``prompt`` to the pane's running turn, or start a turn with it."""
        self._agent_of(pane)
        reply: wm.Completion[wm.SteerAdmitted | wm.SteerPromoted | wm.SteerFailed] = wm.Completion()
        command = wm.Steer(
            pane, next(self._steer_ids), self.next_turn_id, prompt, expected_turn_id, reply
        )
        result = await self._command(command, reply)
        if isinstance(result, wm.SteerFailed):
            raise from_failure(result.failure)
        return result

    def cancel_soon(self, pane: str, turn_id: int) -> None:
        """Cancel one turn without waiting for it to stop."""
        self.send(wm.Cancel(pane, turn_id))

    async def cancel(self, pane: str, turn_id: int | None) -> wm.TurnsCancelled:
        """Cancel one turn, or every turn of the pane (and its auxiliary jobs);
        answered once they have really stopped."""
        self._agent_of(pane)
        reply: wm.Completion[wm.TurnsCancelled] = wm.Completion()
        command: wm.Command = (
            wm.CancelAll(pane, reply) if turn_id is None else wm.Cancel(pane, turn_id, reply)
        )
        result = await self._command(command, reply)
        if result.failure is not None and result.failure.kind == "stopping":
            raise from_failure(result.failure)
        return result

    async def cancel_tool(self, pane: str, call_id: str) -> wm.ToolCancelled:
        self._agent_of(pane)
        reply: wm.Completion[wm.ToolCancelled | wm.Failure] = wm.Completion()
        result = await self._command(wm.CancelTool(pane, call_id, reply), reply)
        if isinstance(result, wm.Failure):
            raise from_failure(result)
        return result

    async def auxiliary(
        self, pane: str, prompt: str, context: Literal["clean", "conversation"]
    ) -> str | JobCancelled:
        """A one-off prompt on an isolated copy of the pane's agent: its
        answer. Cancelled from outside (the face's request was cancelled), it
        stops this job only, and re-raises once the job has stopped."""
        self._agent_of(pane)
        scope = CancelToken()
        completion: wm.Completion[wm.AuxiliaryResult] = wm.Completion()
        self.send(wm.Auxiliary(pane, self.next_turn_id(), prompt, scope, completion, context))
        try:
            result = await completion.wait()
        except anyio.get_cancelled_exc_class():
            scope.cancel()
            with anyio.CancelScope(shield=True):
                await completion.wait()
            raise
        if isinstance(result, str):
            return result
        if isinstance(result, wm.AuxiliaryCancelled):
            return JobCancelled(self._stopping)
        failure = result.failure
        if failure.kind == "internal":
            raise ServiceError("internal", f"the auxiliary job failed: {failure.message}")
        raise from_failure(failure)

    # --- sessions ------------------------------------------------------------------------

    async def sessions(self, limit: int | None) -> list[tuple[SessionInfo, str | None]]:
        """Stored sessions, most recently changed first, with the pane each is open in."""
        self._ready()
        assert self.store is not None
        found = await anyio.to_thread.run_sync(self.store.list, limit)
        open_in = {view.session_id: name for name, view in self.panes().items()}
        return [(info, open_in.get(info.session_id)) for info in found]

    def _check_closed(self, session_id: str) -> None:
        """A session open in a pane cannot be resumed elsewhere or deleted."""
        pane = next((n for n, v in self.panes().items() if v.session_id == session_id), None)
        if pane is not None:
            raise ServiceError(
                "pane_busy", f"session {session_id} is open in pane {pane!r}", {"pane": pane}
            )

    async def delete_session(self, session_id: str) -> None:
        self._ready()
        self._check_closed(session_id)
        assert self.store is not None
        try:
            await anyio.to_thread.run_sync(self.store.delete, session_id)
        except (SessionNotFound, SessionBusy) as exc:
            raise _store_error(exc, session_id) from None

    # --- the worker's events -----------------------------------------------------------

    async def _pump_worker_events(self) -> None:
        assert self._worker is not None
        async for event in self._worker.events:
            try:
                self._on_worker_event(event)
            except Exception:
                log.exception("failed to handle worker event %r", event)

    def _on_worker_event(self, event: wm.WorkerEvent) -> None:
        match event:
            case wm.TurnFinished():
                ticket = self._tickets.pop(event.id, None)
                if ticket is not None:
                    ticket.finished.set(event)  # its face ends the turn itself
                else:
                    self._sink.emit(event.pane, TurnEnded(event))  # a promoted steer's
            case wm.ForkOpened():
                # Announced once the face has answered fork (``announce_fork``).
                self._forks[event.pane] = event
            case wm.SessionStarted():
                self.routes.attach(event.pane, event.events)
                if event.resumed is not None:
                    self._resumed(event.pane, event.agent, event.resumed)
                else:
                    self._opened(event.pane, event.agent, items=len(event.agent.history))
            case wm.ForkPromoted():
                self._sink.emit(event.fork, PaneClosed(promoted_to=event.pane))
                self.routes.promote(event.fork, event.pane)
                main = self._worker.agent(event.pane) if self._worker is not None else None
                self._opened(event.pane, main, promoted_from=event.fork)
            case wm.PaneClosed():
                if event.promoted is None and event.pane != MAIN:
                    self.routes.drain(event.pane)
                    self._sink.emit(event.pane, PaneClosed())
            case _:
                pass

    def _opened(
        self,
        pane: str,
        agent: Agent | None,
        *,
        items: int | None = None,
        promoted_from: str | None = None,
    ) -> None:
        if agent is None:
            opened = PaneOpened(items=items, promoted_from=promoted_from)
        else:
            opened = PaneOpened(agent.session_id, session_entries(agent), items, promoted_from)
        self._sink.emit(pane, opened)

    def _resumed(self, pane: str, agent: Agent, resumed: StoredSession) -> None:
        self._sink.emit(
            pane,
            SessionResumed(
                session_id=agent.session_id,
                title=resumed.title,
                turns=resumed.turns,
                entries=session_entries(agent),
                interrupted=resumed.repair.interrupted,
                unsent=list(resumed.repair.unsent),
                notice=resumed.notice,
            ),
        )


class _EditorTools:
    """The tools the editor makes possible (a ``ToolSource``): today
    ``get_diagnostics``, while the connected editor can answer it."""

    def __init__(self, editor: Editor) -> None:
        self._editor = editor
        self._tool = GetDiagnostics(editor)

    @property
    def version(self) -> int:
        return self._editor.generation

    def tools(self) -> Sequence[Tool]:
        return [self._tool] if self._editor.reads_diagnostics() else []
