"""Read-only views of panes, for the faces: what a pane shows (its session,
whether it is busy, its running turn, its project instructions, its
background processes), never the agent itself."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentls.agent.project_docs import ProjectDocs
from agentls.domain import Approval, Effort

if TYPE_CHECKING:
    from agentls.agent.agent import Agent


class PaneView:
    """One pane as it is now. Cheap: made on each request."""

    __slots__ = ("_agent", "name")

    def __init__(self, name: str, agent: Agent) -> None:
        self.name = name
        self._agent = agent

    @property
    def session_id(self) -> str:
        return self._agent.session_id

    @property
    def busy(self) -> bool:
        """Turns or a compaction in flight or queued."""
        return self._agent.busy

    @property
    def running_turn_id(self) -> int | None:
        return self._agent.running_turn_id

    @property
    def project(self) -> ProjectDocs:
        """The project instructions the session follows."""
        return self._agent.project

    @property
    def effort(self) -> Effort:
        return self._agent.settings.effort

    @property
    def approval(self) -> Approval:
        return self._agent.settings.approval

    def processes(self) -> list[dict[str, Any]]:
        """The pane's background processes, as ``agent/processes`` lists them."""
        return [entry.describe() for entry in self._agent.processes()]
