"""Approval gating: before a tool call runs, ask the user if the policy says
so (``approval.py`` decides *whether*; the ``Approver`` is *whom*), and give
the output the model reads when the call may not run."""

from __future__ import annotations

import logging

import anyio

from agentls.agent.approval import (
    Allowances,
    Approver,
    denied_output,
    escalates,
    needs_approval,
    refused_escalation,
    rejected_output,
    request_for,
)
from agentls.agent.settings import Settings
from agentls.tools.apply_patch import open_documents
from agentls.tools.base import Tool
from agentls.tools.files import Files
from agentls.tools.patch.diff import preview_diff
from agentls.tools.registry import ToolBox, ToolCall
from agentls.tools.shell import Shell
from agentls.tools.workspace import Workspace

log = logging.getLogger(__name__)


class ApprovalGate:
    """One agent's gate: its approver, and what the user allowed for the session."""

    def __init__(
        self,
        approver: Approver | None,
        settings: Settings,
        tools: ToolBox,
        shell: Shell,
        workspace: Workspace,
        files: Files,
    ) -> None:
        self.approver = approver
        self._allowances = Allowances()
        self._settings = settings
        self._tools = tools
        self._shell = shell
        self._workspace = workspace
        self._files = files

    async def check(self, call: ToolCall, tool: Tool | None, turn_id: int) -> str | None:
        """Ask the user if the policy says so; the output the model sees if
        the call may not run (None: it may)."""
        if tool is None or call.problem:
            return None  # it fails on its own, changing nothing
        workspace = self._workspace
        policy = self._settings.approval
        sandbox = await self._shell.state()
        if policy == "never" and escalates(call) and sandbox.active:
            return refused_escalation(call)
        # Review mode: every patch waits for the user, whatever the policy.
        review = call.name == "apply_patch" and self._settings.review
        if not review and not needs_approval(
            policy,
            call,
            read_only=tool.read_only,
            sandboxed=tool.sandboxed(call.arguments, sandbox),
            allowed=self._allowances.covers(call, workspace),
        ):
            return None
        if self.approver is None:
            return denied_output(call, "approval is required but no one can be asked")
        diff = None
        if call.name == "apply_patch":
            patch = str(call.arguments.get("patch", ""))
            documents = open_documents(patch, workspace, self._files)
            diff = await anyio.to_thread.run_sync(preview_diff, patch, workspace, documents)
        title = self._tools.title(call, workspace)
        request = request_for(turn_id, call, title, workspace, diff, review=review)
        try:
            answer = await self.approver(request)
        except Exception as exc:  # the editor went away or answered nonsense: deny, safely
            log.warning("approval request failed: %s", exc)
            return denied_output(call, f"the editor could not be asked ({exc})")
        if answer.decision == "deny":
            return rejected_output(answer.reason) if review else denied_output(call, answer.reason)
        if answer.decision == "allowSession":
            self._allowances.remember(call, workspace)
        return None
