"""Patches as ``workspace/applyEdit``: the editor makes the change, in its
buffers, where undo undoes it.

A client that advertises ``workspace.applyEdit`` and
``workspace.workspaceEdit.documentChanges`` gets every patch as ONE
``workspace/applyEdit``: a ``TextDocumentEdit`` with the version the server
last heard for each open document, plain ones (version null) for files that
are not open, and create/rename/delete operations. If the patch needs an
operation the client does not list in ``resourceOperations``, or the client
cannot take edits at all, the patch is written on disk instead — but never
over a document with unsaved changes (their text is what the patch was made
from, and writing it would save them behind the user's back).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from pathlib import Path

import anyio
from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer

from agentls.lsp.approval import ask_editor
from agentls.lsp.documents import OpenDocuments
from agentls.tools.files import EditRefused, FileEdit, OpenText, line_changes, text_lines

log = logging.getLogger(__name__)

# How long the editor may take to apply an edit (it may ask the user: VS Code
# does for a file it cannot save, Neovim for a swap file).
APPLY_TIMEOUT = 60.0
RESOURCE_OPS = frozenset({"create", "rename", "delete"})
_BOM = "\ufeff"


def code_units(text: str, encoding: lsp.PositionEncodingKind | str) -> int:
    """Length of ``text`` in the position encoding the client and server agreed on."""
    if encoding == lsp.PositionEncodingKind.Utf8:
        return len(text.encode("utf-8"))
    if encoding == lsp.PositionEncodingKind.Utf32:
        return len(text)
    return len(text.encode("utf-16-le")) // 2


def text_edits(
    before: str, after: str, encoding: lsp.PositionEncodingKind | str
) -> list[lsp.TextEdit]:
    """The ``TextEdit``s that turn ``before`` into ``after``: whole lines, so
    that only where the document ends does a character position matter."""
    lines = text_lines(before)
    if not lines:
        end_of_text = lsp.Position(line=0, character=0)
    elif lines[-1].endswith(("\n", "\r")):
        end_of_text = lsp.Position(line=len(lines), character=0)
    else:
        last = lines[-1]
        end_of_text = lsp.Position(line=len(lines) - 1, character=code_units(last, encoding))
    edits: list[lsp.TextEdit] = []
    for change in line_changes(before, after):
        start = lsp.Position(line=change.start, character=0)
        end = lsp.Position(line=change.end, character=0)
        edits.append(
            lsp.TextEdit(
                range=lsp.Range(
                    start=start if change.start < len(lines) else end_of_text,
                    end=end if change.end < len(lines) else end_of_text,
                ),
                new_text=change.text,
            )
        )
    return edits


class EditorFiles:
    """The ``Files`` of the tools, served by the editor this server talks to."""

    def __init__(self, server: LanguageServer, client_ready: Callable[[], bool]) -> None:
        self._server = server
        # The current editor has sent initialize (before that, nothing is open).
        self._client_ready = client_ready
        self.open = OpenDocuments(lambda: server.workspace)

    # --- reading -----------------------------------------------------------------------

    def documents(self, paths: Iterable[Path]) -> dict[Path, OpenText]:
        if not self._client_ready():
            return {}
        return self.open.texts(paths)

    # --- what the client can take ------------------------------------------------------

    def _workspace_capabilities(self) -> tuple[bool, frozenset[str]]:
        """Whether the client takes workspace edits with documentChanges, and
        which resource operations it performs."""
        try:
            workspace = self._server.client_capabilities.workspace
        except Exception:
            return False, frozenset()
        if workspace is None or not workspace.apply_edit:
            return False, frozenset()
        edit = workspace.workspace_edit
        if edit is None or not edit.document_changes:
            return False, frozenset()
        return True, frozenset(
            str(getattr(op, "value", op)) for op in edit.resource_operations or ()
        )

    # --- applying ------------------------------------------------------------------------

    async def apply(self, edit: FileEdit) -> str | None:
        if not edit.ops:
            return None
        takes_edits, operations = self._workspace_capabilities()
        needed = {op.kind for op in edit.ops} & RESOURCE_OPS
        if not takes_edits or not needed <= operations:
            return await self._on_disk(edit, takes_edits)
        params = lsp.ApplyWorkspaceEditParams(
            edit=lsp.WorkspaceEdit(document_changes=self._document_changes(edit)),
            label="agentls: apply_patch",
        )
        try:
            with anyio.fail_after(APPLY_TIMEOUT):
                result = await ask_editor(self._server, lsp.WORKSPACE_APPLY_EDIT, params, "edit")
        except TimeoutError:
            raise EditRefused(
                f"the editor did not answer workspace/applyEdit within {APPLY_TIMEOUT:.0f} s; "
                "read the files before you retry: the patch may have been applied since"
            ) from None
        except Exception as exc:
            raise EditRefused(f"the editor could not be asked to apply the patch ({exc})") from None
        applied = getattr(result, "applied", None)
        if applied is None and isinstance(result, dict):
            applied = result.get("applied")
        if applied is not True:
            reason = getattr(result, "failure_reason", None) or (
                result.get("failureReason") if isinstance(result, dict) else None
            )
            because = f" ({reason})" if reason else ""
            raise EditRefused(
                f"the editor did not apply the patch{because}: a file changed in the editor "
                "since you read it, or the editor refused the edit. Read the files again and "
                "retry."
            )
        return None

    async def _on_disk(self, edit: FileEdit, takes_edits: bool) -> str | None:
        if edit.unsaved:
            shown = ", ".join(edit.unsaved)
            why = (
                "this editor cannot create, rename or delete files through the language server"
                if takes_edits
                else "this editor cannot take edits from the language server"
            )
            raise EditRefused(
                f"{shown} has unsaved changes in the editor, and {why}: writing the file "
                "would overwrite them. Ask the user to save it (or to undo those changes), "
                "then read it again and retry."
            )
        await anyio.to_thread.run_sync(edit.write_disk)
        return None

    def _document_changes(self, edit: FileEdit) -> list[DocumentChange]:
        encoding = self._server.workspace.position_encoding or lsp.PositionEncodingKind.Utf16
        open_now = self.open.by_path(op.path for op in edit.ops)
        changes: list[DocumentChange] = []
        for op in edit.ops:
            opened = open_now.get(op.path)
            uri = opened[0] if opened is not None else op.path.as_uri()
            if op.kind == "change":
                document = opened[1] if opened is not None else None
                stale = (
                    document.version != op.version or document.source != op.before
                    if document is not None
                    else op.version is not None
                )
                if stale:
                    raise EditRefused(
                        f"{edit.name(op.path)} changed in the editor while the patch was being "
                        "prepared; read it again and retry"
                    )
                before, after = op.before, op.after
                if document is None and before.startswith(_BOM) and after.startswith(_BOM):
                    # An editor keeps a file's byte order mark out of its text.
                    before, after = before[1:], after[1:]
                changes.append(
                    _text_edit(uri, document.version if document else None, before, after, encoding)
                )
            elif op.kind == "create":
                options = lsp.CreateFileOptions(overwrite=op.overwrite, ignore_if_exists=False)
                changes.append(lsp.CreateFile(uri=uri, options=options))
                if op.after:
                    changes.append(_text_edit(uri, None, "", op.after, encoding))
            elif op.kind == "delete":
                options_delete = lsp.DeleteFileOptions(ignore_if_not_exists=True)
                changes.append(lsp.DeleteFile(uri=uri, options=options_delete))
            else:
                assert op.new_path is not None
                changes.append(
                    lsp.RenameFile(
                        old_uri=uri,
                        new_uri=op.new_path.as_uri(),
                        options=lsp.RenameFileOptions(overwrite=op.overwrite),
                    )
                )
        return changes


DocumentChange = lsp.TextDocumentEdit | lsp.CreateFile | lsp.RenameFile | lsp.DeleteFile


def _text_edit(
    uri: str, version: int | None, before: str, after: str, encoding: lsp.PositionEncodingKind | str
) -> lsp.TextDocumentEdit:
    return lsp.TextDocumentEdit(
        text_document=lsp.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version),
        edits=list(text_edits(before, after, encoding)),
    )
