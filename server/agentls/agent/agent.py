"""The agent: one conversation, driven by a single owner task.

``prompt`` accepts a turn at once; the owner task runs turns one at a time,
in the order they were accepted. The turn loop itself is ``run.TurnRun``; it
works with the agent's parts, each its own module: what a model request
carries (``requests``), fitting the context window and compacting
(``fitting``), running tool calls (``execution``) through the approval gate
(``gating``), and what a model stream shows the user (``sink``).

A turn stops by itself after too many model requests, or when the model
repeats one tool call over and over.
"""

from __future__ import annotations

import itertools
import logging
import uuid
from collections import deque
from typing import Any

import anyio
import anyio.abc

from agentls.agent import project_docs
from agentls.agent import snapshot as snapshots
from agentls.agent.approval import Approver
from agentls.agent.compaction import CompactionMode
from agentls.agent.context import ContextMeter
from agentls.agent.errors import (
    AgentBusy,
    AgentStopped,
    InvalidRequest,
    SteerQueueFull,
    TurnCancelled,
    TurnStopped,
)
from agentls.agent.errors import TurnFailed as TurnFailedError
from agentls.agent.events import AgentEvent, SteerAdmitted, TurnFinished, TurnStarted
from agentls.agent.execution import ToolRunner
from agentls.agent.fitting import CompactionJob, Compactor
from agentls.agent.gating import ApprovalGate
from agentls.agent.history import History
from agentls.agent.interrupt import InterruptHandle
from agentls.agent.receipt import Receipt
from agentls.agent.recorder import Recorder
from agentls.agent.requests import Requests
from agentls.agent.run import Conversation, TurnRun
from agentls.agent.settings import SettingChange, Settings
from agentls.agent.stream import EventStream
from agentls.agent.turn import Turn, TurnOutcome, TurnState
from agentls.config import AgentConfig
from agentls.domain import TurnStatus
from agentls.model.client import ResponsesClient
from agentls.model.errors import ModelError
from agentls.model.types import ContextSize, Item, ModelRequest, QuietSink, Usage
from agentls.text import valid_unicode
from agentls.tools.background import BackgroundProcess
from agentls.tools.files import DiskFiles, Files
from agentls.tools.registry import ToolBox, parse_call
from agentls.tools.shell import Shell
from agentls.tools.workspace import Workspace

log = logging.getLogger(__name__)


class Agent:
    """One conversation. Create with ``Agent(task_group, model, config)``.

    The agent's owner task lives in ``task_group``; so do its forks and spawns.
    """

    def __init__(
        self,
        task_group: anyio.abc.TaskGroup,
        model: ResponsesClient,
        config: AgentConfig,
        *,
        settings: Settings | None = None,
        history: History | None = None,
        tools: ToolBox | None = None,
        approver: Approver | None = None,
        background: bool = False,
        project: project_docs.ProjectDocs | None = None,
        recorder: Recorder | None = None,
        turns: int = 0,
        files: Files | None = None,
    ) -> None:
        self._task_group = task_group
        # Nobody watches a background agent (an auxiliary job): its model
        # streams are read in batches, so they do not delay the ones watched.
        self.background = background
        self._approver = approver
        self._model = model
        self.config = config
        self.settings = settings or Settings()
        self.workspace = Workspace(config.workspace)
        # The editor's documents and edits (the disk when there is no editor).
        self.files = files or DiskFiles()
        self._history = history or History()
        tools = tools or ToolBox.default()
        # Nobody can approve what an auxiliary job does: it gets no tool that
        # can change anything.
        self._tools = tools.read_only() if background else tools
        self.shell = Shell(task_group, self.workspace.root, config.sandbox, config.tools)
        self._jobs: deque[CompactionJob] = deque()
        self._job_scope: anyio.CancelScope | None = None
        # Turns started in this session (a resumed one counts its stored turns):
        # what the user sees as "turn N" of the pane, with no gaps.
        self.turns_started = turns
        self.interrupt = InterruptHandle()
        # Keeps the conversation on disk (the session store), if anyone does.
        self._recorder = recorder
        self.session_id = recorder.session_id if recorder is not None else uuid.uuid4().hex
        if recorder is not None:
            self._history.listener = recorder
            recorder.attach(self._history, self.settings)
        self.events = EventStream()
        self._requests = Requests(
            model,
            config,
            self.settings,
            self._history,
            self._tools,
            self.shell,
            self.workspace,
            project=project,
            background=background,
            cache_key=self.session_id,
        )
        self._compactor = Compactor(model, config, self._history, self._requests, self.events)
        gate = ApprovalGate(
            approver, self.settings, self._tools, self.shell, self.workspace, self.files
        )
        self._runner = ToolRunner(
            self._tools, config, self.workspace, self.shell, self.files, self.events, gate
        )
        self._conversation = Conversation(
            config=config,
            model=model,
            history=self._history,
            tools=self._tools,
            workspace=self.workspace,
            shell=self.shell,
            events=self.events,
            requests=self._requests,
            compactor=self._compactor,
            runner=self._runner,
            recorder=recorder,
            waiting_changed=self.waiting_changed,
        )
        self._ids = itertools.count(1)
        self._queue: deque[Turn] = deque()
        self._wakeup = anyio.Event()
        self._current: Turn | None = None
        self._stopping = False
        self._stopped = anyio.Event()
        task_group.start_soon(self._own, name=f"agent owner {id(self):x}")

    # --- public API -----------------------------------------------------------

    @property
    def stopped(self) -> bool:
        return self._stopping

    @property
    def history(self) -> History:
        return self._history

    def prompt(self, text: str, *, turn_id: int | None = None) -> Turn:
        """Accept a turn now; it runs after the turns accepted before it."""
        self._check_running()
        if not isinstance(text, str) or not text.strip():
            raise InvalidRequest("the prompt is empty")
        text = valid_unicode(text)
        turn = Turn(self, next(self._ids) if turn_id is None else turn_id, text)
        queued_behind = self.busy
        self._queue.append(turn)
        self._wakeup.set()
        if queued_behind:
            # It waits behind another turn: the recorder keeps it meanwhile.
            # (Into an idle pane it starts at once, and turn_started records it.)
            self.waiting_changed()
        return turn

    def change_setting(self, change: SettingChange) -> None:
        """Applies from the next model request or tool call, even mid-turn.
        Raises ConfigError for a value the setting does not take."""
        self._check_running()
        self.settings.change(change)
        if self._recorder is not None:
            self._recorder.settings_changed()

    @property
    def busy(self) -> bool:
        return (
            self._current is not None
            or bool(self._queue)
            or bool(self._jobs)
            or self._job_scope is not None
        )

    # --- the context window ------------------------------------------------------

    @property
    def project(self) -> project_docs.ProjectDocs:
        """The project instructions in force (AGENTS.md and the user's own)."""
        return self._requests.project

    @property
    def meter(self) -> ContextMeter:
        return self._requests.meter

    @property
    def context_window(self) -> int:
        return self._requests.context_window

    async def refresh_policy(self) -> None:
        """Learn what confines commands now, for the next request's instructions."""
        await self._requests.refresh_policy()

    def instructions(self) -> str:
        """The system instructions for the policy in force now."""
        return self._requests.instructions()

    def tool_specs(self) -> list[dict[str, Any]]:
        return self._requests.tool_specs()

    def fixed_tokens(self) -> int:
        """The estimate of what every request carries besides the conversation."""
        return self._requests.fixed_tokens()

    def context_size(self) -> ContextSize:
        """How full the window is: the estimated size of the next request."""
        return self._requests.context_size()

    def request(self, *, tool_choice: str = "auto") -> ModelRequest:
        """The next model request: the whole conversation and the settings in force."""
        return self._requests.request(tool_choice=tool_choice)

    def compact(self, focus: str | None = None) -> CompactionJob:
        """Queue a compaction of the conversation (the agent must be idle; a
        prompt accepted meanwhile runs after it). Raises AgentBusy when a turn
        is in flight."""
        self._check_running()
        if self.busy:
            raise AgentBusy()
        job = CompactionJob(focus)
        self._jobs.append(job)
        self._wakeup.set()
        return job

    async def run_compaction(
        self, reason: str, turn_id: int | None, sink: Any, focus: str | None = None
    ) -> tuple[int, int, CompactionMode, Usage]:
        """Compact the conversation (on the owner task, between steps)."""
        return await self._compactor.compact(reason, turn_id, sink, focus)

    async def cancel_tool(self, call_id: str) -> tuple[bool, int]:
        """Stop one running tool call (``agent/cancelTool``): its processes are
        killed, the model gets what it printed so far, marked as cancelled by
        the user, and the turn goes on. Returns (whether a running call was
        stopped, how many processes were killed)."""
        return await self._runner.cancel(call_id)

    def processes(self) -> list[BackgroundProcess]:
        """The pane's background processes (running, and recently finished)."""
        return self.shell.background.entries()

    @property
    def running_turn_id(self) -> int | None:
        current = self._current
        return current.id if current is not None and current.state is TurnState.RUNNING else None

    @property
    def recorder(self) -> Recorder | None:
        return self._recorder

    def tool_title(self, item: Item) -> str:
        """What the editor calls a tool call item ("Running `pytest -q`")."""
        if item.get("type") != "function_call":
            return f"Calling {item.get('name') or item.get('type')}"
        return self._tools.title(parse_call(item), self.workspace)

    def waiting_changed(self) -> None:
        """Tell the recorder what waits: queued prompts and steers not yet sent."""
        if self._recorder is None:
            return
        queued = [turn.prompt for turn in self._queue if not turn.cancel_requested]
        current = self._current
        self._recorder.waiting(queued, list(current.steers) if current is not None else [])

    def snapshot(self) -> dict[str, Any]:
        """JSON-serialisable state from which ``Agent.resume`` restores the conversation."""
        return snapshots.dump(self.config.model.model, self.settings, self._history.items())

    @classmethod
    def resume(
        cls,
        task_group: anyio.abc.TaskGroup,
        model: ResponsesClient,
        config: AgentConfig,
        snapshot: object,
        *,
        tools: ToolBox | None = None,
        approver: Approver | None = None,
        recorder: Recorder | None = None,
    ) -> Agent:
        """An agent restored from ``snapshot()``; raises InvalidSnapshot if it is not one."""
        settings, items = snapshots.load(snapshot)
        return cls(
            task_group,
            model,
            config,
            settings=settings,
            history=History(items),
            tools=tools,
            approver=approver,
            recorder=recorder,
        )

    def fork(self, *, background: bool = False) -> Agent:
        """A new agent with this conversation up to its last committed step
        and the same settings. The two share their history segments."""
        self._check_running()
        return self._sibling(self._history.fork(), background, self.project)

    def spawn(self, *, background: bool = False) -> Agent:
        """A clean sibling: no history; same configuration, workspace and settings.

        A new session (not background) reads the project instructions again;
        an auxiliary job shares this session's (no disk reads on its way)."""
        self._check_running()
        return self._sibling(History(), background, self.project if background else None)

    async def shutdown(self) -> None:
        """Cancel every turn, wait for their clean-up, stop. Idempotent."""
        if not self._stopping:
            self._stopping = True
            for turn in self._queue:
                turn.cancel_requested = True
                turn.resolve(error=TurnCancelled(Receipt(turn_id=turn.id)))
            self.waiting_changed()
            if self._current is not None:
                self._current.cancel_requested = True
                self._current.token.cancel()
            if self._job_scope is not None:
                self._job_scope.cancel()
            self._wakeup.set()
        await self._stopped.wait()

    # --- internals ------------------------------------------------------------

    def _check_running(self) -> None:
        if self._stopping:
            raise AgentStopped()

    def _sibling(
        self,
        history: History,
        background: bool,
        project: project_docs.ProjectDocs | None = None,
    ) -> Agent:
        settings = self.settings.copy()
        # A pane's fork or new session is a session of its own; an auxiliary
        # job (background) is nobody's session and is never recorded.
        recorder = None
        if self._recorder is not None and not background:
            recorder = self._recorder.sibling(history, settings)
        return Agent(
            self._task_group,
            self._model,
            self.config,
            settings=settings,
            history=history,
            tools=self._tools,
            approver=self._approver,
            background=background,
            project=project,
            recorder=recorder,
            files=self.files,
        )

    def _emit(self, event: AgentEvent) -> None:
        self.events.send(event)

    def admit_steer(self, turn: Turn, text: str) -> None:
        limit = self.config.max_pending_steers
        if len(turn.steers) >= limit:
            raise SteerQueueFull(limit)
        text = valid_unicode(text)
        turn.steers.append(text)
        self.waiting_changed()
        self._emit(SteerAdmitted(turn_id=turn.id, text=text))

    async def _own(self) -> None:
        try:
            while True:
                while not self._queue and not self._jobs:
                    if self._stopping:
                        return
                    self._wakeup = anyio.Event()
                    await self._wakeup.wait()
                if self._jobs:
                    await self._run_job(self._jobs.popleft())
                    continue
                turn = self._queue.popleft()
                self._current = turn
                await self._drive(turn)
                self._current = None
        finally:
            # Cancelled from outside (the task group is going away): nobody may hang.
            self._stopping = True
            for turn in [*self._queue, *([self._current] if self._current else [])]:
                turn.resolve(error=AgentStopped())
                if turn.state is not TurnState.FINISHED:
                    turn.end("failed")
            for job in self._jobs:
                job.error = AgentStopped()
                job.done.set()
            # The pane's background processes and its sandbox go with it.
            with anyio.CancelScope(shield=True), anyio.move_on_after(10):
                await self.shell.close()
            self.events.close()
            if self._recorder is not None:
                self._recorder.close()
            self._stopped.set()

    async def _run_job(self, job: CompactionJob) -> None:
        """An ``agent/compact``, run between turns on the owner task."""
        with anyio.CancelScope() as scope:
            self._job_scope = scope
            try:
                before, after, mode, _ = await self.run_compaction(
                    "manual", None, QuietSink(), job.focus
                )
                job.outcome = (before, after, mode)
            except Exception as exc:
                log.warning("compaction failed: %s", exc)
                job.error = exc
            finally:
                self._job_scope = None
        if scope.cancelled_caught:
            job.error = AgentStopped()
        job.done.set()

    async def _drive(self, turn: Turn) -> None:
        if turn.cancel_requested:
            # Cancelled while queued: it ends here, in its place in the order.
            receipt = Receipt(turn_id=turn.id)
            turn.resolve(error=TurnCancelled(receipt))
            self._emit(TurnFinished(turn_id=turn.id, status="cancelled", receipt=receipt))
            turn.end("cancelled", receipt)
            return
        turn.token = self.interrupt.rearm()
        turn.state = TurnState.RUNNING
        if self._recorder is not None:
            self._recorder.turn_started(turn.id, turn.prompt)
            self.waiting_changed()
        self.turns_started += 1
        self._emit(TurnStarted(turn_id=turn.id, prompt=turn.prompt, number=self.turns_started))
        run = TurnRun(self._conversation, turn)
        final: str | None = None
        error: str | None = None
        failure = "internal"
        with anyio.CancelScope() as scope:
            remove = turn.token.on_cancel(scope.cancel)
            try:
                final = await run.execute()
            except (ModelError, TurnStopped) as exc:
                error = str(exc)
                failure = exc.kind if isinstance(exc, ModelError) else "stopped"
                log.warning("turn %s failed: %s", turn.id, error)
            except Exception as exc:
                log.exception("turn %s failed", turn.id)
                error = f"internal error: {type(exc).__name__}: {exc}"
            finally:
                remove()
        if scope.cancelled_caught and final is None and error is None:
            with anyio.CancelScope(shield=True):
                receipt = await run.abandon()
            self._conclude(turn, run, "cancelled", receipt=receipt)
        elif error is not None:
            run.keep_pending_steers()
            self._conclude(turn, run, "failed", error=error, failure=failure)
        else:
            assert final is not None
            self._conclude(turn, run, "completed", final=final)
        self.interrupt.rearm()

    def _conclude(
        self,
        turn: Turn,
        run: TurnRun,
        status: TurnStatus,
        *,
        final: str = "",
        error: str | None = None,
        failure: str = "internal",
        receipt: Receipt | None = None,
    ) -> None:
        """Resolve the turn's handle, report its end, and mark it ended."""
        if self._recorder is not None:
            self._recorder.turn_finished(turn.id, status)
        turn.usage, turn.context = run.usage, self.context_size()
        if status == "completed":
            turn.resolve(TurnOutcome(turn.id, final, run.usage, turn.context))
        elif receipt is not None:
            turn.resolve(error=TurnCancelled(receipt))
        else:
            turn.resolve(error=TurnFailedError(error or "the turn failed", failure))
        self._emit(
            TurnFinished(
                turn_id=turn.id,
                status=status,
                final_message=final,
                error=error,
                failure=failure if status == "failed" else None,
                usage=run.usage,
                receipt=receipt,
                context=turn.context,
            )
        )
        turn.end(status, receipt)
