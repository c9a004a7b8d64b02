"""The documents the editor has open, as it has them (``textDocument/didOpen``,
``didChange``, ``didClose``: pygls keeps them).

Three things are ours: pygls splits a document into lines with
``str.splitlines``, which also breaks at form feeds, U+2028 and a few more
characters that are no line break to an editor — one of them in a document
would put every later incremental change in the wrong place, so documents
here split where LSP does. And tools look documents up by real path, not by
URI (an editor may spell a URI its own way, or open a file through a link).
And an incremental change is applied by slicing the text once, not by
rewriting it line by line in Python: an applyEdit of ten hunks comes back as
ten changes, on files of thousands of lines.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.workspace import TextDocument, Workspace

from agentls.lsp.paths import uri_to_path
from agentls.text import text_lines

if TYPE_CHECKING:
    from agentls.tools.files import OpenText


class LspTextDocument(TextDocument):
    @property
    def lines(self) -> Sequence[str]:
        return tuple(text_lines(self.source))

    def _apply_incremental_change(self, change: types.TextDocumentContentChangePartial) -> None:
        # The same result as pygls's own (columns past a line's end are cut to it).
        source = self.source
        lines = self.lines
        where = self._position_codec.range_from_client_units(lines, change.range)
        start_line, end_line = where.start.line, where.end.line
        if start_line >= len(lines):
            self._source = source + change.text
            return
        start = sum(map(len, lines[:start_line]))
        start_offset = start + min(where.start.character, len(lines[start_line]))
        if end_line >= len(lines):
            end_offset = len(source)
        else:
            end = start + sum(map(len, lines[start_line:end_line]))
            end_offset = max(start_offset, end + min(where.end.character, len(lines[end_line])))
        self._source = source[:start_offset] + change.text + source[end_offset:]


class DocumentWorkspace(Workspace):
    """pygls's workspace with documents that split lines as LSP does."""

    def _create_text_document(
        self,
        doc_uri: str,
        source: str | None = None,
        version: int | None = None,
        language_id: str | None = None,
    ) -> TextDocument:
        return LspTextDocument(
            doc_uri,
            source=source,
            version=version,
            language_id=language_id,
            sync_kind=self._sync_kind,
            position_codec=self._position_codec,
        )


def replacing(workspace: Workspace) -> DocumentWorkspace:
    """A ``DocumentWorkspace`` in place of the one pygls made at initialize
    (it holds no documents yet)."""
    folders = list(workspace.folders.values())
    return DocumentWorkspace(
        workspace.root_uri,
        workspace._sync_kind,
        folders,
        workspace.position_encoding,
    )


class OpenDocuments:
    """Open documents by real path."""

    def __init__(self, workspace: Any) -> None:
        # A callable: the workspace is replaced at every initialize (a window
        # that reattaches opens its documents again).
        self._workspace = workspace
        self._real: dict[str, Path | None] = {}

    def _real_path(self, uri: str) -> Path | None:
        if uri not in self._real:
            if len(self._real) > 4096:
                self._real.clear()
            try:
                path = uri_to_path(uri)
            except ValueError:
                path = None
            self._real[uri] = Path(os.path.realpath(path)) if path is not None else None
        return self._real[uri]

    def by_path(self, paths: Iterable[Path]) -> dict[Path, tuple[str, TextDocument]]:
        """The open documents among ``paths``: (URI as the editor spells it, document)."""
        wanted = set(paths)
        found: dict[Path, tuple[str, TextDocument]] = {}
        if not wanted:
            return found
        documents: dict[str, TextDocument] = self._workspace().text_documents
        for document in documents.values():
            real = self._real_path(document.uri)
            if real is not None and real in wanted:
                found[real] = (document.uri, document)
        return found

    def texts(self, paths: Iterable[Path]) -> dict[Path, OpenText]:
        from agentls.tools.files import OpenText

        return {
            path: OpenText(document.source, document.version)
            for path, (_, document) in self.by_path(paths).items()
        }
