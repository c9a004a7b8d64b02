"""A pane's settings: what the user may change at any time, even mid-turn.

One mechanism for all of them: a ``SettingChange`` names the setting and its
new value, ``Settings.change`` checks the value and applies it. Each takes
effect from the agent's next model request (effort, fast mode, web search) or
tool call (approval).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from agentls.config import ConfigError, parse_effort
from agentls.domain import (
    APPROVALS,
    DEFAULT_APPROVAL,
    DEFAULT_EFFORT,
    Approval,
    Effort,
    SettingName,
)


def parse_approval(value: object) -> Approval:
    if isinstance(value, str) and value in APPROVALS:
        return value
    raise ConfigError(f"unknown approval policy {value!r}; expected one of {', '.join(APPROVALS)}")


def parse_flag(value: object) -> bool:
    if isinstance(value, bool):
        return value
    raise ConfigError(f"expected true or false, not {value!r}")


_PARSERS: dict[SettingName, Callable[[object], Any]] = {
    "effort": parse_effort,
    "fast_mode": parse_flag,
    "approval": parse_approval,
    "web_search": parse_flag,
    "review": parse_flag,
}


@dataclass(frozen=True, slots=True)
class SettingChange:
    name: SettingName
    value: object


@dataclass(slots=True)
class Settings:
    effort: Effort = DEFAULT_EFFORT
    fast_mode: bool = False
    approval: Approval = DEFAULT_APPROVAL
    # Offer the model the Responses API's hosted web search.
    web_search: bool = False
    # Review mode: every patch waits for the user's review, whatever ``approval`` says.
    review: bool = False

    def change(self, change: SettingChange) -> None:
        """Apply one change; raises ConfigError (and changes nothing) for a bad value."""
        setattr(self, change.name, _PARSERS[change.name](change.value))

    def copy(self) -> Settings:
        return replace(self)
