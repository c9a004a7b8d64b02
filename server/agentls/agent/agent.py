"""The agent: one conversation, driven by a single owner task.

``prompt`` accepts a turn at once; the owner task runs turns one at a time,
in the order they were accepted. A turn streams a model response, runs the
tools it called one after another, and loops until the model answers. Only
whole steps are committed to the history (a model response together with the
outputs of its tool calls), so a fork or a cancellation never sees half of one.

Before each model request the agent estimates the request's size; above the
compaction threshold it compacts the conversation first (``compaction``), and
a request the model refuses as too long is compacted and sent once more. A
turn stops by itself after too many model requests, or when the model repeats
one tool call over and over.
"""

from __future__ import annotations

import itertools
import json
import logging
import time
import uuid
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.abc

from agentls.agent import compaction, project_docs
from agentls.agent import instructions as system_prompt
from agentls.agent import snapshot as snapshots
from agentls.agent.approval import (
    Allowances,
    Approver,
    denied_output,
    escalates,
    needs_approval,
    refused_escalation,
    rejected_output,
    request_for,
)
from agentls.agent.context import ContextMeter, fixed_tokens
from agentls.agent.errors import (
    AgentBusy,
    AgentStopped,
    InvalidRequest,
    SteerQueueFull,
    TurnCancelled,
    TurnStopped,
)
from agentls.agent.errors import TurnFailed as TurnFailedError
from agentls.agent.events import (
    AgentEvent,
    Citation,
    Citations,
    CompactionFinished,
    CompactionStarted,
    ModelRetry,
    PlanStep,
    PlanUpdated,
    ReasoningDelta,
    Refusal,
    SteerAdmitted,
    SteerApplied,
    TextDelta,
    ToolFinished,
    ToolOutput,
    ToolPreparing,
    ToolStarted,
    TurnFinished,
    TurnStarted,
    UsageUpdated,
)
from agentls.agent.history import History
from agentls.agent.interrupt import InterruptHandle
from agentls.agent.receipt import AbortedToolCall, Receipt
from agentls.agent.recorder import Recorder
from agentls.agent.settings import SettingChange, Settings
from agentls.agent.stream import EventStream
from agentls.agent.turn import Turn, TurnOutcome, TurnState
from agentls.config import AgentConfig
from agentls.domain import ToolStatus, TurnStatus
from agentls.model.client import ResponsesClient
from agentls.model.errors import ModelError
from agentls.model.items import call_id as item_call_id
from agentls.model.items import call_output, for_history
from agentls.model.models import model_info
from agentls.model.types import (
    ContextSize,
    Item,
    ModelRequest,
    ModelResponse,
    QuietSink,
    Retry,
    Usage,
)
from agentls.redaction import StreamRedactor, redact_secret
from agentls.text import valid_unicode
from agentls.tools.apply_patch import open_documents
from agentls.tools.background import BackgroundProcess
from agentls.tools.base import StopRequest, Tool, ToolContext, ToolResult
from agentls.tools.files import DiskFiles, Files
from agentls.tools.patch_diff import preview_diff
from agentls.tools.processes import ProcessScope
from agentls.tools.registry import ToolBox, ToolCall, parse_call
from agentls.tools.shell import Shell
from agentls.tools.workspace import Workspace

log = logging.getLogger(__name__)

ABORTED_OUTPUT = "aborted by user"
STOPPED_OUTPUT = "Cancelled by the user before it finished."
WEB_SEARCH_TOOL: dict[str, Any] = {"type": "web_search"}
# The compaction threshold when ``autoCompact`` is off and the model says the
# conversation no longer fits: compact to below this share of the window.
_OVERFLOW_SHARE = 0.85


def user_message(text: str) -> Item:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def answer(call: ToolCall, output: str, *, failed: bool = False) -> Item:
    """The output item that answers ``call`` (of whatever kind it is)."""
    return call_output(call.kind, call.call_id, output, failed=failed)


@dataclass(slots=True)
class CompactionJob:
    """An ``agent/compact``: run by the owner task between turns."""

    focus: str | None
    done: anyio.Event = field(default_factory=anyio.Event)
    outcome: tuple[int, int, str] | None = None
    error: Exception | None = None

    async def result(self) -> tuple[int, int, str]:
        """Tokens before and after, and the mode ("summary" or "trim")."""
        await self.done.wait()
        if self.error is not None:
            raise self.error
        assert self.outcome is not None
        return self.outcome


@dataclass(slots=True)
class _RunningCall:
    """A tool call in progress, for ``cancel_tool``."""

    turn_id: int
    stoppable: bool
    stop: StopRequest = field(default_factory=StopRequest)
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    # The tool itself runs (it was not refused or denied first).
    running: bool = False
    done: anyio.Event = field(default_factory=anyio.Event)


@dataclass(slots=True)
class _Step:
    """A model response whose tool calls are being run; committed as one piece."""

    response_items: list[Item]
    calls: list[ToolCall]
    outputs: list[Item] = field(default_factory=list)
    running: ToolCall | None = None


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
        self._allowances = Allowances()
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
        self._calls: dict[str, _RunningCall] = {}
        # The session's environment and project instructions (read when it
        # starts and again after each compaction).
        self._environment = system_prompt.Environment.here(self.workspace.root)
        self.project = project if project is not None else project_docs.load(self.workspace.root)
        self._instructions: tuple[system_prompt.Policy, str] | None = None
        # What confines commands, as last learnt (``refresh_policy``).
        self._sandbox = (False, True, False)
        self.meter = ContextMeter()
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
    def context_window(self) -> int:
        return self.config.context_window or model_info(self._model.config.model).context_window

    async def refresh_policy(self) -> None:
        """Learn what confines commands now (the sandbox may have failed to
        start), for the next request's instructions."""
        sandbox = await self.shell.state()
        self._sandbox = (sandbox.active, sandbox.writable, self.config.sandbox.network)

    def instructions(self) -> str:
        """The system instructions for the policy in force now."""
        sandboxed, writable, network = self._sandbox
        policy = system_prompt.Policy(self.settings.approval, sandboxed, writable, network)
        cached = self._instructions
        if cached is None or cached[0] != policy:
            text = system_prompt.build(self._environment, policy, self.project)
            cached = self._instructions = (policy, text)
        return cached[1]

    def tool_specs(self) -> list[dict[str, Any]]:
        specs = self._tools.specs
        return [*specs, WEB_SEARCH_TOOL] if self.settings.web_search else specs

    def fixed_tokens(self) -> int:
        """The estimate of what every request carries besides the conversation."""
        return fixed_tokens(self.instructions(), self.tool_specs())

    def context_size(self) -> ContextSize:
        """How full the window is: the estimated size of the next request."""
        tokens = self.meter.estimate(self._history.items(), self.fixed_tokens())
        return ContextSize(tokens, self.context_window)

    def request(self, *, tool_choice: str = "auto") -> ModelRequest:
        """The next model request: the whole conversation and the settings in force."""
        return ModelRequest(
            input=self._history.items(),
            tools=self.tool_specs(),
            instructions=self.instructions(),
            effort=self.settings.effort,
            fast_mode=self.settings.fast_mode,
            background=self.background,
            cache_key=self.session_id,
            tool_choice=tool_choice,
        )

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
    ) -> tuple[int, int, str, Usage]:
        """Compact the conversation (on the owner task, between steps)."""
        before = self.context_size().tokens
        if not len(self._history):
            return before, before, "trim", Usage()
        self._emit(CompactionStarted(turn_id=turn_id, reason=reason, before_tokens=before))
        window = self.context_window
        share = self.config.auto_compact if self.config.auto_compact > 0 else _OVERFLOW_SHARE
        budget = compaction.Budget(window, int(window * share), self.meter.offset)
        summariser = compaction.Summariser(self._model, self.request(), _RetryOnlySink(sink))
        result = await compaction.compact(
            self._history.items(),
            fixed=self.fixed_tokens(),
            budget=budget,
            summarise=summariser,
            focus=focus,
        )
        self._history.replace(result.items)
        self.meter.reset()
        self.project = project_docs.load(self.workspace.root)
        self._instructions = None
        after = self.context_size().tokens
        log.info("compacted the conversation (%s): %d -> %d tokens", result.mode, before, after)
        self._emit(
            CompactionFinished(
                turn_id=turn_id,
                before_tokens=before,
                after_tokens=after,
                mode=result.mode,
                summary=result.summary,
            )
        )
        return before, after, result.mode, result.usage

    async def cancel_tool(self, call_id: str) -> tuple[bool, int]:
        """Stop one running tool call (``agent/cancelTool``): its processes are
        killed, the model gets what it printed so far, marked as cancelled by
        the user, and the turn goes on. Returns (whether a running call was
        stopped, how many processes were killed)."""
        call = self._calls.get(call_id)
        if call is None or call.done.is_set():
            return False, 0
        if call.stoppable and call.running:
            call.stop.requested.set()
        else:
            call.scope.cancel()
        await call.done.wait()
        return True, call.stop.killed

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

    def _admit_steer(self, turn: Turn, text: str) -> None:
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
        run = _TurnRun(self, turn)
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
        run: _TurnRun,
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


class _TurnRun:
    """The working state of one running turn."""

    def __init__(self, agent: Agent, turn: Turn) -> None:
        self.agent = agent
        self.turn = turn
        self.usage = Usage()
        self.processes = ProcessScope()
        self.step: _Step | None = None
        # The guard against a model that loops: its last call and how often in a row.
        self._last_call: str | None = None
        self._repeats = 0
        # The conversation's length right after this turn last compacted it:
        # nothing added since means compacting again cannot help.
        self._compacted_at: int | None = None

    # StreamSink: what the model streams is shown, never kept.
    def text_delta(self, text: str) -> None:
        self.agent.events.send_text(TextDelta, self.turn.id, text)

    def reasoning_delta(self, text: str) -> None:
        self.agent.events.send_text(ReasoningDelta, self.turn.id, text)

    def call_progress(self, tool: str, chars: int) -> None:
        self.agent._emit(
            ToolPreparing(turn_id=self.turn.id, tool=tool, title=_preparing(tool), chars=chars)
        )

    def hosted_call(self, item: Item) -> None:
        """A web search the model server ran: shown like a tool call, with its sources."""
        agent, turn_id = self.agent, self.turn.id
        raw = item.get("action")
        action: dict[str, Any] = raw if isinstance(raw, dict) else {}
        query = str(action.get("query") or action.get("url") or action.get("pattern") or "")
        call_id = str(item.get("id") or item.get("call_id") or "web_search")
        sources = _sources(action)
        title = f"Searched the web: {query}" if query else "Searched the web"
        agent._emit(
            ToolStarted(
                turn_id=turn_id,
                call_id=call_id,
                tool="web_search",
                title=title,
                arguments={"query": query} if query else {},
            )
        )
        if sources:
            lines = [s["url"] + (f" — {s['title']}" if s.get("title") else "") for s in sources]
            agent.events.send_text(ToolOutput, turn_id, "\n".join(lines) + "\n", call_id)
        status: ToolStatus = (
            "failed" if item.get("status") in ("failed", "incomplete") else "completed"
        )
        agent._emit(ToolFinished(turn_id=turn_id, call_id=call_id, status=status, sources=sources))

    def retrying(self, retry: Retry) -> None:
        log.info(
            "turn %s: %s; retrying in %.1f s (attempt %d of %d)",
            self.turn.id,
            retry.reason,
            retry.delay,
            retry.attempt + 1,
            retry.max_attempts,
        )
        self.agent._emit(
            ModelRetry(
                turn_id=self.turn.id,
                attempt=retry.attempt,
                max_attempts=retry.max_attempts,
                delay=retry.delay,
                reason=retry.reason,
                failure=retry.kind,
                retry_at=time.time() + retry.delay,
            )
        )

    async def execute(self) -> str:
        agent, turn, history = self.agent, self.turn, self.agent._history
        history.commit([user_message(turn.prompt)])
        requests = 0
        while True:
            self._apply_steers()
            await self._fit_context()
            requests += 1
            if requests > agent.config.max_requests_per_turn:
                raise TurnStopped(
                    f"Stopped: this turn reached {agent.config.max_requests_per_turn} model "
                    "requests (the limit, maxRequestsPerTurn). Ask again to go on from here."
                )
            response, kept = await self._respond()
            self._show_citations(response)
            calls = [
                agent._tools.route(parse_call(item), agent.workspace)
                for item in response.client_calls
            ]
            if not calls:
                history.commit(kept)
                if turn.steers:
                    continue  # the model answered before it saw them: let it see them
                if response.refusal:
                    agent._emit(Refusal(turn_id=turn.id, text=response.refusal))
                return response.text
            self.step = _Step(kept, calls)
            if agent._recorder is not None:
                agent._recorder.step_started(self.step.response_items)
            stopped = self._loop_guard(calls)
            for index, call in enumerate(calls):
                if stopped is not None and index >= stopped[0]:
                    self.step.outputs.append(answer(call, stopped[1], failed=True))
                else:
                    await self._run_tool(call)
            history.commit([*self.step.response_items, *self.step.outputs])
            self.step = None
            if stopped is not None:
                raise TurnStopped(stopped[1])

    async def _respond(self) -> tuple[ModelResponse, list[Item]]:
        """One model request, and the items of its response the conversation
        keeps: compacted and sent once more if the model says the
        conversation does not fit its window."""
        agent = self.agent
        compacted = False
        while True:
            await agent.refresh_policy()
            request = agent.request()
            fixed = agent.fixed_tokens()
            try:
                response = await agent._model.stream(request, self)
            except ModelError as exc:
                if exc.kind != "context_length":
                    raise
                if compacted:
                    raise ModelError(
                        "context_length",
                        f"{exc} — the conversation still does not fit the model's context "
                        "window after compacting it; start a new session",
                    ) from None
                compacted = True
                await self._compact("overflow")
                continue
            self.usage = self.usage + response.usage
            agent.meter.reported(response.usage.input_tokens, request.input, fixed)
            kept = [item for item in map(for_history, response.items) if item is not None]
            tokens = agent.meter.estimate(agent._history.items(), fixed, kept)
            context = ContextSize(tokens, agent.context_window)
            agent._emit(UsageUpdated(turn_id=self.turn.id, usage=self.usage, context=context))
            return response, kept

    async def _fit_context(self) -> None:
        """Compact first if the next request would cross the threshold."""
        agent = self.agent
        share = agent.config.auto_compact
        if share <= 0 or self._compacted_at == len(agent._history):
            return
        if agent.context_size().tokens > agent.context_window * share:
            await self._compact("auto")

    async def _compact(self, reason: str) -> None:
        *_, usage = await self.agent.run_compaction(reason, self.turn.id, self)
        self.usage = self.usage + usage
        self._compacted_at = len(self.agent._history)

    def _loop_guard(self, calls: list[ToolCall]) -> tuple[int, str] | None:
        """The first call that repeats the model's last call once too often,
        and the output that says why it was not run (None: all may run)."""
        limit = self.agent.config.max_repeated_calls
        for index, call in enumerate(calls):
            signature = json.dumps([call.kind, call.name, call.arguments], sort_keys=True)
            self._repeats = self._repeats + 1 if signature == self._last_call else 1
            self._last_call = signature
            if limit > 0 and self._repeats >= limit:
                return index, (
                    f"Stopped: the model called {call.name} with the same arguments "
                    f"{self._repeats} times in a row, so the turn was stopped before it loops "
                    "on. Say how to go on."
                )
        return None

    def _show_citations(self, response: ModelResponse) -> None:
        citations = [
            Citation(
                url=str(note["url"]),
                title=note.get("title"),
                start_index=note.get("start_index"),
                end_index=note.get("end_index"),
            )
            for item in response.items
            if item.get("type") == "message"
            for part in item.get("content") or ()
            if isinstance(part, dict)
            for note in part.get("annotations") or ()
            if isinstance(note, dict) and note.get("type") == "url_citation" and note.get("url")
        ]
        if citations:
            self.agent._emit(Citations(turn_id=self.turn.id, citations=citations))

    def _apply_steers(self) -> None:
        turn = self.turn
        if not turn.steers:
            return
        texts = list(turn.steers)
        turn.steers.clear()
        self.agent._history.commit(user_message(text) for text in texts)
        self.agent.waiting_changed()
        for text in texts:
            self.agent._emit(SteerApplied(turn_id=turn.id, text=text))

    def keep_pending_steers(self) -> None:
        """A turn that ends early still keeps what the user said: the next turn sees it."""
        if self.turn.steers:
            self.agent._history.commit(user_message(text) for text in self.turn.steers)
            self.turn.steers.clear()
            self.agent.waiting_changed()

    async def _run_tool(self, call: ToolCall) -> None:
        agent, turn, step = self.agent, self.turn, self.step
        assert step is not None
        step.running = call
        agent._emit(
            ToolStarted(
                turn_id=turn.id,
                call_id=call.call_id,
                tool=call.name,
                title=agent._tools.title(call, agent.workspace),
                arguments=call.arguments,
            )
        )

        secret = agent.config.model.api_key
        redactor = StreamRedactor(secret)

        def emit_output(text: str) -> None:
            # The key never reaches the editor, whatever a command prints.
            text = redactor.feed(text)
            if text:
                agent.events.send_text(ToolOutput, turn.id, text, call.call_id)

        def emit_plan(explanation: str | None, steps: list[dict[str, str]]) -> None:
            plan = [PlanStep(step=s["step"], status=s["status"]) for s in steps]  # type: ignore[arg-type]
            agent._emit(PlanUpdated(turn_id=turn.id, explanation=explanation, plan=plan))

        tool = agent._tools.get(call.name)
        running = _RunningCall(turn.id, stoppable=bool(tool is not None and tool.stoppable))
        agent._calls[call.call_id] = running
        context = ToolContext(
            workspace=agent.workspace,
            config=agent.config.tools,
            processes=self.processes,
            emit_output=emit_output,
            emit_plan=emit_plan,
            shell=agent.shell,
            stop=running.stop,
            turn_id=turn.id,
            files=agent.files,
        )
        result = ToolResult(output=STOPPED_OUTPUT, status="cancelled")
        try:
            with running.scope:
                denial = await self._approve(call, tool)
                if denial is not None:
                    result = ToolResult(output=denial, status="failed")
                else:
                    running.running = True
                    result = await agent._tools.run(call, context)
        finally:
            agent._calls.pop(call.call_id, None)
            running.done.set()
        rest = redactor.flush()
        if rest:
            agent.events.send_text(ToolOutput, turn.id, rest, call.call_id)
        output = answer(
            call, redact_secret(result.output, secret), failed=result.status == "failed"
        )
        step.outputs.append(output)
        step.running = None
        if agent._recorder is not None:
            agent._recorder.tool_answered(output)
        agent._emit(
            ToolFinished(
                turn_id=turn.id,
                call_id=call.call_id,
                status=result.status,
                exit_code=result.exit_code,
                diff=result.diff,
            )
        )

    async def _approve(self, call: ToolCall, tool: Tool | None) -> str | None:
        """Ask the user if the policy says so; the output the model sees if
        the call may not run."""
        agent = self.agent
        if tool is None or call.problem:
            return None  # it fails on its own, changing nothing
        policy = agent.settings.approval
        sandbox = await agent.shell.state()
        if policy == "never" and escalates(call) and sandbox.active:
            return refused_escalation(call)
        # Review mode: every patch waits for the user, whatever the policy.
        review = call.name == "apply_patch" and agent.settings.review
        if not review and not needs_approval(
            policy,
            call,
            read_only=tool.read_only,
            sandboxed=tool.sandboxed(call.arguments, sandbox),
            allowed=agent._allowances.covers(call, agent.workspace),
        ):
            return None
        if agent._approver is None:
            return denied_output(call, "approval is required but no one can be asked")
        diff = None
        if call.name == "apply_patch":
            patch = str(call.arguments.get("patch", ""))
            documents = open_documents(patch, agent.workspace, agent.files)
            diff = await anyio.to_thread.run_sync(preview_diff, patch, agent.workspace, documents)
        title = agent._tools.title(call, agent.workspace)
        request = request_for(self.turn.id, call, title, agent.workspace, diff, review=review)
        try:
            answer = await agent._approver(request)
        except Exception as exc:  # the editor went away or answered nonsense: deny, safely
            log.warning("approval request failed: %s", exc)
            return denied_output(call, f"the editor could not be asked ({exc})")
        if answer.decision == "deny":
            return rejected_output(answer.reason) if review else denied_output(call, answer.reason)
        if answer.decision == "allowSession":
            agent._allowances.remember(call, agent.workspace)
        return None

    async def abandon(self) -> Receipt:
        """After a cancel: kill what is left, answer every open call, commit, report."""
        report = await self.processes.kill()
        # Background processes the turn started die with it.
        report += await self.agent.shell.background.stop_turn(self.turn.id)
        killed = self.processes.cancel_report.killed + report.killed
        surviving = self.processes.cancel_report.surviving + report.surviving
        aborted: list[AbortedToolCall] = []
        step = self.step
        if step is not None:
            answered = {item_call_id(item) for item in step.outputs}
            for call in step.calls:
                if call.call_id in answered:
                    continue
                step.outputs.append(answer(call, ABORTED_OUTPUT, failed=True))
                aborted.append(AbortedToolCall(call.call_id, call.name))
                if call is step.running:
                    self.agent._emit(
                        ToolFinished(turn_id=self.turn.id, call_id=call.call_id, status="cancelled")
                    )
            self.agent._history.commit([*step.response_items, *step.outputs])
            self.step = None
        self.keep_pending_steers()
        return Receipt(
            turn_id=self.turn.id,
            aborted_tool_calls=tuple(aborted),
            killed_processes=killed,
            surviving_processes=surviving,
        )


class _RetryOnlySink(QuietSink):
    """What a compaction's summary request shows: only that it is retried."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def retrying(self, retry: Retry) -> None:
        self._inner.retrying(retry)


def _preparing(tool: str) -> str:
    """What the user reads while the model writes a call of ``tool``."""
    if tool in ("apply_patch", "apply_patch_call"):
        return "Writing a patch…"
    if tool in ("exec_command", "shell_call", "local_shell_call"):
        return "Writing a command…"
    if tool == "web_search_call":
        return "Searching the web…"
    if tool == "update_plan":
        return "Updating the plan…"
    return f"Preparing {tool}…"


def _sources(action: dict[str, Any]) -> list[dict[str, str]]:
    """The pages a web search used (``action.sources`` of ``type: "url"``)."""
    found: list[dict[str, str]] = []
    for source in action.get("sources") or ():
        if isinstance(source, dict) and isinstance(source.get("url"), str):
            entry = {"url": source["url"]}
            if isinstance(source.get("title"), str):
                entry["title"] = source["title"]
            found.append(entry)
    if not found and isinstance(action.get("url"), str):
        found.append({"url": action["url"]})
    return found
