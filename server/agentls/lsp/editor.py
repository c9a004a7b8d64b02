"""The editor port (``service.editor.Editor``) over LSP: edits as
``workspace/applyEdit`` (``edits``), approvals as ``agent/requestApproval``
or ``window/showMessageRequest`` (``approval``), MCP consent (``consent``),
the editor's problems as ``agent/diagnostics`` (``diagnostics``), and
``window/showMessage`` for what the user must know."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer

from agentls.agent.approval import ApprovalDecision, ApprovalRequest
from agentls.lsp.approval import EditorApprover
from agentls.lsp.consent import EditorConsent
from agentls.lsp.diagnostics import EditorDiagnostics, client_answers_diagnostics
from agentls.lsp.edits import EditorFiles
from agentls.mcp.consent import ConsentRequest
from agentls.tools.diagnostics import Diagnostic

log = logging.getLogger(__name__)


class LspEditor:
    """The editor at the other end of this language server."""

    def __init__(
        self,
        server: LanguageServer,
        client_ready: Callable[[], bool],
        generation: Callable[[], int],
    ) -> None:
        self._server = server
        self._generation = generation
        self._files = EditorFiles(server, client_ready)
        self._approver = EditorApprover(server)
        self._consent = EditorConsent(server)
        self._diagnostics: EditorDiagnostics | None = None

    @property
    def files(self) -> EditorFiles:
        return self._files

    async def approve(self, pane: str, request: ApprovalRequest) -> ApprovalDecision:
        return await self._approver(pane, request)

    async def consent(self, request: ConsentRequest) -> bool | None:
        return await self._consent(request)

    def reads_diagnostics(self) -> bool:
        return client_answers_diagnostics(self._server)

    def read_diagnostics_in(self, workspace: Path) -> None:
        """File names in diagnostics are relative to ``workspace``."""
        self._diagnostics = EditorDiagnostics(self._server, self._files.open, workspace)

    async def diagnostics(self, path: Path | None) -> list[Diagnostic]:
        assert self._diagnostics is not None, "read_diagnostics_in() comes first"
        return await self._diagnostics.diagnostics(path)

    @property
    def generation(self) -> int:
        return self._generation()

    def show_message(self, message: str) -> None:
        log.warning("%s", message)
        self._server.window_show_message(
            lsp.ShowMessageParams(type=lsp.MessageType.Warning, message=message)
        )
