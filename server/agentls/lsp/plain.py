"""For any LSP client, with nothing of ours installed: the command
``agentls.ask`` (``workspace/executeCommand``) runs a turn in the main pane;
code actions offer "Ask agentls about this" for a selection and "Fix with
agentls" for a diagnostic. The answer comes as ``window/showMessage`` (and
``$/progress`` meanwhile); edits arrive as ``workspace/applyEdit``.

The command answers at once (``{pane, turnId}``): some clients wait for a
command's answer before they do anything else.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer

from agentls.lsp.paths import uri_to_path
from agentls.protocol import errors
from agentls.protocol.converter import parse
from agentls.protocol.methods import ASK_COMMAND as ASK
from agentls.schema.wire import AskArguments, Context, Range, Selection
from agentls.tools.base import shorten

if TYPE_CHECKING:
    from agentls.lsp.face import LspFace
    from agentls.service.service import AgentService, TurnTicket

log = logging.getLogger(__name__)

MAIN = "main"
ASK_TITLE = "Ask agentls about this"
FIX_TITLE = "Fix with agentls"
# The longest answer shown in window/showMessage (the rest is in the log).
SHOWN_CHARS = 4000


def _display(root: Path | None, uri: str) -> str:
    try:
        path = uri_to_path(uri)
    except ValueError:
        return uri
    if path is None:
        return uri
    try:
        return path.resolve().relative_to(root.resolve()).as_posix() if root else str(path)
    except ValueError:
        return str(path)


def _lsp_range(value: lsp.Range) -> dict[str, Any]:
    return {
        "start": {"line": value.start.line, "character": value.start.character},
        "end": {"line": value.end.line, "character": value.end.character},
    }


def actions_for(root: Path | None, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
    """The code actions for ``params`` (``root``: the workspace, to name files in it)."""
    uri = params.text_document.uri
    where = _display(root, uri)
    found: list[lsp.CodeAction] = []
    selection = params.range
    if selection.start != selection.end:
        first, last = selection.start.line + 1, selection.end.line + 1
        lines = f"line {first}" if first == last else f"lines {first}-{last}"
        prompt = f"Explain the selected code in {where} ({lines}) and point out any problems."
        argument = {"prompt": prompt, "uri": uri, "range": _lsp_range(selection), "kind": "ask"}
        found.append(
            lsp.CodeAction(
                title=ASK_TITLE,
                kind=lsp.CodeActionKind.Empty,
                command=lsp.Command(title=ASK_TITLE, command=ASK, arguments=[argument]),
            )
        )
    diagnostics = params.context.diagnostics
    for diagnostic in diagnostics:
        line = diagnostic.range.start.line + 1
        source = f" ({diagnostic.source})" if diagnostic.source else ""
        prompt = f"Fix this problem in {where} at line {line}{source}: {diagnostic.message}"
        title = (
            FIX_TITLE
            if len(diagnostics) == 1
            else f"{FIX_TITLE}: {shorten(diagnostic.message, 60)}"
        )
        argument = {
            "prompt": prompt,
            "uri": uri,
            "range": _lsp_range(diagnostic.range),
            "kind": "fix",
        }
        found.append(
            lsp.CodeAction(
                title=title,
                kind=lsp.CodeActionKind.QuickFix,
                diagnostics=[diagnostic],
                command=lsp.Command(title=title, command=ASK, arguments=[argument]),
            )
        )
    return found


def _selected_text(server: LanguageServer, uri: str, where: Range) -> str:
    """The text of ``where`` in the document (as the editor has it, if open)."""
    document = server.workspace.text_documents.get(uri) or server.workspace.get_text_document(uri)
    try:
        lines = document.lines
    except OSError:
        return ""
    start, end = where.start, where.end
    if start.line >= len(lines):
        return ""
    chosen = list(lines[start.line : end.line + 1])
    # Whole lines: a selection is a region of code, and its lines read best whole.
    return "".join(chosen).rstrip("\r\n")


async def run_ask(face: LspFace, arguments: list[Any]) -> dict[str, Any]:
    if len(arguments) != 1:
        raise errors.invalid_params(f"{ASK} takes one argument, {{prompt, uri?, range?}}")
    ask = parse(arguments[0], AskArguments, what=f"{ASK} argument")
    if not ask.prompt.strip():
        raise errors.invalid_params("prompt: must not be empty")
    context: Context | None = None
    if ask.uri is not None:
        if ask.range is not None:
            text = _selected_text(face.server, ask.uri, ask.range)
            context = Context(selection=Selection(ask.uri, ask.range, text))
        else:
            context = Context(documents=[ask.uri])
    from agentls.lsp.context import compose_prompt
    from agentls.service.errors import ServiceError

    try:
        service = await face.service()
        ticket = service.new_turn(MAIN)
    except ServiceError as exc:
        raise errors.ProtocolError(exc.kind, exc.message, exc.data) from None
    assert service.config is not None
    ticket.submit(compose_prompt(ask.prompt, context, service.config.workspace))
    service.spawn(_report, face, service, ticket, ask.prompt)
    return {"pane": MAIN, "turnId": ticket.id}


async def _report(face: LspFace, service: AgentService, ticket: TurnTicket, prompt: str) -> None:
    """Progress while the turn runs; its answer in a message when it ends."""
    from agentls.lsp.progress import THINKING

    server = face.server
    try:
        progress = await face.open_progress(None)
        if progress is not None:
            progress.begin(f"agentls: {shorten(prompt, 50)}", THINKING, ticket.cancel)
            if not face.track_progress(ticket.id, progress):
                progress.end("Done")
        finished = await ticket.result()
        face.end_turn(finished)
    except Exception:
        log.exception("agentls.ask: the turn could not be followed")
        return
    if finished.rejected is not None:
        kind, message = lsp.MessageType.Error, f"agentls: {finished.rejected.message}"
    elif finished.status == "completed":
        answer = finished.final_message.strip() or "(done, no answer text)"
        if len(answer) > SHOWN_CHARS:
            answer = answer[:SHOWN_CHARS] + "… (the rest is in the log)"
            server.window_log_message(
                lsp.LogMessageParams(type=lsp.MessageType.Info, message=finished.final_message)
            )
        kind, message = lsp.MessageType.Info, f"agentls: {answer}"
    elif finished.status == "cancelled":
        kind, message = lsp.MessageType.Warning, "agentls: the turn was cancelled"
    else:
        kind = lsp.MessageType.Error
        message = f"agentls: the turn failed: {finished.error or 'unknown error'}"
    server.window_show_message(lsp.ShowMessageParams(type=kind, message=message))
