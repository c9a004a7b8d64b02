"""Asking the editor to approve a tool call.

Clients that declare ``capabilities.experimental.agentls.requestApproval``
get our own request, ``agent/requestApproval``, with everything needed to show
the command or the patch. Plain LSP clients get ``window/showMessageRequest``
with three buttons, which every editor can show. Cancelling the turn while the
question is open withdraws it (``$/cancelRequest``).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import Any

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer

from agentls.agent.approval import ApprovalDecision, ApprovalRequest
from agentls.protocol import methods
from agentls.tools.base import shorten

log = logging.getLogger(__name__)

ALLOW_ONCE = "Allow once"
ALLOW_SESSION = "Allow for this session"
DENY = "Deny"
_BY_TITLE = {ALLOW_ONCE: "allow", ALLOW_SESSION: "allowSession", DENY: "deny"}


class EditorApprover:
    def __init__(self, server: LanguageServer) -> None:
        self._server = server

    def _native(self) -> bool:
        try:
            experimental = self._server.client_capabilities.experimental
        except Exception:
            return False
        if not isinstance(experimental, dict):
            return False
        agentls = experimental.get("agentls")
        return isinstance(agentls, dict) and agentls.get("requestApproval") is True

    async def __call__(self, pane: str, request: ApprovalRequest) -> ApprovalDecision:
        if self._native():
            params: dict[str, Any] = {
                "pane": pane,
                "turnId": request.turn_id,
                "callId": request.call_id,
                "tool": request.tool,
                "title": request.title,
            }
            if request.command is not None:
                params["command"] = request.command
            if request.diff is not None:
                params["diff"] = request.diff
            if request.justification is not None:
                params["justification"] = request.justification
            if request.review:
                params["review"] = True
            result = await self._ask(methods.REQUEST_APPROVAL, params)
            return _decision(result)
        if request.diff is not None:
            what = f"edit {', '.join(request.paths) or 'files'}"
        else:
            what = f"run `{shorten(request.command or request.title, 200)}`"
        why = f" ({shorten(request.justification, 200)})" if request.justification else ""
        message = lsp.ShowMessageRequestParams(
            type=lsp.MessageType.Warning,
            message=f"agentls ({pane}) wants to {what}{why}. Allow it?",
            actions=[lsp.MessageActionItem(title) for title in (ALLOW_ONCE, ALLOW_SESSION, DENY)],
        )
        answer = await self._ask(lsp.WINDOW_SHOW_MESSAGE_REQUEST, message)
        title = getattr(answer, "title", None)
        if title is None and isinstance(answer, dict):
            title = answer.get("title")
        return ApprovalDecision(_BY_TITLE.get(str(title), "deny"))  # type: ignore[arg-type]

    async def _ask(self, method: str, params: Any) -> Any:
        return await ask_editor(self._server, method, params, "approval")


async def ask_editor(server: LanguageServer, method: str, params: Any, what: str) -> Any:
    """Send the editor a request and wait for its answer; cancelled, withdraw it."""
    protocol = server.protocol
    msg_id = f"agentls-{what}-{uuid.uuid4().hex}"
    future = protocol.send_request(method, params, msg_id=msg_id)
    try:
        # Shielded: a cancelled await must not cancel pygls's own future (pygls#621).
        return await asyncio.shield(asyncio.wrap_future(future))
    except asyncio.CancelledError:
        # The turn was cancelled: withdraw the question, forget any late answer.
        protocol._request_futures.pop(msg_id, None)
        protocol.notify(lsp.CANCEL_REQUEST, lsp.CancelParams(id=msg_id))
        raise


def _decision(result: Any) -> ApprovalDecision:
    if isinstance(result, dict):
        decision = result.get("decision")
        reason = result.get("reason")
        if decision in ("allow", "allowSession", "deny"):
            return ApprovalDecision(decision, reason if isinstance(reason, str) else None)
    log.warning("the editor answered agent/requestApproval with %r; treating it as deny", result)
    return ApprovalDecision("deny", "the editor's answer was not understood")
