"""``agent/auxiliary``: a one-off prompt on an isolated copy of a pane's agent."""

from __future__ import annotations

from agentls.lsp.face import LspFace
from agentls.lsp.handlers.registry import handles
from agentls.lsp.handlers.turns import check_prompt
from agentls.protocol import errors, methods
from agentls.schema.wire import AuxiliaryParams, AuxiliaryResult


@handles(methods.AUXILIARY)
async def auxiliary(face: LspFace, params: AuxiliaryParams) -> AuxiliaryResult:
    service = await face.service()
    check_prompt(params.prompt)
    # $/cancelRequest cancels this job only; answered -32800 once it has stopped.
    result = await service.auxiliary(params.pane, params.prompt, params.context)
    if isinstance(result, str):
        return {"text": result}
    if result.stopping:
        raise errors.stopping("the auxiliary job was cancelled: the server is shutting down")
    raise errors.ProtocolError(
        "cancelled", "the auxiliary job was cancelled (agent/cancel or its pane closed)"
    )
