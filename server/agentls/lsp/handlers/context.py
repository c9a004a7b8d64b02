"""``agent/compact`` and ``agent/instructions``: the context window and what
the model is told."""

from __future__ import annotations

from agentls.lsp.face import LspFace
from agentls.lsp.handlers.registry import handles
from agentls.protocol import methods
from agentls.schema.wire import CompactParams, CompactResult, InstructionsParams, InstructionsResult


@handles(methods.COMPACT)
async def compact(face: LspFace, params: CompactParams) -> CompactResult:
    result = await (await face.service()).compact(params.pane, params.focus)
    return {
        "beforeTokens": result.before_tokens,
        "afterTokens": result.after_tokens,
        "mode": result.mode,
    }


@handles(methods.INSTRUCTIONS)
async def instructions(face: LspFace, params: InstructionsParams) -> InstructionsResult:
    """The project instructions (AGENTS.md files) the pane's session follows."""
    docs = (await face.service()).pane(params.pane).project
    return {
        "files": [{"path": f.path, "bytes": f.bytes} for f in docs.files],
        "bytes": docs.total_bytes,
        "cutBytes": docs.cut,
    }
