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
class ContextSize:
    """How full the model's context window is: the size of the conversation the
    next request will send (as estimated) and the window itself, in tokens."""

    tokens: int
    window: int


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
    # ``prompt_cache_key``: requests of one session share their cached prefix.
    cache_key: str | None = None
    # "none" for a request that must answer in words (a compaction's summary).
    tool_choice: str = "auto"


@dataclass(frozen=True, slots=True)
class ModelResponse:
    """A complete response; only complete responses are ever committed."""

    items: list[Item]
    usage: Usage = field(default_factory=Usage)
    response_id: str | None = None

    @property
    def client_calls(self) -> list[Item]:
        """The calls we must answer (function, custom tool and built-in calls)."""
        return [item for item in self.items if item.get("type") in CLIENT_CALL_TYPES]

    @property
    def text(self) -> str:
        """The assistant's visible text in this response (a refusal included)."""
        return "".join(message_text(item) for item in self.items)

    @property
    def refusal(self) -> str:
        """What the model refused with, if it refused."""
        return "".join(message_text(item, ("refusal",)) for item in self.items)


# Call items the client answers, each with the output item type that answers it.
CLIENT_CALL_TYPES: dict[str, str] = {
    "function_call": "function_call_output",
    "custom_tool_call": "custom_tool_call_output",
    "shell_call": "shell_call_output",
    "local_shell_call": "local_shell_call_output",
    "apply_patch_call": "apply_patch_call_output",
}


def message_text(item: Item, kinds: tuple[str, ...] = ("output_text", "refusal")) -> str:
    """The text of an assistant message item (of the given content kinds)."""
    if item.get("type") != "message":
        return ""
    parts: list[str] = []
    for content in item.get("content") or ():
        if isinstance(content, dict) and content.get("type") in kinds:
            parts.append(str(content.get("text") or content.get("refusal") or ""))
    return "".join(parts)


@dataclass(frozen=True, slots=True)
class Retry:
    """A model request failed and is sent again after ``delay`` seconds."""

    attempt: int
    max_attempts: int
    delay: float
    reason: str
    # The failure's kind (``ModelError.kind``): "rate_limit", "server", "connection" …
    kind: str


class StreamSink(Protocol):
    """Receives a response while it streams (for display only: nothing here is kept)."""

    def text_delta(self, text: str) -> None: ...

    def reasoning_delta(self, text: str) -> None: ...

    def retrying(self, retry: Retry) -> None: ...

    def call_progress(self, tool: str, chars: int) -> None:
        """The model is writing a call of ``tool`` (``chars`` of it so far)."""

    def hosted_call(self, item: Item) -> None:
        """A call the model server ran itself (a web search) has finished."""


class QuietSink:
    """A sink that shows nothing (a compaction's summary, tests)."""

    def text_delta(self, text: str) -> None:
        pass

    def reasoning_delta(self, text: str) -> None:
        pass

    def retrying(self, retry: Retry) -> None:
        pass

    def call_progress(self, tool: str, chars: int) -> None:
        pass

    def hosted_call(self, item: Item) -> None:
        pass
