"""The file layer: where tools read text and where patches go.

Tools never write behind the editor's back. They see the files through a
``Files`` object: ``documents`` gives the text the editor has for the files it
has open (unsaved changes included), and ``apply`` carries out a whole patch
as one edit. The language server implements it with the documents the editor
syncs and ``workspace/applyEdit``; ``DiskFiles`` (tools used on their own, the
command line, editors that cannot take edits) writes the disk, atomically.

Nothing here imports the server: the interface is plain data.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

import anyio

from agentls.text import text_lines
from agentls.tools.line_diff import LineChange, changed_runs

__all__ = ["LineChange", "text_lines"]

OpKind = Literal["create", "delete", "rename", "change"]


@dataclass(frozen=True, slots=True)
class OpenText:
    """A document the editor has open: its text now, and its version."""

    text: str
    version: int | None


@dataclass(frozen=True, slots=True)
class FileOp:
    """One step of an edit. Paths are real (resolved) and inside the workspace."""

    kind: OpKind
    path: Path
    # rename: the new path.
    new_path: Path | None = None
    # change: the text the change applies to, and the text it leaves.
    # create: ``after`` is the new file's text.
    before: str = ""
    after: str = ""
    # change of a document open in the editor: the version it was read at.
    version: int | None = None
    # create or rename onto a file that exists.
    overwrite: bool = False

    def line_changes(self) -> list[LineChange]:
        """The smallest runs of whole lines that turn ``before`` into ``after``."""
        return line_changes(self.before, self.after)


def line_changes(before: str, after: str) -> list[LineChange]:
    return changed_runs(text_lines(before), text_lines(after))


@dataclass(frozen=True, slots=True)
class FileEdit:
    """A whole patch, planned: the steps for an editor, and the same change
    as an atomic write of the disk (for where no editor takes edits)."""

    ops: tuple[FileOp, ...]
    write_disk: Callable[[], None]
    # Files whose editor text differs from the disk (unsaved changes): the
    # disk path must not apply a patch computed from them.
    unsaved: tuple[str, ...] = ()
    # Workspace-relative names, for messages.
    names: dict[Path, str] = field(default_factory=dict)

    def name(self, path: Path) -> str:
        return self.names.get(path, str(path))


class EditRefused(Exception):
    """The edit was not applied (the editor refused it, or it could not be
    made); nothing changed. The message is for the model."""


class Files(Protocol):
    def documents(self, paths: Iterable[Path]) -> dict[Path, OpenText]:
        """The open documents among ``paths`` (real paths), with the editor's text."""
        ...

    async def apply(self, edit: FileEdit) -> str | None:
        """Carry out the whole edit or nothing; raises EditRefused. Returns a
        note for the model about where it went (None: nothing to say)."""
        ...


class DiskFiles:
    """No editor: files are what is on disk, and patches are written there."""

    def documents(self, paths: Iterable[Path]) -> dict[Path, OpenText]:
        return {}

    async def apply(self, edit: FileEdit) -> str | None:
        await anyio.to_thread.run_sync(edit.write_disk)
        return None
