"""What a pytest-lsp client needs to be an editor that takes edits: open
documents it keeps in step with the server (didOpen, incremental didChange,
didClose) and a ``workspace/applyEdit`` handler that does what an editor does
with one — checks versions, applies text edits to its open documents (and
tells the server, as an editor does), writes files it has not open, performs
create/rename/delete on disk. It never saves an open document: what the
server changed there stays in the buffer.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from lsprotocol import types as lsp
from lsprotocol.converters import get_converter

from agentls.testing.text_edits import apply_text_edits

_CONVERTER = get_converter()


def path_of(uri: str) -> Path:
    return Path(unquote(urlparse(uri).path))


class Editor:
    """The documents a test client has open, and what it does with edits."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.documents: dict[str, tuple[str, int]] = {}  # uri -> (text, version)
        self.edits: list[dict[str, Any]] = []  # every workspace/applyEdit received
        # When set, the next applyEdit is answered with this (and not applied).
        self.refuse: dict[str, Any] | None = None

    # --- documents -------------------------------------------------------------------

    def open(self, path: Path, text: str | None = None, language: str = "python") -> str:
        uri = path.as_uri()
        text = path.read_text() if text is None else text
        self.documents[uri] = (text, 1)
        self.client.text_document_did_open(
            lsp.DidOpenTextDocumentParams(
                text_document=lsp.TextDocumentItem(
                    uri=uri, language_id=language, version=1, text=text
                )
            )
        )
        return uri

    def text(self, path: Path) -> str:
        return self.documents[path.as_uri()][0]

    def version(self, path: Path) -> int:
        return self.documents[path.as_uri()][1]

    def insert(self, path: Path, line: int, new: str) -> None:
        """Type ``new`` at the start of ``line`` (an incremental change)."""
        uri = path.as_uri()
        text, version = self.documents[uri]
        at = {"line": line, "character": 0}
        edit = {"range": {"start": at, "end": at}, "newText": new}
        self.documents[uri] = (apply_text_edits(text, [edit]), version + 1)
        where = lsp.Position(line=line, character=0)
        self.client.text_document_did_change(
            lsp.DidChangeTextDocumentParams(
                text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=version + 1),
                content_changes=[
                    lsp.TextDocumentContentChangePartial(
                        range=lsp.Range(start=where, end=where), text=new
                    )
                ],
            )
        )

    def close(self, path: Path) -> None:
        uri = path.as_uri()
        del self.documents[uri]
        self.client.text_document_did_close(
            lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=uri))
        )

    def _changed(self, uri: str, text: str) -> None:
        _, version = self.documents[uri]
        self.documents[uri] = (text, version + 1)
        self.client.text_document_did_change(
            lsp.DidChangeTextDocumentParams(
                text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=version + 1),
                content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )

    # --- workspace/applyEdit -------------------------------------------------------------

    def apply_edit(self, params: Any) -> dict[str, Any]:
        edit = _plain(params)
        self.edits.append(edit)
        self.client.poke()
        if self.refuse is not None:
            answer, self.refuse = self.refuse, None
            return answer
        changes = edit["edit"].get("documentChanges") or []
        for change in changes:  # as VS Code does: refuse the whole edit on a stale version
            if "kind" in change:
                continue
            document = change["textDocument"]
            open_now = self.documents.get(document["uri"])
            if document.get("version") is not None and (
                open_now is None or open_now[1] != document["version"]
            ):
                return {"applied": False, "failureReason": "stale version"}
        for change in changes:
            kind = change.get("kind")
            if kind == "create":
                path = path_of(change["uri"])
                path.parent.mkdir(parents=True, exist_ok=True)
                if change.get("options", {}).get("overwrite") or not path.exists():
                    path.write_text("")
            elif kind == "delete":
                path_of(change["uri"]).unlink(missing_ok=True)
                self.documents.pop(change["uri"], None)
            elif kind == "rename":
                old, new = path_of(change["oldUri"]), path_of(change["newUri"])
                new.parent.mkdir(parents=True, exist_ok=True)
                shutil.move(old, new)
                if change["oldUri"] in self.documents:
                    self.documents[change["newUri"]] = self.documents.pop(change["oldUri"])
            else:
                uri = change["textDocument"]["uri"]
                if uri in self.documents:
                    self._changed(uri, apply_text_edits(self.documents[uri][0], change["edits"]))
                else:  # not open: as an editor that saves what the agent changed
                    path = path_of(uri)
                    text = path.read_text() if path.exists() else ""
                    with open(path, "w", newline="") as f:
                        f.write(apply_text_edits(text, change["edits"]))
        return {"applied": True}


def _plain(value: Any) -> Any:
    """pygls's namedtuples (``Object``) as plain JSON."""
    if isinstance(value, tuple) and hasattr(value, "_asdict"):
        return {key: _plain(item) for key, item in value._asdict().items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    if hasattr(value, "__attrs_attrs__"):
        return _CONVERTER.unstructure(value)
    return value


def file_text(path: Path) -> str:
    with open(path, newline="") as f:
        return f.read()


__all__ = ["Editor", "apply_text_edits", "file_text"]
