"""Asking the user whether a project's MCP server may start.

``window/showMessageRequest`` with two buttons: every LSP client can show it
(VS Code as a notification, Neovim with ``vim.ui.select``). Dismissing it is
no answer: the server stays off and the question comes again on restart.
"""

from __future__ import annotations

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer

from agentls.lsp.approval import ask_editor
from agentls.mcp.consent import ConsentRequest

ALLOW = "Allow"
DENY = "Don't allow"


class EditorConsent:
    def __init__(self, server: LanguageServer) -> None:
        self._server = server

    async def __call__(self, request: ConsentRequest) -> bool | None:
        params = lsp.ShowMessageRequestParams(
            type=lsp.MessageType.Warning,
            message=f"agentls: {request.question()}",
            actions=[lsp.MessageActionItem(ALLOW), lsp.MessageActionItem(DENY)],
        )
        answer = await ask_editor(self._server, lsp.WINDOW_SHOW_MESSAGE_REQUEST, params, "mcp")
        title = getattr(answer, "title", None)
        if title is None and isinstance(answer, dict):
            title = answer.get("title")
        return {ALLOW: True, DENY: False}.get(str(title))
