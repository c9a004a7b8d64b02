"""``agent/setEffort``, ``agent/setFastMode``, and settings changed in the editor."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from agentls.config import ConfigError, parse_effort
from agentls.protocol import errors, methods
from agentls.protocol.types import SetApprovalParams, SetEffortParams, SetFastModeParams
from agentls.worker import messages as wm

if TYPE_CHECKING:
    from agentls.server.app import AgentServer

log = logging.getLogger(__name__)


async def _change(
    server: AgentServer,
    pane: str,
    command: Callable[[wm.Completion[Any]], wm.Command],
    answer: dict[str, Any],
) -> dict[str, Any]:
    """Send a settings command to the pane and answer once the agent took it."""
    session = await server.session()
    session.check_pane(pane)
    reply: wm.Completion[Any] = wm.Completion()
    result = await session.command(command(reply), reply)
    if result.error is not None:
        raise _error(pane, result.error)
    return {"pane": pane, **answer}


async def set_effort(server: AgentServer, params: SetEffortParams) -> dict[str, Any]:
    return await _change(
        server,
        params.pane,
        lambda reply: wm.SetEffort(params.pane, params.effort, reply),
        {"effort": params.effort},
    )


async def set_fast_mode(server: AgentServer, params: SetFastModeParams) -> dict[str, Any]:
    return await _change(
        server,
        params.pane,
        lambda reply: wm.SetFastMode(params.pane, params.enabled, reply),
        {"enabled": params.enabled},
    )


async def set_approval(server: AgentServer, params: SetApprovalParams) -> dict[str, Any]:
    return await _change(
        server,
        params.pane,
        lambda reply: wm.SetApproval(params.pane, params.approval, reply),
        {"approval": params.approval},
    )


def _error(pane: str, message: str) -> errors.ProtocolError:
    if message == wm.STOPPING:
        return errors.AgentStopped()
    if "stopped" in message:
        return errors.PaneUnavailable(pane)
    return errors.InvalidParams(message)


async def apply_configuration(server: AgentServer, settings: Any) -> None:
    """``workspace/didChangeConfiguration``: settings edited in the editor apply
    without a restart. Effort and fast mode go to every open pane; model and
    base URL to every model request from now on."""
    session = await server.session()
    if not isinstance(settings, dict):
        return
    section = settings.get("agentls", settings)
    if not isinstance(section, dict):
        return
    worker = session.check_ready()
    panes = [pane for pane in (wm.MAIN, worker.fork_pane) if pane is not None]
    try:
        if isinstance(section.get("effort"), str):
            effort = parse_effort(section["effort"])
            for pane in panes:
                session.send(wm.SetEffort(pane, effort))
        if isinstance(section.get("fastMode"), bool):
            for pane in panes:
                session.send(wm.SetFastMode(pane, section["fastMode"]))
    except ConfigError as exc:
        log.warning("ignoring a setting: %s", exc)
    model = section.get("model") if isinstance(section.get("model"), str) else None
    base_url = section.get("baseUrl") if isinstance(section.get("baseUrl"), str) else None
    if (model or base_url) and session.client is not None:
        await session.client.reconfigure(model=model or None, base_url=base_url or None)


HANDLERS: dict[str, tuple[type, Any]] = {
    methods.SET_EFFORT: (SetEffortParams, set_effort),
    methods.SET_FAST_MODE: (SetFastModeParams, set_fast_mode),
    methods.SET_APPROVAL: (SetApprovalParams, set_approval),
}
