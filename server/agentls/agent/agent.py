"""The agent: one conversation, driven by a single owner task.

``prompt`` accepts a turn at once; the owner task runs turns one at a time,
in the order they were accepted. A turn streams a model response, runs the
tools it called one after another, and loops until the model answers. Only
whole steps are committed to the history (a model response together with the
outputs of its tool calls), so a fork or a cancellation never sees half of one.
"""

from __future__ import annotations

import itertools
import logging
import uuid
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.abc

from agentls.agent import snapshot as snapshots
from agentls.agent.approval import (
    Allowances,
    Approver,
    denied_output,
    needs_approval,
    request_for,
)
from agentls.agent.errors import AgentStopped, InvalidRequest, SteerQueueFull, TurnCancelled
from agentls.agent.errors import TurnFailed as TurnFailedError
from agentls.agent.events import (
    AgentEvent,
    ModelRetry,
    PlanStep,
    PlanUpdated,
    ReasoningDelta,
    SteerAdmitted,
    SteerApplied,
    TextDelta,
    ToolFinished,
    ToolOutput,
    ToolStarted,
    TurnFinished,
    TurnStarted,
    UsageUpdated,
)
from agentls.agent.history import History
from agentls.agent.instructions import instructions_for
from agentls.agent.interrupt import InterruptHandle
from agentls.agent.receipt import AbortedToolCall, Receipt
from agentls.agent.recorder import Recorder
from agentls.agent.settings import SettingChange, Settings
from agentls.agent.stream import EventStream
from agentls.agent.turn import Turn, TurnOutcome, TurnState
from agentls.config import AgentConfig
from agentls.domain import TurnStatus
from agentls.model.client import ResponsesClient
from agentls.model.errors import ModelError
from agentls.model.types import Item, ModelRequest, Usage
from agentls.text import valid_unicode
from agentls.tools.base import ToolContext, ToolResult
from agentls.tools.processes import ProcessScope
from agentls.tools.registry import ToolBox, ToolCall, parse_call
from agentls.tools.workspace import Workspace

log = logging.getLogger(__name__)

ABORTED_OUTPUT = "aborted by user"


def user_message(text: str) -> Item:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def call_output(call_id: str, output: str) -> Item:
    return {"type": "function_call_output", "call_id": call_id, "output": output}


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
        recorder: Recorder | None = None,
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
        self._history = history or History()
        self._tools = tools or ToolBox.default()
        self._instructions = instructions_for(self.workspace.root)
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
        return self._current is not None or bool(self._queue)

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
        return self._sibling(self._history.fork(), background)

    def spawn(self, *, background: bool = False) -> Agent:
        """A clean sibling: no history; same configuration, workspace and settings."""
        self._check_running()
        return self._sibling(History(), background)

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
            self._wakeup.set()
        await self._stopped.wait()

    # --- internals ------------------------------------------------------------

    def _check_running(self) -> None:
        if self._stopping:
            raise AgentStopped()

    def _sibling(self, history: History, background: bool) -> Agent:
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
            recorder=recorder,
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
                while not self._queue:
                    if self._stopping:
                        return
                    self._wakeup = anyio.Event()
                    await self._wakeup.wait()
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
            self.events.close()
            if self._recorder is not None:
                self._recorder.close()
            self._stopped.set()

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
        self._emit(TurnStarted(turn_id=turn.id, prompt=turn.prompt))
        run = _TurnRun(self, turn)
        final: str | None = None
        error: str | None = None
        with anyio.CancelScope() as scope:
            remove = turn.token.on_cancel(scope.cancel)
            try:
                final = await run.execute()
            except ModelError as exc:
                error = str(exc)
                log.warning("turn %s failed: %s", turn.id, error)
            except Exception as exc:
                log.exception("turn %s failed", turn.id)
                error = f"internal error: {type(exc).__name__}: {exc}"
            finally:
                remove()
        if scope.cancelled_caught and final is None and error is None:
            with anyio.CancelScope(shield=True):
                receipt = await run.abandon()
            self._record_end(turn, "cancelled")
            turn.resolve(error=TurnCancelled(receipt))
            self._emit(
                TurnFinished(turn_id=turn.id, status="cancelled", usage=run.usage, receipt=receipt)
            )
            turn.end("cancelled", receipt)
        elif error is not None:
            run.keep_pending_steers()
            self._record_end(turn, "failed")
            turn.resolve(error=TurnFailedError(error))
            self._emit(TurnFinished(turn_id=turn.id, status="failed", error=error, usage=run.usage))
            turn.end("failed")
        else:
            assert final is not None
            outcome = TurnOutcome(turn.id, final, run.usage)
            self._record_end(turn, "completed")
            turn.resolve(outcome)
            self._emit(
                TurnFinished(
                    turn_id=turn.id, status="completed", final_message=final, usage=run.usage
                )
            )
            turn.end("completed")
        self.interrupt.rearm()

    def _record_end(self, turn: Turn, status: TurnStatus) -> None:
        if self._recorder is not None:
            self._recorder.turn_finished(turn.id, status)


class _TurnRun:
    """The working state of one running turn."""

    def __init__(self, agent: Agent, turn: Turn) -> None:
        self.agent = agent
        self.turn = turn
        self.usage = Usage()
        self.processes = ProcessScope()
        self.step: _Step | None = None

    # StreamSink: what the model streams is shown, never kept.
    def text_delta(self, text: str) -> None:
        self.agent.events.send_text(TextDelta, self.turn.id, text)

    def reasoning_delta(self, text: str) -> None:
        self.agent.events.send_text(ReasoningDelta, self.turn.id, text)

    def retrying(self, attempt: int, max_attempts: int, delay: float, reason: str) -> None:
        log.info(
            "turn %s: %s; retrying in %.1f s (attempt %d of %d)",
            self.turn.id,
            reason,
            delay,
            attempt + 1,
            max_attempts,
        )
        self.agent._emit(
            ModelRetry(
                turn_id=self.turn.id,
                attempt=attempt,
                max_attempts=max_attempts,
                delay=delay,
                reason=reason,
            )
        )

    async def execute(self) -> str:
        agent, turn, history = self.agent, self.turn, self.agent._history
        history.commit([user_message(turn.prompt)])
        while True:
            self._apply_steers()
            request = ModelRequest(
                input=history.items(),
                tools=agent._tools.specs,
                instructions=agent._instructions,
                effort=agent.settings.effort,
                fast_mode=agent.settings.fast_mode,
                background=agent.background,
            )
            response = await agent._model.stream(request, self)
            self.usage = self.usage + response.usage
            agent._emit(UsageUpdated(turn_id=turn.id, usage=self.usage))
            calls = [parse_call(item) for item in response.function_calls]
            if not calls:
                history.commit(response.items)
                if turn.steers:
                    continue  # the model answered before it saw them: let it see them
                return response.text
            self.step = _Step(list(response.items), calls)
            if agent._recorder is not None:
                agent._recorder.step_started(self.step.response_items)
            for call in calls:
                await self._run_tool(call)
            history.commit([*self.step.response_items, *self.step.outputs])
            self.step = None

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

        def emit_output(text: str) -> None:
            agent.events.send_text(ToolOutput, turn.id, text, call.call_id)

        def emit_plan(explanation: str | None, steps: list[dict[str, str]]) -> None:
            plan = [PlanStep(step=s["step"], status=s["status"]) for s in steps]  # type: ignore[arg-type]
            agent._emit(PlanUpdated(turn_id=turn.id, explanation=explanation, plan=plan))

        context = ToolContext(
            workspace=agent.workspace,
            config=agent.config.tools,
            processes=self.processes,
            emit_output=emit_output,
            emit_plan=emit_plan,
        )
        denial = await self._approve(call)
        if denial is not None:
            result = ToolResult(output=denial, status="failed")
        else:
            result = await agent._tools.run(call, context)
        output = call_output(call.call_id, result.output)
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
            )
        )

    async def _approve(self, call: ToolCall) -> str | None:
        """Ask the user if the policy says so; the output the model sees if denied."""
        agent = self.agent
        if not needs_approval(agent.settings.approval, call, agent._allowances):
            return None
        if agent._approver is None:
            return denied_output(call, "approval is required but no one can be asked")
        request = request_for(self.turn.id, call, agent._tools.title(call, agent.workspace))
        try:
            answer = await agent._approver(request)
        except Exception as exc:  # the editor went away or answered nonsense: deny, safely
            log.warning("approval request failed: %s", exc)
            return denied_output(call, f"the editor could not be asked ({exc})")
        if answer.decision == "deny":
            return denied_output(call, answer.reason)
        if answer.decision == "allowSession":
            agent._allowances.remember(call)
        return None

    async def abandon(self) -> Receipt:
        """After a cancel: kill what is left, answer every open call, commit, report."""
        report = await self.processes.kill()
        killed = self.processes.cancel_report.killed + report.killed
        surviving = self.processes.cancel_report.surviving + report.surviving
        aborted: list[AbortedToolCall] = []
        step = self.step
        if step is not None:
            answered = {item["call_id"] for item in step.outputs}
            for call in step.calls:
                if call.call_id in answered:
                    continue
                step.outputs.append(call_output(call.call_id, ABORTED_OUTPUT))
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
