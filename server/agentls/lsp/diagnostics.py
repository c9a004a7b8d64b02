"""``agent/diagnostics``: the editor's problems, for the ``get_diagnostics``
tool — offered only to clients that advertise
``experimental.agentls.diagnostics: true``."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

import anyio
from pygls.lsp.server import LanguageServer

from agentls.lsp.approval import ask_editor
from agentls.lsp.documents import OpenDocuments
from agentls.lsp.paths import uri_to_path
from agentls.protocol import methods
from agentls.tools.diagnostics import SEVERITIES, Diagnostic

log = logging.getLogger(__name__)

ASK_TIMEOUT = 10.0


def client_answers_diagnostics(server: LanguageServer) -> bool:
    try:
        experimental = server.client_capabilities.experimental
    except Exception:
        return False
    agentls = experimental.get("agentls") if isinstance(experimental, dict) else None
    return isinstance(agentls, dict) and agentls.get("diagnostics") is True


class EditorDiagnostics:
    """Asks the editor what it shows (``DiagnosticsSource``)."""

    def __init__(self, server: LanguageServer, documents: OpenDocuments, workspace: Path) -> None:
        self._server = server
        self._documents = documents
        self._root = Path(os.path.realpath(workspace))

    async def diagnostics(self, path: Path | None) -> list[Diagnostic]:
        params: dict[str, Any] = {}
        if path is not None:
            params["uri"] = self._uri(path)
        with anyio.fail_after(ASK_TIMEOUT):
            result = await ask_editor(self._server, methods.DIAGNOSTICS, params, "diagnostics")
        listed = result.get("diagnostics") if isinstance(result, dict) else None
        if not isinstance(listed, list):
            raise ValueError(f"the editor answered agent/diagnostics with {result!r}")
        found = [d for item in listed if (d := self._parse(item)) is not None]
        if path is not None:
            found = [d for d in found if d.path == self._name(path)]
        return found

    def _uri(self, path: Path) -> str:
        # The URI of the open document, as the editor spells it, if it is open.
        opened = self._documents.by_path([path]).get(path)
        return str(opened[0]) if opened is not None else path.as_uri()

    def _name(self, path: Path) -> str:
        try:
            return path.relative_to(self._root).as_posix()
        except ValueError:
            return str(path)

    def _parse(self, item: Any) -> Diagnostic | None:
        if not isinstance(item, dict):
            return None
        uri, message = item.get("uri"), item.get("message")
        if not isinstance(uri, str) or not isinstance(message, str):
            return None
        try:
            file = uri_to_path(uri)
        except ValueError:
            file = None
        name = self._name(Path(os.path.realpath(file))) if file is not None else uri
        where = item.get("range")
        start = where.get("start") if isinstance(where, dict) else None
        if not isinstance(start, dict):
            start = {}
        line, character = start.get("line", 0), start.get("character", 0)
        severity = item.get("severity")
        source = item.get("source")
        return Diagnostic(
            path=name,
            line=int(line) + 1 if isinstance(line, int) else 1,
            column=int(character) + 1 if isinstance(character, int) else 1,
            severity=SEVERITIES.get(severity, "warning")
            if isinstance(severity, int)
            else "warning",
            message=message,
            source=source if isinstance(source, str) and source else None,
        )
