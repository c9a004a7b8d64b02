"""``agent/setEffort``, ``agent/setFastMode``, ``agent/setApproval``, and
settings changed in the editor: one mechanism for every setting."""

from __future__ import annotations

import logging
from typing import Any

from agentls.agent.settings import SettingChange
from agentls.domain import SettingName
from agentls.lsp.face import LspFace
from agentls.lsp.handlers.registry import handles
from agentls.protocol import methods
from agentls.protocol.converter import camel
from agentls.schema.wire import (
    SetApprovalParams,
    SetEffortParams,
    SetFastModeParams,
    SetReviewParams,
)
from agentls.service.errors import ServiceError

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
async def change_setting(face: LspFace, params: SettingParams) -> dict[str, Any]:
    """Change the setting in the pane and answer once its agent has taken it."""
    service = await face.service()
    setting, field = _SETTING[type(params)]
    value = getattr(params, field)
    await service.change_setting(params.pane, SettingChange(setting, value))
    return {"pane": params.pane, camel(field): value}


async def apply_configuration(face: LspFace, settings: Any) -> None:
    """``workspace/didChangeConfiguration``: settings edited in the editor apply
    without a restart. Effort, fast mode, approval and web search go to every open pane;
    model and base URL to every model request from now on."""
    service = await face.service()
    if not isinstance(settings, dict):
        return
    section = settings.get("agentls", settings)
    if not isinstance(section, dict):
        return
    service.check_ready()
    panes = list(service.panes())
    for key, name in _CONFIGURATION.items():
        if key in section and section[key] is not None:
            for pane in panes:
                try:
                    await service.change_setting(pane, SettingChange(name, section[key]))
                except ServiceError as exc:
                    if exc.kind != "invalid":
                        continue
                    # Said to the user (window/logMessage) rather than silently dropped.
                    log.warning("the setting %s was not applied: %s", key, exc.message)
                    break
    model = section.get("model") if isinstance(section.get("model"), str) else None
    base_url = section.get("baseUrl") if isinstance(section.get("baseUrl"), str) else None
    if model or base_url:
        await service.reconfigure_model(model or None, base_url or None)
