"""Wire types of the protocol: the params of every ``agent/*`` request.

Field names are snake_case here and camelCase on the wire (the converter
renames). Defaults are the protocol's defaults. Results and notifications are
built as plain JSON by ``protocol.convert``.
"""

from __future__ import annotations

from typing import ClassVar, Literal

import attrs

from agentls.domain import Approval, Effort, SettingName

ProgressToken = int | str


@attrs.define(frozen=True)
class Position:
    line: int
    character: int


@attrs.define(frozen=True)
class Range:
    start: Position
    end: Position


@attrs.define(frozen=True)
class Selection:
    uri: str
    range: Range
    text: str


@attrs.define(frozen=True)
class Context:
    selection: Selection | None = None
    documents: list[str] | None = None


@attrs.define(frozen=True)
class SubmitParams:
    prompt: str
    pane: str = "main"
    context: Context | None = None
    work_done_token: ProgressToken | None = None


@attrs.define(frozen=True)
class SteerParams:
    prompt: str
    pane: str = "main"
    expected_turn_id: int | None = None


@attrs.define(frozen=True)
class CancelParams:
    pane: str = "main"
    turn_id: int | None = None


@attrs.define(frozen=True)
class ForkParams:
    pane: str = "main"


@attrs.define(frozen=True)
class ClosePaneParams:
    pane: str


# The setting requests: each names the setting it changes and the field that
# carries the new value (answered as ``{pane, <field>: value}``).


@attrs.define(frozen=True)
class SetEffortParams:
    effort: Effort
    pane: str = "main"
    setting: ClassVar[SettingName] = "effort"
    field: ClassVar[str] = "effort"


@attrs.define(frozen=True)
class SetFastModeParams:
    enabled: bool
    pane: str = "main"
    setting: ClassVar[SettingName] = "fast_mode"
    field: ClassVar[str] = "enabled"


@attrs.define(frozen=True)
class SetApprovalParams:
    approval: Approval
    pane: str = "main"
    setting: ClassVar[SettingName] = "approval"
    field: ClassVar[str] = "approval"


@attrs.define(frozen=True)
class SetReviewParams:
    enabled: bool
    pane: str = "main"
    setting: ClassVar[SettingName] = "review"
    field: ClassVar[str] = "enabled"


SettingParams = SetEffortParams | SetFastModeParams | SetApprovalParams | SetReviewParams


@attrs.define(frozen=True)
class AuxiliaryParams:
    prompt: str
    pane: str = "main"
    context: Literal["clean", "conversation"] = "clean"


@attrs.define(frozen=True)
class NewSessionParams:
    pane: str = "main"


@attrs.define(frozen=True)
class CancelToolParams:
    call_id: str
    pane: str = "main"


@attrs.define(frozen=True)
class SessionsParams:
    limit: int | None = None


@attrs.define(frozen=True)
class ResumeParams:
    session_id: str
    pane: str = "main"


@attrs.define(frozen=True)
class ProcessesParams:
    pane: str = "main"


@attrs.define(frozen=True)
class McpServersParams:
    """``agent/mcpServers`` takes no params."""


@attrs.define(frozen=True)
class McpRestartParams:
    name: str


@attrs.define(frozen=True)
class McpRevokeParams:
    # None: every server of the project's .mcp.json.
    name: str | None = None


@attrs.define(frozen=True)
class CompactParams:
    pane: str = "main"
    # What the summary should keep in particular ("the failing test").
    focus: str | None = None


@attrs.define(frozen=True)
class InstructionsParams:
    pane: str = "main"


@attrs.define(frozen=True)
class DeleteSessionParams:
    session_id: str


@attrs.define(frozen=True)
class AskArguments:
    """The one argument of ``workspace/executeCommand`` ``agentls.ask``."""

    prompt: str
    uri: str | None = None
    range: Range | None = None
    # What the code action that made it is for: "ask" (a question about a
    # selection: a client may let the user edit the prompt) or "fix" (a
    # diagnostic). Plain clients send it back as they got it.
    kind: Literal["ask", "fix"] | None = None


@attrs.define(frozen=True)
class HistoryParams:
    pane: str = "main"
    since_seq: int = 0
