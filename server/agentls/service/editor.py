"""The editor port: what the service needs from whoever shows the agent to
the user. Each face implements it over its own protocol (the LSP face with
``workspace/applyEdit``, ``agent/requestApproval``, ``agent/diagnostics``,
``window/showMessage``; the ACP face with ``fs/*`` and
``session/request_permission``)."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from agentls.agent.approval import ApprovalDecision, ApprovalRequest
from agentls.mcp.consent import ConsentRequest
from agentls.tools.diagnostics import Diagnostic
from agentls.tools.files import Files


class Editor(Protocol):
    @property
    def files(self) -> Files:
        """The editor's open documents, and where edits go (apply an edit;
        the disk when the editor cannot take it)."""
        ...

    async def approve(self, pane: str, request: ApprovalRequest) -> ApprovalDecision:
        """Ask the user whether a tool call may run (cancelled: withdraw the question)."""
        ...

    async def consent(self, request: ConsentRequest) -> bool | None:
        """Ask whether a project's MCP server may start (None: no answer)."""
        ...

    def reads_diagnostics(self) -> bool:
        """Whether ``diagnostics`` can be asked now (the model is offered
        ``get_diagnostics`` only then)."""
        ...

    async def diagnostics(self, path: Path | None) -> list[Diagnostic]:
        """The problems the editor shows, of one file or of every file."""
        ...

    @property
    def generation(self) -> int:
        """Counts the editors this face has served: a new one (a window that
        reattached) may answer differently."""
        ...

    def show_message(self, message: str) -> None:
        """Something the user must know (a warning)."""
        ...
