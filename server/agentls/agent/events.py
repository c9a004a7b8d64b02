"""The agent's event stream: one ordered stream per agent, ``seq`` without gaps.

Each event class carries the ``kind`` it has on the wire (protocol.md,
``agent/event``), so the protocol layer converts without a lookup table.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from agentls.agent.receipt import Receipt
from agentls.domain import ToolStatus, TurnStatus
from agentls.model.types import ContextSize, Usage


@dataclass(slots=True, kw_only=True)
class AgentEvent:
    kind: ClassVar[str]
    seq: int = 0
    turn_id: int | None = None


@dataclass(slots=True, kw_only=True)
class TurnStarted(AgentEvent):
    kind: ClassVar[str] = "turn.started"
    prompt: str
    # The turn's number in its session, from 1, without gaps (a fork counts its own).
    number: int = 0


@dataclass(slots=True, kw_only=True)
class TextDelta(AgentEvent):
    kind: ClassVar[str] = "message.delta"
    text: str


@dataclass(slots=True, kw_only=True)
class ReasoningDelta(AgentEvent):
    kind: ClassVar[str] = "reasoning.delta"
    text: str


@dataclass(slots=True, kw_only=True)
class ToolStarted(AgentEvent):
    kind: ClassVar[str] = "tool.started"
    call_id: str
    tool: str
    title: str
    arguments: dict[str, Any]


@dataclass(slots=True, kw_only=True)
class ToolOutput(AgentEvent):
    kind: ClassVar[str] = "tool.output"
    call_id: str
    text: str


@dataclass(slots=True, kw_only=True)
class ToolFinished(AgentEvent):
    kind: ClassVar[str] = "tool.finished"
    call_id: str
    status: ToolStatus
    exit_code: int | None = None
    # What a web search found: [{"url", "title"?}].
    sources: list[dict[str, str]] | None = None
    # What a patch changed: a unified diff, file by file.
    diff: str | None = None


@dataclass(slots=True, kw_only=True)
class ToolPreparing(AgentEvent):
    """The model is writing a tool call (its arguments stream in): progress
    rather than silence while a long patch is written."""

    kind: ClassVar[str] = "tool.preparing"
    tool: str
    title: str
    chars: int = 0


@dataclass(slots=True, kw_only=True)
class SteerAdmitted(AgentEvent):
    kind: ClassVar[str] = "steer.admitted"
    text: str


@dataclass(slots=True, kw_only=True)
class SteerApplied(AgentEvent):
    kind: ClassVar[str] = "steer.applied"
    text: str


@dataclass(slots=True, kw_only=True)
class UsageUpdated(AgentEvent):
    """The turn's usage so far (cumulative over its model requests)."""

    kind: ClassVar[str] = "usage"
    usage: Usage
    # How full the context window is now (the next request's estimated size).
    context: ContextSize | None = None


@dataclass(slots=True, kw_only=True)
class CompactionStarted(AgentEvent):
    """The conversation is being compacted: ``reason`` is "auto" (it crossed
    the threshold), "overflow" (the model said it no longer fits) or "manual"."""

    kind: ClassVar[str] = "compaction.started"
    reason: str
    before_tokens: int


@dataclass(slots=True, kw_only=True)
class CompactionFinished(AgentEvent):
    kind: ClassVar[str] = "compaction.finished"
    before_tokens: int
    after_tokens: int
    mode: str
    summary: str | None = None


@dataclass(slots=True, kw_only=True)
class Citation:
    url: str
    title: str | None = None
    start_index: int | None = None
    end_index: int | None = None


@dataclass(slots=True, kw_only=True)
class Citations(AgentEvent):
    """The sources the answer cites (``url_citation`` annotations), in order."""

    kind: ClassVar[str] = "message.citations"
    citations: list[Citation] = field(default_factory=list)


@dataclass(slots=True, kw_only=True)
class Refusal(AgentEvent):
    """The model refused; ``text`` is what it said (also the turn's answer)."""

    kind: ClassVar[str] = "message.refusal"
    text: str


@dataclass(slots=True, kw_only=True)
class ModelRetry(AgentEvent):
    """A model request failed and will be retried; text streamed since the
    last committed step is void and will be sent again."""

    kind: ClassVar[str] = "model.retry"
    attempt: int
    max_attempts: int
    delay: float
    reason: str
    # What failed ("rate_limit", "server", "connection", "timeout", "stream").
    failure: str = "server"
    # When the request goes again (seconds since the epoch).
    retry_at: float = 0.0


@dataclass(slots=True, kw_only=True)
class PlanStep:
    step: str
    status: Literal["pending", "in_progress", "completed"]


@dataclass(slots=True, kw_only=True)
class PlanUpdated(AgentEvent):
    kind: ClassVar[str] = "plan.updated"
    explanation: str | None
    plan: list[PlanStep] = field(default_factory=list)


@dataclass(slots=True, kw_only=True)
class TurnFinished(AgentEvent):
    kind: ClassVar[str] = "turn.finished"
    status: TurnStatus
    final_message: str = ""
    error: str | None = None
    # What failed, when the turn failed: a model failure's kind ("auth",
    # "connection", ...), "stopped" (a guard) or "internal".
    failure: str | None = None
    usage: Usage = field(default_factory=Usage)
    receipt: Receipt | None = None
    context: ContextSize | None = None
