"""Token usage: what a response reports, and the estimate the fake reports by default.

The real API counts tokens with the model's tokenizer; the fake cannot, so it
estimates, deterministically and additively: every *unit* of a request costs
``ceil(n / 4)`` tokens, where ``n`` is the unit's size in UTF-8 bytes -- the
text itself for a string, its compact JSON (``separators=(",", ":")``, non-ASCII
characters unescaped) for anything else. The units of a request are its
``instructions``, each ``input`` item (a string ``input`` is one unit) and
each tool definition. A client that keeps "the last reported ``input_tokens``
plus :func:`estimate_tokens` of every item added since" therefore gets exactly
what the fake will report and check against its context window.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TypeAlias

_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True, slots=True)
class TokenUsage:
    """Token counts for ``response.completed``; ``total_tokens`` is input + output."""

    input_tokens: int = 10
    output_tokens: int = 5
    reasoning_tokens: int = 0
    cached_tokens: int = 0

    def to_api(self) -> dict[str, Any]:
        """The ``usage`` object in OpenAI's shape."""
        return {
            "input_tokens": self.input_tokens,
            "input_tokens_details": {"cached_tokens": self.cached_tokens, "cache_write_tokens": 0},
            "output_tokens": self.output_tokens,
            "output_tokens_details": {"reasoning_tokens": self.reasoning_tokens},
            "total_tokens": self.input_tokens + self.output_tokens,
        }


class UsageLike(Protocol):
    """Anything with the four token counts (e.g. ``agentls.model.types.Usage``)."""

    @property
    def input_tokens(self) -> int: ...
    @property
    def output_tokens(self) -> int: ...
    @property
    def reasoning_tokens(self) -> int: ...
    @property
    def cached_tokens(self) -> int: ...


UsageArg: TypeAlias = TokenUsage | UsageLike | Mapping[str, int] | None


def to_usage(usage: UsageArg) -> TokenUsage | None:
    """A :class:`TokenUsage` from any accepted form (a dict may give only some counts)."""
    if usage is None or isinstance(usage, TokenUsage):
        return usage
    if isinstance(usage, Mapping):
        known = {f.name for f in dataclasses.fields(TokenUsage)}
        unknown = set(usage) - known
        if unknown:
            raise ValueError(
                f"unknown usage keys {sorted(unknown)}; expected some of {sorted(known)}"
            )
        return TokenUsage(**{key: int(value) for key, value in usage.items()})
    return TokenUsage(
        input_tokens=int(usage.input_tokens),
        output_tokens=int(usage.output_tokens),
        reasoning_tokens=int(usage.reasoning_tokens),
        cached_tokens=int(usage.cached_tokens),
    )


def estimate_tokens(unit: Any) -> int:
    """The estimated tokens of one unit: ``ceil(UTF-8 bytes / 4)`` of a string,
    or of the compact JSON of anything else (an input item, a tool)."""
    text = unit if isinstance(unit, str) else _COMPACT.encode(unit)
    return -(-len(text.encode("utf-8")) // 4)


def estimate_input_tokens(body: Mapping[str, Any]) -> int:
    """The ``input_tokens`` the fake reports for (and checks against its context
    window for) a request body: the sum of :func:`estimate_tokens` over its
    ``instructions``, each ``input`` item and each tool."""
    total = 0
    instructions = body.get("instructions")
    if isinstance(instructions, str):
        total += estimate_tokens(instructions)
    items = body.get("input")
    if isinstance(items, str):
        total += estimate_tokens(items)
    elif isinstance(items, list):
        total += sum(estimate_tokens(item) for item in items)
    tools = body.get("tools")
    if isinstance(tools, list):
        total += sum(estimate_tokens(tool) for tool in tools)
    return total
