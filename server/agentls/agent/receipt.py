"""What a cancellation did, for the user to see."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class AbortedToolCall:
    call_id: str
    tool: str


@dataclass(frozen=True, slots=True)
class Receipt:
    turn_id: int
    aborted_tool_calls: tuple[AbortedToolCall, ...] = field(default=())
    killed_processes: int = 0
    surviving_processes: int = 0
