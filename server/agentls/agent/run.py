"""The turn loop: one running turn, from the user's prompt to the model's
answer — model request, tool calls, again — committing only whole steps (a
model response together with the outputs of its tool calls), so a fork or a
cancellation never sees half of one."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field

from agentls.agent.errors import TurnStopped
from agentls.agent.events import Refusal, SteerApplied, ToolFinished, UsageUpdated
from agentls.agent.execution import ToolRunner
from agentls.agent.fitting import Compactor
from agentls.agent.history import History
from agentls.agent.items import ABORTED_OUTPUT, answer, user_message
from agentls.agent.receipt import AbortedToolCall, Receipt
from agentls.agent.recorder import Recorder
from agentls.agent.requests import Requests
from agentls.agent.sink import TurnSink
from agentls.agent.stream import EventStream
from agentls.agent.turn import Turn
from agentls.config import AgentConfig
from agentls.model.client import ResponsesClient
from agentls.model.errors import ModelError
from agentls.model.items import call_id as item_call_id
from agentls.model.items import for_history
from agentls.model.types import ContextSize, Item, ModelResponse, Usage
from agentls.tools.processes import ProcessScope
from agentls.tools.registry import ToolBox, ToolCall, parse_call
from agentls.tools.shell import Shell
from agentls.tools.workspace import Workspace


@dataclass(frozen=True, slots=True)
class Conversation:
    """What a running turn works with: the parts of one agent."""

    config: AgentConfig
    model: ResponsesClient
    history: History
    tools: ToolBox
    workspace: Workspace
    shell: Shell
    events: EventStream
    requests: Requests
    compactor: Compactor
    runner: ToolRunner
    recorder: Recorder | None
    # Tell the recorder what waits (queued prompts, steers not yet sent).
    waiting_changed: Callable[[], None]


@dataclass(slots=True)
class _Step:
    """A model response whose tool calls are being run; committed as one piece."""

    response_items: list[Item]
    calls: list[ToolCall]
    outputs: list[Item] = field(default_factory=list)
    running: ToolCall | None = None


class TurnRun:
    """The working state of one running turn."""

    def __init__(self, conversation: Conversation, turn: Turn) -> None:
        self.conversation = conversation
        self.turn = turn
        self.sink = TurnSink(conversation.events, turn.id)
        self.usage = Usage()
        self.processes = ProcessScope()
        self.step: _Step | None = None
        # The guard against a model that loops: its last call and how often in a row.
        self._last_call: str | None = None
        self._repeats = 0
        # The conversation's length right after this turn last compacted it:
        # nothing added since means compacting again cannot help.
        self._compacted_at: int | None = None

    async def execute(self) -> str:
        conv, turn, history = self.conversation, self.turn, self.conversation.history
        history.commit([user_message(turn.prompt)])
        requests = 0
        while True:
            self._apply_steers()
            await self._fit_context()
            requests += 1
            if requests > conv.config.max_requests_per_turn:
                raise TurnStopped(
                    f"Stopped: this turn reached {conv.config.max_requests_per_turn} model "
                    "requests (the limit, maxRequestsPerTurn). Ask again to go on from here."
                )
            response, kept = await self._respond()
            self.sink.citations(response)
            calls = [
                conv.tools.route(parse_call(item), conv.workspace) for item in response.client_calls
            ]
            if not calls:
                history.commit(kept)
                if turn.steers:
                    continue  # the model answered before it saw them: let it see them
                if response.refusal:
                    conv.events.send(Refusal(turn_id=turn.id, text=response.refusal))
                return response.text
            self.step = _Step(kept, calls)
            if conv.recorder is not None:
                conv.recorder.step_started(self.step.response_items)
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
        conv = self.conversation
        requests = conv.requests
        compacted = False
        while True:
            await requests.refresh_policy()
            request = requests.request()
            fixed = requests.fixed_tokens()
            try:
                response = await conv.model.stream(request, self.sink)
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
            requests.meter.reported(response.usage.input_tokens, request.input, fixed)
            kept = [item for item in map(for_history, response.items) if item is not None]
            tokens = requests.meter.estimate(conv.history.items(), fixed, kept)
            context = ContextSize(tokens, requests.context_window)
            conv.events.send(UsageUpdated(turn_id=self.turn.id, usage=self.usage, context=context))
            return response, kept

    async def _fit_context(self) -> None:
        """Compact first if the next request would cross the threshold."""
        if self._compacted_at == len(self.conversation.history):
            return
        if self.conversation.compactor.due():
            await self._compact("auto")

    async def _compact(self, reason: str) -> None:
        *_, usage = await self.conversation.compactor.compact(reason, self.turn.id, self.sink)
        self.usage = self.usage + usage
        self._compacted_at = len(self.conversation.history)

    def _loop_guard(self, calls: list[ToolCall]) -> tuple[int, str] | None:
        """The first call that repeats the model's last call once too often,
        and the output that says why it was not run (None: all may run)."""
        limit = self.conversation.config.max_repeated_calls
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

    def _apply_steers(self) -> None:
        turn = self.turn
        if not turn.steers:
            return
        texts = list(turn.steers)
        turn.steers.clear()
        self.conversation.history.commit(user_message(text) for text in texts)
        self.conversation.waiting_changed()
        for text in texts:
            self.conversation.events.send(SteerApplied(turn_id=turn.id, text=text))

    def keep_pending_steers(self) -> None:
        """A turn that ends early still keeps what the user said: the next turn sees it."""
        if self.turn.steers:
            self.conversation.history.commit(user_message(text) for text in self.turn.steers)
            self.turn.steers.clear()
            self.conversation.waiting_changed()

    async def _run_tool(self, call: ToolCall) -> None:
        conv, step = self.conversation, self.step
        assert step is not None
        step.running = call
        output, result = await conv.runner.run(call, self.turn.id, self.processes)
        step.outputs.append(output)
        step.running = None
        if conv.recorder is not None:
            conv.recorder.tool_answered(output)
        conv.events.send(
            ToolFinished(
                turn_id=self.turn.id,
                call_id=call.call_id,
                status=result.status,
                exit_code=result.exit_code,
                diff=result.diff,
            )
        )

    async def abandon(self) -> Receipt:
        """After a cancel: kill what is left, answer every open call, commit, report."""
        conv = self.conversation
        report = await self.processes.kill()
        # Background processes the turn started die with it.
        report += await conv.shell.background.stop_turn(self.turn.id)
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
                    conv.events.send(
                        ToolFinished(turn_id=self.turn.id, call_id=call.call_id, status="cancelled")
                    )
            conv.history.commit([*step.response_items, *step.outputs])
            self.step = None
        self.keep_pending_steers()
        return Receipt(
            turn_id=self.turn.id,
            aborted_tool_calls=tuple(aborted),
            killed_processes=killed,
            surviving_processes=surviving,
        )
