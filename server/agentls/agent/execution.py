"""Tool execution: run one tool call of a turn — through the approval gate,
its output streamed (the API key redacted), stoppable on its own
(``agent/cancelTool``) — and give the output item that answers it."""

from __future__ import annotations

from dataclasses import dataclass, field

import anyio

from agentls.agent.events import PlanStep, PlanUpdated, ToolOutput, ToolStarted
from agentls.agent.gating import ApprovalGate
from agentls.agent.items import STOPPED_OUTPUT, answer
from agentls.agent.stream import EventStream
from agentls.config import AgentConfig
from agentls.model.types import Item
from agentls.redaction import StreamRedactor, redact_secret
from agentls.tools.base import StopRequest, ToolContext, ToolResult
from agentls.tools.files import Files
from agentls.tools.processes import ProcessScope
from agentls.tools.registry import ToolBox, ToolCall
from agentls.tools.shell import Shell
from agentls.tools.workspace import Workspace


@dataclass(slots=True)
class RunningCall:
    """A tool call in progress, for ``cancel``."""

    turn_id: int
    stoppable: bool
    stop: StopRequest = field(default_factory=StopRequest)
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    # The tool itself runs (it was not refused or denied first).
    running: bool = False
    done: anyio.Event = field(default_factory=anyio.Event)


class ToolRunner:
    """Runs one agent's tool calls, one at a time."""

    def __init__(
        self,
        tools: ToolBox,
        config: AgentConfig,
        workspace: Workspace,
        shell: Shell,
        files: Files,
        events: EventStream,
        gate: ApprovalGate,
    ) -> None:
        self._tools = tools
        self._config = config
        self._workspace = workspace
        self._shell = shell
        self._files = files
        self._events = events
        self._gate = gate
        self._calls: dict[str, RunningCall] = {}

    async def run(
        self, call: ToolCall, turn_id: int, processes: ProcessScope
    ) -> tuple[Item, ToolResult]:
        """Run ``call`` (after asking, if the policy says so): the output item
        that answers it, and the tool's result."""
        events, tools = self._events, self._tools
        events.send(
            ToolStarted(
                turn_id=turn_id,
                call_id=call.call_id,
                tool=call.name,
                title=tools.title(call, self._workspace),
                arguments=call.arguments,
            )
        )

        secret = self._config.model.api_key
        redactor = StreamRedactor(secret)

        def emit_output(text: str) -> None:
            # The key never reaches the editor, whatever a command prints.
            text = redactor.feed(text)
            if text:
                events.send_text(ToolOutput, turn_id, text, call.call_id)

        def emit_plan(explanation: str | None, steps: list[dict[str, str]]) -> None:
            plan = [PlanStep(step=s["step"], status=s["status"]) for s in steps]  # type: ignore[arg-type]
            events.send(PlanUpdated(turn_id=turn_id, explanation=explanation, plan=plan))

        tool = tools.get(call.name)
        running = RunningCall(turn_id, stoppable=bool(tool is not None and tool.stoppable))
        self._calls[call.call_id] = running
        context = ToolContext(
            workspace=self._workspace,
            config=self._config.tools,
            processes=processes,
            emit_output=emit_output,
            emit_plan=emit_plan,
            shell=self._shell,
            stop=running.stop,
            turn_id=turn_id,
            files=self._files,
        )
        result = ToolResult(output=STOPPED_OUTPUT, status="cancelled")
        try:
            with running.scope:
                denial = await self._gate.check(call, tool, turn_id)
                if denial is not None:
                    result = ToolResult(output=denial, status="failed")
                else:
                    running.running = True
                    result = await tools.run(call, context)
        finally:
            self._calls.pop(call.call_id, None)
            running.done.set()
        rest = redactor.flush()
        if rest:
            events.send_text(ToolOutput, turn_id, rest, call.call_id)
        output = answer(
            call, redact_secret(result.output, secret), failed=result.status == "failed"
        )
        return output, result

    async def cancel(self, call_id: str) -> tuple[bool, int]:
        """Stop one running tool call: its processes are killed, the model
        gets what it printed so far, marked as cancelled by the user, and the
        turn goes on. Returns (whether a running call was stopped, how many
        processes were killed)."""
        call = self._calls.get(call_id)
        if call is None or call.done.is_set():
            return False, 0
        if call.stoppable and call.running:
            call.stop.requested.set()
        else:
            call.scope.cancel()
        await call.done.wait()
        return True, call.stop.killed
