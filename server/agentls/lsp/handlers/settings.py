"""``agent/setEffort``, ``agent/setFastMode``, ``agent/setApproval``, and
settings changed in the editor: one mechanism for every setting."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from agentls.agent.settings import SettingChange
from agentls.domain import SettingName
from agentls.lsp.handlers.registry import handles
from agentls.protocol import errors, methods
from agentls.protocol.converter import camel
from agentls.schema.wire import (
    SetApprovalParams,
    SetEffortParams,
    SetFastModeParams,
    SetReviewParams,
)
from agentls.worker import messages as wm

if TYPE_CHECKING:
    from agentls.lsp.app import AgentServer

log = logging.getLogger(__name__)

# ``workspace/didChangeConfiguration``: the editor's name of each setting.
_CONFIGURATION: dict[str, SettingName] = {
    "effort": "effort",
    "fastMode": "fast_mode",
    "approval": "approval",
    "webSearch": "web_search",
    "review": "review",
}


SettingParams = SetEffortParams | SetFastModeParams | SetApprovalParams | SetReviewParams

# Each setting request: the setting it changes and the param that carries the
# new value (answered as ``{pane, <param>: value}``).
_SETTING: dict[type, tuple[SettingName, str]] = {
    SetEffortParams: ("effort", "effort"),
    SetFastModeParams: ("fast_mode", "enabled"),
    SetApprovalParams: ("approval", "approval"),
    SetReviewParams: ("review", "enabled"),
}


@handles(methods.SET_EFFORT, methods.SET_FAST_MODE, methods.SET_APPROVAL, methods.SET_REVIEW)
async def change_setting(server: AgentServer, params: SettingParams) -> dict[str, Any]:
    """Change the setting in the pane and answer once its agent has taken it."""
    conn = await server.connection()
    conn.check_pane(params.pane)
    setting, field = _SETTING[type(params)]
    value = getattr(params, field)
    reply: wm.Completion[wm.SettingChanged] = wm.Completion()
    change = SettingChange(setting, value)
    result = await conn.command(wm.ChangeSetting(params.pane, change, reply), reply)
    if result.failure is not None:
        raise errors.from_failure(result.failure)
    return {"pane": params.pane, camel(field): value}


async def apply_configuration(server: AgentServer, settings: Any) -> None:
    """``workspace/didChangeConfiguration``: settings edited in the editor apply
    without a restart. Effort, fast mode, approval and web search go to every open pane;
    model and base URL to every model request from now on."""
    conn = await server.connection()
    if not isinstance(settings, dict):
        return
    section = settings.get("agentls", settings)
    if not isinstance(section, dict):
        return
    worker = conn.check_ready()
    panes = [pane for pane in (wm.MAIN, worker.fork_pane) if pane is not None]
    for key, name in _CONFIGURATION.items():
        if key in section and section[key] is not None:
            for pane in panes:
                reply: wm.Completion[wm.SettingChanged] = wm.Completion()
                result = await conn.command(
                    wm.ChangeSetting(pane, SettingChange(name, section[key]), reply), reply
                )
                if result.failure is not None and result.failure.kind == "invalid":
                    # Said to the user (window/logMessage) rather than silently dropped.
                    log.warning("the setting %s was not applied: %s", key, result.failure.message)
                    break
    model = section.get("model") if isinstance(section.get("model"), str) else None
    base_url = section.get("baseUrl") if isinstance(section.get("baseUrl"), str) else None
    if (model or base_url) and conn.client is not None:
        await conn.client.reconfigure(model=model or None, base_url=base_url or None)
