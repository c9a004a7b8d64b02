"""What a model request carries and what a model response gives back."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from agentls.config import Effort

# Conversation items are the Responses API's own JSON objects (messages,
# reasoning items, function calls and their outputs), kept as plain dicts so
# they replay to the model byte for byte.
Item = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    cached_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.reasoning_tokens + other.reasoning_tokens,
            self.cached_tokens + other.cached_tokens,
        )

    @classmethod
    def from_api(cls, usage: dict[str, Any] | None) -> Usage:
        if not usage:
            return cls()
        input_details = usage.get("input_tokens_details") or {}
        output_details = usage.get("output_tokens_details") or {}
        return cls(
            input_tokens=int(usage.get("input_tokens") or 0),
            output_tokens=int(usage.get("output_tokens") or 0),
            reasoning_tokens=int(output_details.get("reasoning_tokens") or 0),
            cached_tokens=int(input_details.get("cached_tokens") or 0),
        )


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """One call to the model: the whole conversation plus the turn's settings."""

    input: Sequence[Item]
    tools: Sequence[dict[str, Any]]
    instructions: str
    effort: Effort
    fast_mode: bool
    # Nobody watches the stream (an auxiliary job): it may be read in batches.
    background: bool = False


@dataclass(frozen=True, slots=True)
class ModelResponse:
    """A complete response; only complete responses are ever committed."""

    items: list[Item]
    usage: Usage = field(default_factory=Usage)
    response_id: str | None = None

    @property
    def function_calls(self) -> list[Item]:
        return [item for item in self.items if item.get("type") == "function_call"]

    @property
    def text(self) -> str:
        """The assistant's visible text in this response."""
        parts: list[str] = []
        for item in self.items:
            if item.get("type") != "message":
                continue
            for content in item.get("content") or ():
                if content.get("type") == "output_text":
                    parts.append(str(content.get("text", "")))
        return "".join(parts)


class StreamSink(Protocol):
    """Receives a response while it streams (for display only: nothing here is kept)."""

    def text_delta(self, text: str) -> None: ...

    def reasoning_delta(self, text: str) -> None: ...

    def retrying(self, attempt: int, max_attempts: int, delay: float, reason: str) -> None: ...
